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

// makeNetNS makes a new network namespace and returns a descriptor of it
// (close-on-exec). The calling thread makes it and returns to its own
// namespace; should it fail to, it stays locked to the calling goroutine
// (runtime.LockOSThread), so that no other goroutine runs in the new
// namespace.
func makeNetNS() (fd int, err error) {
	runtime.LockOSThread()
	orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		runtime.UnlockOSThread()
		return -1, fmt.Errorf("opening the thread's network namespace: %w", err)
	}
	defer unix.Close(orig)
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return -1, fmt.Errorf("unshare(CLONE_NEWNET): %w", err)
	}
	fd, err = unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if back := unix.Setns(orig, unix.CLONE_NEWNET); back != nil {
		if err == nil {
			unix.Close(fd)
		}
		return -1, fmt.Errorf("returning to runsc's network namespace: %w", back)
	}
	runtime.UnlockOSThread()
	if err != nil {
		return -1, fmt.Errorf("opening the new network namespace: %w", err)
	}
	return fd, nil
}

// joinNetNS moves the calling thread, which must be locked
// (runtime.LockOSThread), into the network namespace fd, in which the
// processes it starts are born. leave moves the thread back to its old
// namespace and reports whether it did: only then may the thread be
// unlocked. On error the thread has not moved, and leave is still to be
// called.
func joinNetNS(fd int) (leave func() bool, err error) {
	orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return func() bool { return true }, fmt.Errorf("opening the thread's network namespace: %w", err)
	}
	leave = func() bool {
		err := unix.Setns(orig, unix.CLONE_NEWNET)
		unix.Close(orig)
		return err == nil
	}
	if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
		return leave, err
	}
	return leave, nil
}
