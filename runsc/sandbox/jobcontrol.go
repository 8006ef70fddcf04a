package sandbox

import (
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// setJobControl decides the sandbox process's process group.
//
// When stdin is the controlling terminal and runsc is in its foreground
// process group, the sandbox gets a process group of its own made the
// terminal's foreground group, as a shell does for a job: keystrokes such
// as ^C then signal the sandbox (not runsc and the gofer), and the Sentry
// may read the terminal and change its settings. The returned func gives
// the terminal back to runsc's group afterwards.
//
// Otherwise the sandbox gets a background process group of its own, so
// that a terminal's ^C reaches only runsc, which forwards it once.
func setJobControl(attr *syscall.SysProcAttr, stdin *os.File, log *slog.Logger) (restore func()) {
	fd := int(stdin.Fd())
	fg, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	if err != nil || fg != unix.Getpgrp() {
		attr.Setpgid = true
		return nil
	}
	attr.Foreground = true // implies Setpgid
	attr.Ctty = fd         // for Foreground, a descriptor of the parent
	own := unix.Getpgrp()
	// A sandbox whose init has a terminal puts this one in raw mode
	// (runsc/boot's console) and restores it when init exits; should
	// it die first, its modes come back here.
	saved, _ := unix.IoctlGetTermios(fd, unix.TCGETS)
	return func() {
		// tcsetpgrp and tcsetattr from a background group raise
		// SIGTTOU unless it is ignored.
		signal.Ignore(unix.SIGTTOU)
		defer signal.Reset(unix.SIGTTOU)
		if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, own); err != nil {
			log.Warn("giving the terminal back to runsc's process group", "err", err)
		}
		if saved != nil {
			if err := unix.IoctlSetTermios(fd, unix.TCSETS, saved); err != nil {
				log.Warn("restoring the terminal's modes", "err", err)
			}
		}
	}
}
