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
	target, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening the network namespace %q: %w", path, err)
	}
	defer unix.Close(target)
	runtime.LockOSThread()
	leave, err := joinNetNS(target)
	if err != nil {
		if leave() {
			runtime.UnlockOSThread()
		}
		return fmt.Errorf("joining the network namespace %q: %w", path, err)
	}
	startErr := start()
	if !leave() {
		// The thread stays locked, and so ends with this goroutine:
		// no other goroutine runs in the wrong namespace.
		return fmt.Errorf("returning to runsc's network namespace failed")
	}
	runtime.UnlockOSThread()
	return startErr
}

// makeNetNS makes a new network namespace and returns a descriptor of it
// (close-on-exec). The calling thread makes it and returns to its own
// namespace; should it fail to, it stays locked to the calling goroutine
// (runtime.LockOSThread), so that no other goroutine runs in the new
// namespace.
func makeNetNS() (fd int, err error) {
	runtime.LockOSThread()
	leave, err := enterNetNS(func() error { return unix.Unshare(unix.CLONE_NEWNET) })
	fd = -1
	if err == nil {
		fd, err = unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			err = fmt.Errorf("opening the new network namespace: %w", err)
		}
	} else {
		err = fmt.Errorf("unshare(CLONE_NEWNET): %w", err)
	}
	if !leave() {
		if fd >= 0 {
			unix.Close(fd)
		}
		return -1, fmt.Errorf("returning to runsc's network namespace failed")
	}
	runtime.UnlockOSThread()
	return fd, err
}

// joinNetNS moves the calling thread, which must be locked
// (runtime.LockOSThread), into the network namespace fd, in which the
// processes it starts are born; see enterNetNS for leave.
func joinNetNS(fd int) (leave func() bool, err error) {
	return enterNetNS(func() error { return unix.Setns(fd, unix.CLONE_NEWNET) })
}

// enterNetNS moves the calling thread, which must be locked
// (runtime.LockOSThread), into another network namespace with enter.
// leave moves the thread back to its old namespace and reports whether it
// did: only then may the thread be unlocked. On error leave is still to
// be called (enter may have moved the thread before it failed).
func enterNetNS(enter func() error) (leave func() bool, err error) {
	orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return func() bool { return true }, fmt.Errorf("opening the thread's network namespace: %w", err)
	}
	leave = func() bool {
		err := unix.Setns(orig, unix.CLONE_NEWNET)
		unix.Close(orig)
		return err == nil
	}
	return leave, enter()
}
