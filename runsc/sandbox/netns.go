package sandbox

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// startInNetNS calls start (an exec.Cmd's Start) on a thread that has
// joined the network namespace at path, so that the process it clones is
// born in it (the spec's network namespace path, which the sandbox
// process joins as runc's container process does). The thread then
// returns to its own network namespace. An empty path just calls start.
func startInNetNS(path string, start func() error) error {
	if path == "" {
		return start()
	}
	runtime.LockOSThread()
	orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("opening runsc's own network namespace: %w", err)
	}
	defer unix.Close(orig)
	target, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("opening the network namespace %q: %w", path, err)
	}
	err = unix.Setns(target, unix.CLONE_NEWNET)
	unix.Close(target)
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("joining the network namespace %q: %w", path, err)
	}
	startErr := start()
	if err := unix.Setns(orig, unix.CLONE_NEWNET); err != nil {
		// The thread stays locked, and so ends with this goroutine:
		// no other goroutine runs in the wrong namespace.
		return fmt.Errorf("returning to runsc's network namespace: %w", err)
	}
	runtime.UnlockOSThread()
	return startErr
}

// enterNewNetNS moves the calling thread into a new network namespace and
// returns a descriptor of it (close-on-exec), or -1 and an error. The
// thread must be locked (runtime.LockOSThread) and never unlocked, as it
// no longer shares the process's namespace; processes it starts are born
// in the new one. It needs CAP_SYS_ADMIN.
func enterNewNetNS() (int, error) {
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		return -1, fmt.Errorf("unshare(CLONE_NEWNET): %w", err)
	}
	fd, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("opening the new network namespace: %w", err)
	}
	return fd, nil
}
