package kernel

import (
	"errors"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/mm"
	"github.com/moat-sandbox/moat/sentry/platform"
)

var errNoPIDs = errors.New("no free pids")

// Task is an application thread.
type Task struct {
	k   *Kernel
	tg  *ThreadGroup
	tid ThreadID

	// Only the task's own goroutine touches these.
	regs arch.Registers
	pctx platform.Context
	// mm may be read by other goroutines (for /proc) under mmMu.
	mm      atomic.Pointer[mm.MemoryManager]
	fdTable atomic.Pointer[fs.FDTable]
	fsCtx   atomic.Pointer[fs.FSContext]
	creds   atomic.Pointer[auth.Credentials]
	name    atomic.Pointer[string]
	exePath atomic.Pointer[fs.VirtualDentry]

	// Signal state, guarded by k.mu.
	sigMask       SignalSet
	savedMask     SignalSet
	haveSavedMask bool
	pending       pendingSignals
	altStack      SignalStack
	// counters feed getrusage (rusage.go).
	counters taskCounters
	// sigHandlers may be shared with other thread groups (CLONE_SIGHAND
	// without CLONE_THREAD, as vfork does).
	sigHandlers *SignalHandlers

	// pendingWork is set when the task must look at its signal or exit
	// state before returning to application code.
	pendingWork atomic.Bool
	// interruptCh wakes a task blocked in BlockOn.
	interruptCh chan struct{}

	// Exit state, guarded by k.mu.
	exitState  taskExitState
	exitStatus WaitStatus

	clearChildTID uintptr
	robustList    uintptr
	// vforkDone is closed when the task execs or exits, releasing a vfork
	// parent.
	vforkDone chan struct{}
	// restartBlock redoes an interrupted syscall through restart_syscall.
	restartBlock func(t *Task) (uintptr, error)
	// inSyscall is true while the task handles a syscall (restart codes in
	// rax mean something then).
	inSyscall bool

	// lastFault and faultRepeats detect faults that repeat without
	// progress.
	lastFault    uintptr
	faultRepeats int
	// replay is the scratch space for working out page-fault error codes
	// (fault_code_amd64.go), made on first use.
	replay *faultReplay
	// fpInit is set when the FP state must be reset (after exec) or copied
	// (fpCopy after clone) before the next switch.
	fpCopy []byte
	fpInit bool

	// Accounting.
	utime, stime atomic.Int64 // nanoseconds
	// runningSince is when the task entered application code (UnixNano),
	// 0 when it is in the Sentry.
	runningSince atomic.Int64
	// cpuSeq is odd while utime and runningSince change together, so
	// readers of a running task's clock see them consistent (cpu_clock.go).
	cpuSeq atomic.Uint32
	// waited is the time spent waiting in the current syscall, which is
	// not system time. Only the task goroutine uses it.
	waited    time.Duration
	startTime time.Time
	// runState is what /proc shows as the task's state (task_state.go).
	runState atomic.Uint32

	// Debugging and strace.
	straceOn bool

	// pdeathSignal is PR_SET_PDEATHSIG.
	pdeathSignal Signal
	// noNewPrivs is PR_SET_NO_NEW_PRIVS (atomic: TSYNC sets it on other
	// threads).
	noNewPrivs atomic.Bool
	// seccomp is the task's seccomp mode and filters, nil when off
	// (seccomp.go).
	seccomp atomic.Pointer[seccompState]

	// attrs are scheduling and other per-thread attributes (task_sched.go).
	attrs taskAttrs

	// taskNamespaces are the task's UTS and IPC namespaces (uts.go).
	taskNamespaces
	// pidns is the PID namespace the task lives in and ids its id there
	// and in each ancestor, ids[0] == tid (pidns.go); both are fixed
	// but for exec, which gives a thread its leader's ids (under k.mu).
	// pidnsChildren, guarded by k.mu, is where its children go when
	// unshare(CLONE_NEWPID) changed that, else nil.
	pidns         *PIDNamespace
	ids           []ThreadID
	pidnsChildren *PIDNamespace
}

type taskExitState int

const (
	taskRunning taskExitState = iota
	taskExiting
	taskDead
)

// WaitStatus is a wait(2) status word.
type WaitStatus uint32

// ExitedWith returns the status of a normal exit.
func ExitedWith(code int) WaitStatus { return WaitStatus((code & 0xff) << 8) }

// KilledBy returns the status of a death by signal.
func KilledBy(sig Signal, core bool) WaitStatus {
	s := WaitStatus(sig & 0x7f)
	if core {
		s |= 0x80
	}
	return s
}

// Exited reports whether s is a normal exit, and ExitCode its code.
func (s WaitStatus) Exited() bool  { return s&0x7f == 0 }
func (s WaitStatus) ExitCode() int { return int(s>>8) & 0xff }

// Signaled reports whether s is a death by signal, and Signal which.
func (s WaitStatus) Signaled() bool { return s&0x7f != 0 && s&0x7f != 0x7f }
func (s WaitStatus) Signal() Signal { return Signal(s & 0x7f) }

// Kernel returns the task's kernel.
func (t *Task) Kernel() *Kernel { return t.k }

