package linux

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/kernel"
)

// Membarrier implements membarrier(2).
func Membarrier(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	cmd, flags := a[0].Int(), a[1].Uint()
	if cmd < 0 {
		return 0, unix.EINVAL
	}
	// Only the RSEQ command takes a flag (MEMBARRIER_CMD_FLAG_CPU).
	if flags != 0 && (cmd != kernel.MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ || flags != kernel.MEMBARRIER_CMD_FLAG_CPU) {
		return 0, unix.EINVAL
	}
	r, err := t.Membarrier(uint32(cmd))
	return uintptr(r), err
}
