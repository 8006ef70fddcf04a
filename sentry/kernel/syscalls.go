package kernel

import (
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/strace"
	"github.com/moat-sandbox/moat/sentry/syserror"
)

// SupportLevel says how much of a syscall Moat implements.
type SupportLevel int

// Support levels.
const (
	// SupportFull: implemented as Linux does.
	SupportFull SupportLevel = iota
	// SupportPartial: implemented, with gaps the note describes.
	SupportPartial
	// SupportUnimplemented: returns an error (ENOSYS unless the entry
	// says otherwise) and logs once.
	SupportUnimplemented
)

func (l SupportLevel) String() string {
	switch l {
	case SupportFull:
		return "full"
	case SupportPartial:
		return "partial"
	default:
		return "unimplemented"
	}
}

// SyscallFn is a syscall handler. It returns the value for rax, or an
// error: a unix.Errno (returned negated), a syserror restart code, or one
// of the kernel's control errors (ErrNoSyscallReturn).
type SyscallFn func(t *Task, args arch.SyscallArguments) (uintptr, error)

// Syscall is one entry of the table.
type Syscall struct {
	Name    string
	Fn      SyscallFn
	Support SupportLevel
	// Note explains partial support or why it is unimplemented.
	Note string
	// Errno is returned by unimplemented entries (ENOSYS if zero).
	Errno unix.Errno
}

// SyscallTable maps syscall numbers to handlers.
type SyscallTable struct {
	Table map[uintptr]Syscall

	logged sync.Map
}

// ErrNoSyscallReturn tells the dispatcher not to set rax: the handler
// already set every register (rt_sigreturn, execve).
var ErrNoSyscallReturn = errors.New("no syscall return value")

// errTaskExited ends the task's run loop.
var errTaskExited = errors.New("task exited")

// Lookup returns the entry for sysno.
func (st *SyscallTable) Lookup(sysno uintptr) (Syscall, bool) {
	s, ok := st.Table[sysno]
	return s, ok
}

// doSyscall runs the syscall in t's registers. It returns false when the
// task has exited.
func (t *Task) doSyscall() bool {
	// The number is an int: Linux (5.10+) looks at EAX only.
	sysno := uintptr(uint32(t.regs.Orig_rax))
	args := arch.SyscallArgs(&t.regs)
	var entry string
	if t.k.Strace != nil {
		entry = strace.Entry(t, sysno, toRaw(args))
		if sysno == unix.SYS_EXIT || sysno == unix.SYS_EXIT_GROUP || sysno == unix.SYS_EXECVE {
			fmt.Fprintf(t.k.Strace, "[%5d] %s ...\n", t.tid, entry)
		}
	}
	var rv uintptr
	var err error
	run := true
	if sc := t.seccomp.Load(); sc != nil {
		rv, run, err = t.checkSeccomp(sc, sysno, &args)
	}
	if run {
		rv, err = t.dispatch(sysno, args)
	}
	if err == errTaskExited {
		return false
	}
	if err == ErrNoSyscallReturn {
		t.inSyscall = false
		if t.k.Strace != nil && sysno != unix.SYS_EXECVE {
			fmt.Fprintf(t.k.Strace, "[%5d] %s = ?\n", t.tid, entry)
		}
		return true
	}
	if err != nil {
		errno, ok := err.(unix.Errno)
		if !ok && !errors.As(err, &errno) {
			t.k.Log.Info("syscall returned a non-errno error", "syscall", strace.Name(sysno), "err", err)
			errno = unix.EIO
		}
		rv = uintptr(-int64(errno))
		switch errno {
		case syserror.ERESTARTSYS, syserror.ERESTARTNOINTR, syserror.ERESTARTNOHAND, syserror.ERESTART_RESTARTBLOCK:
			t.inSyscall = true
			t.pendingWork.Store(true)
		}
	}
	t.regs.Rax = uint64(rv)
	if t.k.Strace != nil {
		fmt.Fprintf(t.k.Strace, "[%5d] %s\n", t.tid, strace.Exit(t, sysno, toRaw(args), rv))
	}
	return true
}

func toRaw(a arch.SyscallArguments) [6]uintptr {
	var r [6]uintptr
	for i, v := range a {
		r[i] = uintptr(v)
	}
	return r
}

func (t *Task) dispatch(sysno uintptr, args arch.SyscallArguments) (uintptr, error) {
	s, ok := t.k.Syscalls.Table[sysno]
	if !ok || s.Fn == nil {
		name := strace.Name(sysno)
		if name == "" {
			name = fmt.Sprintf("syscall %d", sysno)
		}
		errno := s.Errno
		if errno == 0 {
			errno = unix.ENOSYS
		}
		if _, dup := t.k.Syscalls.logged.LoadOrStore(sysno, true); !dup {
			t.k.Log.Info("unsupported syscall", "syscall", name, "errno", errno.Error(), "note", s.Note)
		}
		return 0, errno
	}
	return s.Fn(t, args)
}