// ThreadGroup returns the task's thread group.
func (t *Task) ThreadGroup() *ThreadGroup { return t.tg }

// ThreadID returns the task's id in the root PID namespace (Tid is its id
// in its own).
func (t *Task) ThreadID() ThreadID { return t.tid }

// ThreadGroupID returns the task's process id in its own PID namespace
// as a plain int32 (for /proc/self, credentials, SysV IPC pids).
func (t *Task) ThreadGroupID() int32 { return int32(t.Pid()) }

// MemoryManager returns the task's address space.
func (t *Task) MemoryManager() *mm.MemoryManager { return t.mm.Load() }

// FDTable returns the task's file descriptor table.
func (t *Task) FDTable() *fs.FDTable { return t.fdTable.Load() }

// FSContext returns the task's root, cwd and umask.
func (t *Task) FSContext() *fs.FSContext { return t.fsCtx.Load() }

// Credentials returns the task's credentials.
func (t *Task) Credentials() *auth.Credentials { return t.creds.Load() }

// SetCredentials installs new credentials.
func (t *Task) SetCredentials(c *auth.Credentials) { t.creds.Store(c) }

// Registers returns the task's registers (only for its own goroutine).
func (t *Task) Registers() *arch.Registers { return &t.regs }

// Name returns the task's comm.
func (t *Task) Name() string {
	if p := t.name.Load(); p != nil {
		return *p
	}
	return ""
}

// SetName sets the task's comm, truncated to 15 bytes.
func (t *Task) SetName(n string) {
	if len(n) > 15 {
		n = n[:15]
	}
	t.name.Store(&n)
}

// Executable returns where the task's program was loaded from.
func (t *Task) Executable() fs.VirtualDentry {
	if p := t.exePath.Load(); p != nil {
		return *p
	}
	return fs.VirtualDentry{}
}

// CopyInBytes implements fs.Context.CopyInBytes.
func (t *Task) CopyInBytes(addr uintptr, dst []byte) (int, error) {
	return t.MemoryManager().CopyIn(addr, dst)
}

// CopyOutBytes implements fs.Context.CopyOutBytes.
func (t *Task) CopyOutBytes(addr uintptr, src []byte) (int, error) {
	return t.MemoryManager().CopyOut(addr, src)
}

// CopyInString reads a NUL-terminated string of at most maxLen bytes.
func (t *Task) CopyInString(addr uintptr, maxLen int) (string, error) {
	return t.MemoryManager().CopyInString(addr, maxLen)
}

// CopyInPath reads a path argument: EFAULT, ENAMETOOLONG as Linux.
func (t *Task) CopyInPath(addr uintptr) (string, error) {
	s, err := t.CopyInString(addr, fs.PathMax-1)
	if err == unix.ENAMETOOLONG {
		return "", unix.ENAMETOOLONG
	}
	return s, err
}

// Utime and Stime return the task's user and system CPU time, user time
// including the stint in application code under way.
func (t *Task) Utime() time.Duration { u, _ := t.cpuTimes(); return u }
func (t *Task) Stime() time.Duration { return time.Duration(t.stime.Load()) }

// StartTime is when the task was created.
func (t *Task) StartTime() time.Time { return t.startTime }

// Parent returns the task's parent process's leader, or nil.
func (t *Task) Parent() *ThreadGroup {
	t.k.mu.Lock()
	defer t.k.mu.Unlock()
	return t.tg.parent
}

// Log returns the kernel's logger.
func (t *Task) Log() interface {
	Debug(string, ...any)
	Info(string, ...any)
	Warn(string, ...any)
} {
	return t.k.Log
}

// SetClearChildTID implements set_tid_address's half in the task.
func (t *Task) SetClearChildTID(addr uintptr) { t.clearChildTID = addr }

// SetRobustList records the robust futex list head.
func (t *Task) SetRobustList(addr uintptr) { t.robustList = addr }

// RobustList returns the robust futex list head.
func (t *Task) RobustList() uintptr { return t.robustList }

// SetRestartBlock arranges for restart_syscall to call fn.
func (t *Task) SetRestartBlock(fn func(t *Task) (uintptr, error)) { t.restartBlock = fn }

// RestartSyscall runs the restart block set by an interrupted syscall.
func (t *Task) RestartSyscall() (uintptr, error) {
	fn := t.restartBlock
	t.restartBlock = nil
	if fn == nil {
		return 0, errEINTR
	}
	return fn(t)
}

// PDeathSignal returns PR_GET_PDEATHSIG's value.
func (t *Task) PDeathSignal() Signal { return t.pdeathSignal }

// SetPDeathSignal sets PR_SET_PDEATHSIG.
func (t *Task) SetPDeathSignal(s Signal) { t.pdeathSignal = s }

// NoNewPrivs returns PR_GET_NO_NEW_PRIVS.
func (t *Task) NoNewPrivs() bool { return t.noNewPrivs.Load() }

// SetNoNewPrivs sets no_new_privs (it can never be cleared).
func (t *Task) SetNoNewPrivs() { t.noNewPrivs.Store(true) }
