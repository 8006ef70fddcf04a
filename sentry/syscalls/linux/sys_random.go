package linux

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/hostrand"
	"github.com/moat-sandbox/moat/sentry/kernel"
)

// getrandomChunk is how many bytes getrandom copies between checks for a
// pending signal (a page, as Linux): an interrupted call returns what it
// copied so far.
const getrandomChunk = 4096

// getrandomMax is the most one call returns (INT_MAX, as Linux caps it).
const getrandomMax = 1<<31 - 1

// Getrandom implements getrandom(2). The pool is the host's (hostrand),
// which is initialised long before a sandbox starts, so no flag ever
// blocks and GRND_RANDOM draws from the same source as Linux 5.6+ does.
func Getrandom(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	addr, count, flags := a[0].Pointer(), a[1].Uint64(), a[2].Uint()
	if flags&^(unix.GRND_NONBLOCK|unix.GRND_RANDOM|unix.GRND_INSECURE) != 0 {
		return 0, unix.EINVAL
	}
	if flags&(unix.GRND_INSECURE|unix.GRND_RANDOM) == unix.GRND_INSECURE|unix.GRND_RANDOM {
		return 0, unix.EINVAL
	}
	count = min(count, getrandomMax)
	var buf [getrandomChunk]byte
	var done uint64
	for done < count {
		if done > 0 && t.Interrupted() {
			break
		}
		chunk := buf[:min(count-done, getrandomChunk)]
		hostrand.Read(chunk)
		n, err := t.CopyOutBytes(addr+uintptr(done), chunk)
		done += uint64(n)
		if err != nil {
			if done > 0 {
				break
			}
			return 0, unix.EFAULT
		}
	}
	return uintptr(done), nil
}
