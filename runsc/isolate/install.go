package isolate

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/runsc/internal/future"
)

// Mode chooses what a filter does with a syscall its table does not list.
type Mode int

// The modes. ModeKill is production; the others help find missing entries
// and must never be used for a real workload.
const (
	// ModeKill kills the process (SECCOMP_RET_KILL_PROCESS).
	ModeKill Mode = iota
	// ModeTrap sends SIGSYS (SECCOMP_RET_TRAP): the Go runtime dies
	// printing "SIGSYS: bad system call", the stack of the goroutine that
	// made the call (which names the syscall wrapper and its number) and
	// the registers.
	ModeTrap
	// ModeLog lets the syscall run and has the kernel log it
	// (SECCOMP_RET_LOG: a "type=1326 audit" line in dmesg with syscall=N),
	// so one run lists every missing entry.
	ModeLog
)

// ParseMode parses a --seccomp-debug value: "" or "kill", "trap", "log".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "", "kill", "off":
		return ModeKill, nil
	case "trap":
		return ModeTrap, nil
	case "log":
		return ModeLog, nil
	}
	return ModeKill, fmt.Errorf("invalid seccomp debug mode %q: want trap or log", s)
}

// String returns the name ParseMode accepts.
func (m Mode) String() string {
	switch m {
	case ModeTrap:
		return "trap"
	case ModeLog:
		return "log"
	}
	return "kill"
}

// DefaultAction is the action for unlisted syscalls in mode m.
func (m Mode) DefaultAction() Action {
	switch m {
	case ModeTrap:
		return ActionTrap
	case ModeLog:
		return ActionLog
	}
	return ActionKillProcess
}

// errCgo explains why per-thread state could not be set on all threads.
var errCgo = errors.New("cannot apply to all threads: runsc must be built with CGO_ENABLED=0")

// allThreadsCalls counts allThreads' calls, each of which stops the world:
// tests check that what needs none makes none.
var allThreadsCalls atomic.Int64

// allThreads runs a syscall on every thread of the process.
func allThreads(trap, a1, a2, a3, a4, a5, a6 uintptr) error {
	allThreadsCalls.Add(1)
	_, _, errno := syscall.AllThreadsSyscall6(trap, a1, a2, a3, a4, a5, a6)
	if errno == syscall.ENOTSUP {
		return errCgo
	}
	if errno != 0 {
		return unix.Errno(errno)
	}
	return nil
}

// SetNoNewPrivs sets no_new_privs on every thread of the process, so that
// no execve can grant privileges again and seccomp filters can be
// installed without CAP_SYS_ADMIN.
func SetNoNewPrivs() error {
	if err := allThreads(unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	return nil
}

// Install compiles f and installs it on every thread of the process
// (SECCOMP_FILTER_FLAG_TSYNC), with no_new_privs set on every thread too.
// Threads created later and child processes inherit both. There is no way
// back.
func Install(f *Filter) error {
	prog, err := f.Build()
	if err != nil {
		return fmt.Errorf("building seccomp filter: %w", err)
	}
	return InstallProgram(prog)
}

// Prebuild compiles f on a goroutine of its own (the rules merged and the
// program built take about a millisecond on a cold start) and returns
// install, which waits for it and then installs it as Install does: a
// process compiles its filter while it does the rest of its start.
func Prebuild(f *Filter) (install func() error) {
	build := future.Start(f.Build)
	return func() error {
		prog, err := build()
		if err != nil {
			return fmt.Errorf("building seccomp filter: %w", err)
		}
		return InstallProgram(prog)
	}
}

// InstallProgram installs an already compiled program; see Install.
func InstallProgram(prog []unix.SockFilter) error {
	if len(prog) == 0 {
		return errors.New("installing seccomp filter: empty program")
	}
	// no_new_privs on the calling thread is enough: TSYNC gives every
	// thread it synchronises the caller's no_new_privs along with the
	// filter, which saves stopping the world for SetNoNewPrivs. Both
	// calls must run on the same thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	tid, errno := seccompSetFilter(prog, unix.SECCOMP_FILTER_FLAG_TSYNC)
	if errno != 0 {
		return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER): %w", errno)
	}
	if tid != 0 {
		return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER, TSYNC): thread %d could not be synchronised", tid)
	}
	return nil
}

// AllThreadsSupported reports whether this binary can change per-thread
// state on all its threads at once (SetNoNewPrivs, DropCapabilities,
// Install): false when cgo is linked in (as with -race).
func AllThreadsSupported() bool {
	_, _, errno := syscall.AllThreadsSyscall(unix.SYS_PRCTL, unix.PR_GET_NO_NEW_PRIVS, 0, 0)
	return errno != syscall.ENOTSUP
}
