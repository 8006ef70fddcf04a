package linux

import (
	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/kernel"
)

// Unshare implements unshare(2).
func Unshare(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return 0, t.Unshare(a[0].Uint64())
}
