// Package syserror holds the errors that cross package boundaries inside the
// Sentry without being plain errnos: the kernel's internal restart codes and
// the interruption of a blocked task by a signal.
//
// Syscall handlers return unix.Errno values; the errors here are translated
// by the kernel's syscall path (restart codes become EINTR or a restarted
// syscall, as Linux does) and never reach the application as such.
package syserror

import (
	"errors"

	"golang.org/x/sys/unix"
)

// Linux's internal restart codes (include/linux/errno.h). A handler returns
// one of them when a signal interrupted it; the kernel turns it into EINTR
// or restarts the syscall depending on the signal's disposition.
const (
	// ERESTARTSYS restarts if the handler has SA_RESTART (or there is no
	// handler), else EINTR.
	ERESTARTSYS = unix.Errno(512)
	// ERESTARTNOINTR always restarts.
	ERESTARTNOINTR = unix.Errno(513)
	// ERESTARTNOHAND restarts only if no handler runs, else EINTR.
	ERESTARTNOHAND = unix.Errno(514)
	// ERESTART_RESTARTBLOCK restarts through restart_syscall if no handler
	// runs, else EINTR.
	ERESTART_RESTARTBLOCK = unix.Errno(516)
)

// ErrInterrupted is returned by a blocking wait that a signal (or another
// reason the task must return to user mode, such as group exit) cut short.
// Handlers map it to the restart code that fits their syscall.
var ErrInterrupted = errors.New("interrupted by signal")

// ErrWouldBlock is what a non-blocking operation returns when it would have
// to wait; it is EAGAIN.
var ErrWouldBlock = unix.EAGAIN
