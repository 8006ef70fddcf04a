// Package kernel implements the Sentry's process model: tasks (threads),
// thread groups (processes), the PID namespace, sessions and process
// groups, signals, futexes, timers, and the loop that runs a task's
// application code on the platform and serves its system calls.
//
// Every task is one goroutine, locked to its OS thread while it runs
// application code (the ptrace platform needs that). A task blocks only in
// Task.BlockOn and friends, which a signal or a group exit interrupts.
//
// Locks, in the order they are taken:
//
//	Kernel.mu        the task tree: parents, children, thread group
//	                 membership, process groups and sessions, exit states,
//	                 and all signal state (pending sets, masks, actions,
//	                 group stops). One lock keeps the many cross-task
//	                 operations of signals and wait simple; the syscall fast
//	                 path only reads Task.pendingWork, an atomic.
//	mm.MemoryManager.mu, fs locks, futex bucket locks: never held while
//	                 taking Kernel.mu.
//	taskAttrs.mu     one task's scheduling attributes (task_sched.go); a
//	                 leaf: nothing is taken while it is held.
package kernel

import (
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/proc"
	"github.com/moat-sandbox/moat/sentry/kernel/futex"
	"github.com/moat-sandbox/moat/sentry/mm"
	"github.com/moat-sandbox/moat/sentry/platform"
	"github.com/moat-sandbox/moat/sentry/vdso"
)

// Kernel is one sandbox's kernel.
type Kernel struct {
	// fsTypes maps a file system type name to its FilesystemType (see
	// fstypes.go).
	fsTypes  sync.Map
	Platform platform.Platform
	MemFile  *mm.MemoryFile
	Futexes  *futex.Manager
	Clock    *vdso.Clock
	// bootTime is BootTime's answer, computed once.
	bootOnce sync.Once
	bootTime time.Time
	Syscalls *SyscallTable
	Log      *slog.Logger
	// Strace, when not nil, receives one line per system call.
	Strace io.Writer
	// MountNS is the root container's mount namespace, the initial one;
	// each task holds its own (Task.MountNamespace, mntns.go).
	MountNS *fs.MountNamespace

	// rootUTS and rootIPC are the initial UTS and IPC namespaces
	// (uts.go); nsInodes counts the namespace inode numbers handed out.
	rootUTS     *UTSNamespace
	rootIPCOnce sync.Once
	rootIPC     *IPCNamespace
	nsInodes    atomic.Uint64

	// vdsoOff and vvarOff locate the vDSO image and its data page in the
	// memory file.
	vdsoOff, vvarOff uint64
	vdsoLen          uintptr

	mu sync.Mutex
	// tasks and threadGroups are indexed by id (one PID namespace).
	// rootPID is the initial PID namespace, whose maps these are (pidns.go).
	tasks         map[ThreadID]*Task
	threadGroups  map[ThreadID]*ThreadGroup
	processGroups map[ThreadID]*ProcessGroup
	sessions      map[ThreadID]*Session
	rootPID       *PIDNamespace
	init          *ThreadGroup
	// exited is closed when init has exited and every task is gone.
	exited     chan struct{}
	exitStatus WaitStatus
	// liveTasks counts tasks that have not finished exiting.
	liveTasks int
	// initSignalFrom says where the signal being sent comes from: while SignalInit or
	// SignalInitFromAncestor sends one from outside the sandbox, init's
	// protection stops less of it (see initIgnoresLocked).
	initSignalFrom initSender
	// signalSender is the task sending the signal under way from kill(2)
	// and friends, nil for signals the kernel makes: what decides if a
	// nested namespace's init is signalled from inside (initIgnoresLocked).
	signalSender *Task

	startTime time.Time
	stopClock chan struct{}

	// freezer is the pause state (freeze.go); external the processes
	// started from outside the sandbox (external.go).
	freezer  freezer
	external map[*ThreadGroup]*ExternalProcess

	// settings are the runtime's sysctls and id maps (settings.go).
	settings proc.Settings
}

// ThreadID is a task or thread group id.
type ThreadID int32

// Config configures New.
type Config struct {
	Platform platform.Platform
	MemFile  *mm.MemoryFile
	Syscalls *SyscallTable
	Log      *slog.Logger
	Strace   io.Writer
	MountNS  *fs.MountNamespace
	Hostname string
	// Clock is the kernel's clock, from vdso.NewClock. Its TSC
	// calibration ends at New's first clock update, which waits until
	// 4 ms have passed since NewClock: a caller that makes the clock
	// early waits for none of it. Nil has New make it.
	Clock *vdso.Clock
}

