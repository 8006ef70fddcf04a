package fs

import (
	"time"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// Context is what the VFS needs from the task making a syscall. The
// kernel's *kernel.Task implements it.
type Context interface {
	// Credentials returns the task's credentials.
	Credentials() *auth.Credentials
	// CopyInBytes copies len(dst) bytes from application address addr.
	// A partial copy returns the count copied and EFAULT.
	CopyInBytes(addr uintptr, dst []byte) (int, error)
	// CopyOutBytes copies src to application address addr. A partial copy
	// returns the count copied and EFAULT.
	CopyOutBytes(addr uintptr, src []byte) (int, error)
	// BlockOn waits until ch is readable, the deadline passes (if
	// hasDeadline) or the task is interrupted. It returns nil,
	// unix.ETIMEDOUT or syserror.ErrInterrupted.
	BlockOn(ch <-chan struct{}, deadline time.Time, hasDeadline bool) error
}
