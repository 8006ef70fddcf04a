package kernel

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// backgroundContext is the fs.Context of the Sentry's own work that no task
// does (reading executable pages on a fault from any thread of a process):
// root credentials, no application memory, uninterruptible.
type backgroundContext struct{}

var background backgroundContext

// Background returns the context of work the Sentry does on its own
// behalf, such as boot-time path lookups: root credentials, no application
// memory.
func Background() fs.Context { return background }

var rootCreds = auth.NewRootCredentials()

func (backgroundContext) Credentials() *auth.Credentials { return rootCreds }

func (backgroundContext) CopyInBytes(uintptr, []byte) (int, error)  { return 0, unix.EFAULT }
func (backgroundContext) CopyOutBytes(uintptr, []byte) (int, error) { return 0, unix.EFAULT }

func (backgroundContext) BlockOn(ch <-chan struct{}, deadline time.Time, hasDeadline bool) error {
	if !hasDeadline {
		<-ch
		return nil
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-ch:
		return nil
	case <-t.C:
		return unix.ETIMEDOUT
	}
}
