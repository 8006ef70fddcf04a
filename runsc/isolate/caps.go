package isolate

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// DropCapabilities leaves every thread of the process with only the
// capabilities in keep: it clears the ambient set, drops everything else
// from the bounding set (so no execve can bring it back) and sets the
// effective and permitted sets to keep and the inheritable set to nothing.
// It needs CAP_SETPCAP for the bounding set.
func DropCapabilities(keep ...uintptr) error {
	var keepMask uint64
	for _, c := range keep {
		if c > 63 {
			return fmt.Errorf("capability %d out of range", c)
		}
		keepMask |= 1 << c
	}
	if err := allThreads(unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("clearing ambient capabilities: %w", err)
	}
	for c := uintptr(0); c <= 63; c++ {
		if keepMask&(1<<c) != 0 {
			continue
		}
		// Each all-threads call stops the world (about 0.2 ms): skip the
		// capabilities the bounding set already lacks. The set is read
		// on this thread; every thread's set is the same, as this package
		// only changes it on all threads at once.
		in, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, c, 0, 0, 0)
		if errors.Is(err, unix.EINVAL) {
			break // past the kernel's last capability
		}
		if err == nil && in == 0 {
			continue
		}
		err = allThreads(unix.SYS_PRCTL, unix.PR_CAPBSET_DROP, c, 0, 0, 0, 0)
		if errors.Is(err, unix.EINVAL) {
			break // past the kernel's last capability
		}
		if err != nil {
			return fmt.Errorf("dropping capability %d from the bounding set: %w", c, err)
		}
	}
	if err := capsetAllThreads(keepMask, keepMask, 0); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}