// New creates a kernel.
func New(c Config) (*Kernel, error) {
	clock := c.Clock
	if clock == nil {
		var err error
		if clock, err = vdso.NewClock(); err != nil {
			return nil, fmt.Errorf("starting the clock: %w", err)
		}
	}
	k := &Kernel{
		Platform:      c.Platform,
		MemFile:       c.MemFile,
		Futexes:       futex.NewManager(),
		Clock:         clock,
		Syscalls:      c.Syscalls,
		Log:           c.Log,
		Strace:        c.Strace,
		MountNS:       c.MountNS,
		rootUTS:       &UTSNamespace{inode: initUTSInode, hostname: c.Hostname, domainname: "(none)"},
		tasks:         make(map[ThreadID]*Task),
		threadGroups:  make(map[ThreadID]*ThreadGroup),
		processGroups: make(map[ThreadID]*ProcessGroup),
		sessions:      make(map[ThreadID]*Session),
		exited:        make(chan struct{}),
		startTime:     time.Now(),
		stopClock:     make(chan struct{}),
	}
	k.rootPID = k.newRootPIDNamespace()
	if k.Log == nil {
		k.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if k.rootUTS.hostname == "" {
		k.rootUTS.hostname = "moat"
	}
	if err := k.setupVDSO(); err != nil {
		return nil, err
	}
	return k, nil
}

// Hostname returns the initial UTS namespace's hostname.
func (k *Kernel) Hostname() string { return k.rootUTS.Hostname() }

// SetHostname sets the initial UTS namespace's hostname.
func (k *Kernel) SetHostname(h string) { k.rootUTS.SetHostname(h) }

// Domainname returns the initial UTS namespace's domain name.
func (k *Kernel) Domainname() string { return k.rootUTS.Domainname() }

// SetDomainname sets the initial UTS namespace's domain name.
func (k *Kernel) SetDomainname(h string) { k.rootUTS.SetDomainname(h) }

// StartTime is when the kernel booted.
func (k *Kernel) StartTime() time.Time { return k.startTime }

// BootTime is the wall-clock time of the boot that CLOCK_BOOTTIME counts
// from (the host's, whose clock the sandbox reads): the origin of uptime
// in sysinfo(2) and /proc/uptime, of btime and of process start times,
// so that they all agree with CLOCK_BOOTTIME as on Linux. It is computed
// once.
func (k *Kernel) BootTime() time.Time {
	k.bootOnce.Do(func() {
		k.bootTime = k.startTime
		if k.Clock == nil {
			return
		}
		if ns, err := k.Clock.Now(unix.CLOCK_BOOTTIME); err == nil {
			k.bootTime = time.Now().Add(-time.Duration(ns))
		}
	})
	return k.bootTime
}

// Wait blocks until init has exited and all tasks are gone, and returns
// init's wait status.
func (k *Kernel) Wait() WaitStatus {
	<-k.exited
	return k.exitStatus
}

// TaskByID returns the task with id tid, or nil.
func (k *Kernel) TaskByID(tid ThreadID) *Task {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.tasks[tid]
}

// ThreadGroupByID returns the thread group with id tgid, or nil.
func (k *Kernel) ThreadGroupByID(tgid ThreadID) *ThreadGroup {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.threadGroups[tgid]
}

// ThreadGroups returns every live thread group, by id order not guaranteed.
func (k *Kernel) ThreadGroups() []*ThreadGroup {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make([]*ThreadGroup, 0, len(k.threadGroups))
	for _, tg := range k.threadGroups {
		out = append(out, tg)
	}
	return out
}

// initSender says where a signal sent to init comes from, which decides
// how much of init's protection applies to it.
type initSender int

const (
	// fromInside: a task of the sandbox. Init gets only the signals it
	// handles or blocks, SIGKILL and SIGSTOP included.
	fromInside initSender = iota
	// fromHostForced: SignalInit. Init gets every signal, as a process
	// without protection would.
	fromHostForced
	// fromAncestor: SignalInitFromAncestor. As from an ancestor PID
	// namespace on Linux: SIGKILL and SIGSTOP always reach init, any other
	// signal only if init handles or blocks it.
	fromAncestor
)

// SignalInit sends sig to init from outside the sandbox with none of
// init's protection: even a signal init neither handles nor blocks acts
// with its default action (SIGTERM kills a plain `sleep`). This is for
// `runsc do`, which forwards the host signals it gets (^C, SIGTERM) so
// that a command run by hand dies of them, as it would outside a
// sandbox. OCI kills use SignalInitFromAncestor instead.
func (k *Kernel) SignalInit(sig Signal) error {
	return k.signalInit(sig, fromHostForced)
}

// SignalInitFromAncestor sends sig to init as Linux does a signal from an
// ancestor PID namespace (runc's `kill` of a container): SIGKILL and
// SIGSTOP always act; any other signal is dropped if init has the default
// action for it and does not block it (SIGTERM to a plain `sleep` does
// nothing), and a blocked one with the default action is dropped when
// unblocked. A signal init handles or ignores behaves as from anywhere.
func (k *Kernel) SignalInitFromAncestor(sig Signal) error {
	return k.signalInit(sig, fromAncestor)
}

func (k *Kernel) signalInit(sig Signal, from initSender) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.init == nil {
		return nil
	}
	info := NewSignalInfo(sig, SI_USER)
	info.reachesInit = from == fromHostForced
	k.initSignalFrom = from
	defer func() { k.initSignalFrom = fromInside }()
	return k.sendSignalToGroupLocked(k.init, sig, info)
}
