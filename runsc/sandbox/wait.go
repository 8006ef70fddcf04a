package sandbox

import (
	"os"
	"os/exec"

	"golang.org/x/sys/unix"
)

// waitCmd is cmd.Wait for a started child that may run for long: it
// first parks until the child has exited, on a pidfd in the Go runtime's
// poller, and only then reaps it. cmd.Wait alone blocks a thread in
// waitid for the child's whole life, holding a P in a system call, which
// the runtime's sysmon keeps polling for (every 20 to 100 us while any P
// is in one) and retakes: on these machines runsc do's sysmon woke some
// hundred times during a sandbox's start, each time taking a CPU from the
// sandbox and the gofer. Without pidfds it is cmd.Wait.
func waitCmd(cmd *exec.Cmd) error {
	if fd, err := unix.PidfdOpen(cmd.Process.Pid, unix.PIDFD_NONBLOCK); err == nil {
		f := os.NewFile(uintptr(fd), "pidfd")
		if rc, err := f.SyscallConn(); err == nil {
			// A pidfd is readable once its process has exited: the
			// first call asks to wait for that, the second ends.
			waited := false
			rc.Read(func(uintptr) bool {
				done := waited
				waited = true
				return done
			})
		}
		f.Close()
	}
	return cmd.Wait()
}
