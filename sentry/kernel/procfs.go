package kernel

import (
	"bytes"
	"encoding/binary"
	"sort"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/pipe"
	"github.com/moat-sandbox/moat/sentry/fs/proc"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/mm"
)

// ProcKernel lets /proc see the kernel's processes and describe the
// sandbox (proc.System).
type ProcKernel struct {
	K *Kernel
	// Release and Version are what uname(2) reports.
	Release, Version string
	// MemTotal returns the sandbox's memory in bytes (sysinfo's total).
	MemTotal func() uint64
	// PIDNS is the PID namespace the /proc shows: as on Linux, that of
	// the task that mounted it (see ForMounter). nil, for the /proc the
	// runtime mounts for a container before its init exists, shows the
	// namespace of the reader's container: the sandbox's root namespace,
	// or the one a sub-container was given (InitOptions.NewPIDNamespace),
	// never a namespace its processes nested inside it.
	PIDNS *PIDNamespace
}

// ForMounter returns p showing the active PID namespace of the task
// behind ctx, the one mounting the /proc (mount(2)). A context without a
// task (the runtime mounting a container's file systems) leaves p
// showing the reader's container's namespace.
func (p ProcKernel) ForMounter(ctx fs.Context) ProcKernel {
	if t := taskOf(ctx); t != nil {
		p.PIDNS = t.PIDNamespace()
	}
	return p
}

// SelfIDs implements proc.SelfKernel.
func (p ProcKernel) SelfIDs(ctx fs.Context) (tgid, tid int32, ok bool) {
	t := taskOf(ctx)
	if t == nil || t.pidns == nil {
		return 0, 0, false
	}
	ns := p.nsFor(ctx)
	k := p.K
	k.mu.Lock()
	defer k.mu.Unlock()
	tgid, tid = int32(ns.idOfTGLocked(t.tg)), int32(ns.IDOfTaskLocked(t))
	return tgid, tid, tgid != 0
}

// nsFor returns the PID namespace whose ids the /proc shows to ctx.
func (p ProcKernel) nsFor(ctx fs.Context) *PIDNamespace {
	if p.PIDNS != nil {
		return p.PIDNS
	}
	if t := taskOf(ctx); t != nil && t.pidns != nil {
		ns := t.pidns
		for ns.parent != nil && !ns.container {
			ns = ns.parent
		}
		return ns
	}
	return p.K.rootPID
}

// The optional interfaces /proc looks for.
var (
	_ proc.System          = ProcKernel{}
	_ proc.StatTask        = procTask{}
	_ proc.MemTask         = procTask{}
	_ proc.ThreadsTask     = procTask{}
	_ proc.LimitsTask      = procTask{}
	_ proc.OOMTask         = procTask{}
	_ proc.CommTask        = procTask{}
	_ proc.ResidentTask    = procTask{}
	_ proc.PersonalityTask = procTask{}
	_ proc.DumpableTask    = procTask{}
	_ proc.SameProcessTask = procTask{}
	_ proc.MemAccessTask   = procTask{}
	_ proc.TimerSlackTask  = procTask{}
	_ proc.ThreadContext   = (*Task)(nil)
	_ proc.FDInstaller     = (*Task)(nil)
)

// Values Linux exposes in /proc/sys that the Sentry enforces elsewhere.
const (
	// procPIDMax is allocID's pidMax.
	procPIDMax = 4194304
	// procNROpen is the RLIMIT_NOFILE ceiling of Limits.Set.
	procNROpen = 1 << 20
)

// SystemInfo implements proc.System.
func (p ProcKernel) SystemInfo() proc.SystemInfo {
	return proc.SystemInfo{
		NumCPUs:     NumCPUs(),
		CPUInfo:     cpuInfoText(),
		Release:     p.Release,
		Version:     p.Version,
		BootTime:    p.K.BootTime(),
		PIDMax:      procPIDMax,
		NROpen:      procNROpen,
		PipeMaxSize: pipe.MaxSize,
		CapLastCap:  unix.CAP_LAST_CAP,
		NGroupsMax:  NGroupsMax,
		MmapMinAddr: arch.MinUserAddress,
	}
}

// SystemStats implements proc.System. Forks is approximated by the last
// allocated id (ids are handed out in order and reused only after
// pid_max).
func (p ProcKernel) SystemStats() proc.SystemStats {
	k := p.K
	var st proc.SystemStats
	if p.MemTotal != nil {
		st.MemTotal = p.MemTotal()
	}
	if used := k.MemFile.Used(); used < st.MemTotal {
		st.MemFree = st.MemTotal - used
	}
	k.mu.Lock()
	st.LastPID = int32(k.rootPID.nextID - 1)
	st.Forks = uint64(k.rootPID.nextID - 1)
	k.mu.Unlock()
	for _, tg := range k.ThreadGroups() {
		u, s := tg.CPUTimes()
		st.User += u
		st.System += s
		for _, t := range tg.Tasks() {
			st.Threads++
			if t.RunState() == StateRunning {
				st.Running++
			}
		}
	}
	return st
}

// AsTask returns t: contexts that embed a task (a syscall's context with
// other credentials) have it too, so /proc finds the task behind them.
func (t *Task) AsTask() *Task { return t }

// taskOf returns the task behind ctx, or nil.
func taskOf(ctx fs.Context) *Task {
	if at, ok := ctx.(interface{ AsTask() *Task }); ok {
		return at.AsTask()
	}
	return nil
}

// utsOf returns the UTS namespace of the task behind ctx, or the
// initial one.
func (p ProcKernel) utsOf(ctx fs.Context) *UTSNamespace {
	if t := taskOf(ctx); t != nil {
		return t.UTSNamespace()
	}
	return p.K.rootUTS
}

// Hostname implements proc.System.
func (p ProcKernel) Hostname(ctx fs.Context) string { return p.utsOf(ctx).Hostname() }

// Domainname implements proc.System.
func (p ProcKernel) Domainname(ctx fs.Context) string { return p.utsOf(ctx).Domainname() }

// SetUTSName implements proc.System. The sysctl file's mode is the only
// check, as on Linux.
func (p ProcKernel) SetUTSName(ctx fs.Context, domain bool, name string) error {
	if domain {
		p.utsOf(ctx).SetDomainname(name)
	} else {
		p.utsOf(ctx).SetHostname(name)
	}
	return nil
}

// InstallFD implements proc.FDInstaller: f gets the lowest free
// descriptor within RLIMIT_NOFILE.
func (t *Task) InstallFD(f *fs.FileDescription, closeOnExec bool) (int32, error) {
	tbl := t.FDTable()
	if tbl == nil {
		return -1, unix.EBADF
	}
	return tbl.NewFD(0, f, fs.FDFlags{CloseOnExec: closeOnExec}, t.tg.limits.Get(unix.RLIMIT_NOFILE).Cur)
}

// ProcThreadID implements proc.ThreadContext.
func (t *Task) ProcThreadID() int32 { return int32(t.Tid()) }

// ThreadGroup implements proc.Kernel.ThreadGroup.
func (p ProcKernel) ThreadGroup(ctx fs.Context, pid int32) (proc.Task, bool) {
	ns := p.nsFor(ctx)
	tg := ns.ThreadGroupWithID(ThreadID(pid))
	if tg == nil {
		return nil, false
	}
	return procTask{tg: tg, ns: ns}, true
}

// PIDs implements proc.Kernel.PIDs.
func (p ProcKernel) PIDs(ctx fs.Context) []int32 {
	ns := p.nsFor(ctx)
	var out []int32
	k := p.K
	k.mu.Lock()
	for id := range ns.tgs {
		out = append(out, int32(id))
	}
	k.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// procTask is a process as /proc shows it, or, with thread set, one of its
// threads (/proc/[pid]/task/[tid]).
type procTask struct {
	tg     *ThreadGroup
	thread *Task
	// ns is the PID namespace whose ids the files show.
	ns *PIDNamespace
}

// pidns returns the namespace the files number processes in.
func (p procTask) pidns() *PIDNamespace {
	if p.ns != nil {
		return p.ns
	}
	return p.tg.k.rootPID
}

// leader is the task whose name, credentials and state the files show:
// the thread itself, or the process's leader.
func (p procTask) leader() *Task {
	if p.thread != nil {
		return p.thread
	}
	return p.tg.Leader()
}

// SameProcess implements proc.SameProcessTask.
func (p procTask) SameProcess(ctx fs.Context) bool {
	t, ok := ctx.(*Task)
	return ok && t.tg == p.tg
}

func (p procTask) PID() int32 {
	if p.thread != nil {
		return int32(p.pidns().IDOfTask(p.thread))
	}
	return int32(p.pidns().IDOfThreadGroup(p.tg))
}

func (p procTask) Credentials() *auth.Credentials {
	if l := p.leader(); l != nil {
		return l.Credentials()
	}
	return auth.NewRootCredentials()
}

// live returns a task of the process that has not exited, or nil.
func (p procTask) live() *Task {
	if p.thread != nil {
		if p.thread.RunState() == StateZombie {
			return nil
		}
		return p.thread
	}
	for _, t := range p.tg.Tasks() {
		return t
	}
	return nil
}

func (p procTask) Exe() (fs.VirtualDentry, bool) {
	t := p.live()
	if t == nil {
		return fs.VirtualDentry{}, false
	}
	vd := t.Executable()
	return vd, vd.Ok()
}

func (p procTask) FDTable() *fs.FDTable {
	if t := p.live(); t != nil {
		return t.FDTable()
	}
	return nil
}

func (p procTask) FSContext() *fs.FSContext {
	if t := p.live(); t != nil {
		return t.FSContext()
	}
	return nil
}

// memory returns the address space of a live task of the process.
func (p procTask) memory() *mm.MemoryManager {
	if t := p.live(); t != nil {
		return t.MemoryManager()
	}
	return nil
}

// memRange reads [start, end) of the process's memory, as much as is
// readable.
func (p procTask) memRange(start, end uintptr) []byte {
	m := p.memory()
	if m == nil || end <= start {
		return nil
	}
	b := make([]byte, end-start)
	n, _ := m.CopyIn(start, b)
	return b[:n]
}

// Cmdline implements proc.Task: the argument area, or, when a program
// overwrote the NUL ending it (setproctitle), its title: the first page
// from the start of the arguments, running on into the environment area
// that follows them, up to and including the first NUL (as Linux's
// get_mm_proctitle).
func (p procTask) Cmdline() []byte {
	m := p.memory()
	if m == nil || m.ArgvStart >= m.ArgvEnd {
		return nil
	}
	args := p.memRange(m.ArgvStart, m.ArgvEnd)
	if len(args) == 0 || args[len(args)-1] == 0 {
		return args
	}
	end := m.ArgvEnd
	if m.EnvvStart == m.ArgvEnd && m.EnvvEnd >= m.EnvvStart {
		end = m.EnvvEnd
	}
	title := p.memRange(m.ArgvStart, min(end, m.ArgvStart+4096))
	if i := bytes.IndexByte(title, 0); i >= 0 {
		title = title[:i+1]
	}
	return title
}

// Environ implements proc.MemTask: the environment area as the process's
// memory holds it now.
func (p procTask) Environ() []byte {
	if m := p.memory(); m != nil {
		return p.memRange(m.EnvvStart, m.EnvvEnd)
	}
	return nil
}

// Auxv implements proc.MemTask: the auxiliary vector given at exec, AT_NULL
// included, as native-endian words.
func (p procTask) Auxv() []byte {
	m := p.memory()
	if m == nil {
		return nil
	}
	b := make([]byte, 0, 8*len(m.Auxv))
	for _, w := range m.Auxv {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	return b
}

// Maps implements proc.MemTask.
func (p procTask) Maps() string {
	if m := p.memory(); m != nil {
		return m.Maps()
	}
	return ""
}

// TIDs implements proc.ThreadsTask.
func (p procTask) TIDs() []int32 {
	if p.thread != nil {
		return nil
	}
	ns := p.pidns()
	var out []int32
	for _, t := range p.tg.Tasks() {
		out = append(out, int32(ns.IDOfTask(t)))
	}
	if len(out) == 0 {
		// A zombie process still shows its leader.
		out = append(out, int32(ns.IDOfThreadGroup(p.tg)))
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Thread implements proc.ThreadsTask.
func (p procTask) Thread(tid int32) (proc.Task, bool) {
	if p.thread != nil {
		return nil, false
	}
	t := p.pidns().TaskWithID(ThreadID(tid))
	if t == nil || t.tg != p.tg {
		return nil, false
	}
	return procTask{tg: p.tg, thread: t, ns: p.ns}, true
}

func (p procTask) Comm() string {
	if t := p.leader(); t != nil {
		return t.Name()
	}
	return ""
}

// state is the state the files show: the thread's, or for a process its
// leader's (Linux shows the leader's too), zombie once every thread exited.
func (p procTask) state() RunState {
	if p.thread == nil && p.live() == nil {
		return StateZombie
	}
	if l := p.leader(); l != nil {
		return l.RunState()
	}
	return StateZombie
}

// cpuTimes are the thread's own times, or the whole process's.
func (p procTask) cpuTimes() (u, s time.Duration) {
	if p.thread != nil {
		return p.thread.Utime(), p.thread.Stime()
	}
	return p.tg.CPUTimes()
}

// Limits implements proc.LimitsTask.
func (p procTask) Limits() []proc.Limit {
	out := make([]proc.Limit, unix.RLIMIT_RTTIME+1)
	for r := range out {
		l := p.tg.limits.Get(r)
		out[r] = proc.Limit{Cur: l.Cur, Max: l.Max}
	}
	return out
}

// OOMScoreAdj implements proc.OOMTask.
func (p procTask) OOMScoreAdj() int32 { return p.tg.procAttrs.oomScoreAdj.Load() }

// SetOOMScoreAdj implements proc.OOMTask: going below the floor takes
// CAP_SYS_RESOURCE, and a privileged write moves the floor.
func (p procTask) SetOOMScoreAdj(ctx fs.Context, v int32) error {
	privileged := ctx.Credentials().HasCapability(unix.CAP_SYS_RESOURCE)
	a := &p.tg.procAttrs
	if v < a.oomScoreAdjMin.Load() && !privileged {
		return unix.EACCES
	}
	a.oomScoreAdj.Store(v)
	if privileged {
		a.oomScoreAdjMin.Store(v)
	}
	return nil
}

// SetComm implements proc.CommTask.
func (p procTask) SetComm(ctx fs.Context, name string) error {
	caller, ok := ctx.(*Task)
	if !ok || caller.tg != p.tg {
		return unix.EINVAL
	}
	if t := p.leader(); t != nil {
		t.SetName(name)
	}
	return nil
}

// Dumpable implements proc.DumpableTask.
func (p procTask) Dumpable() bool {
	if t := p.leader(); t != nil {
		return t.Dumpable()
	}
	return true
}

// MMUserNamespace implements proc.MMUserNSTask.
func (p procTask) MMUserNamespace() *auth.UserNamespace {
	return p.tg.procAttrs.userNS.Load()
}

// TimerSlack implements proc.TimerSlackTask.
func (p procTask) TimerSlack() uint64 {
	if t := p.leader(); t != nil {
		return t.TimerSlack()
	}
	return 0
}

// SetTimerSlack implements proc.TimerSlackTask.
func (p procTask) SetTimerSlack(ctx fs.Context, ns uint64) error {
	t := p.leader()
	if t == nil {
		return unix.ESRCH
	}
	if caller, ok := ctx.(*Task); !ok || caller != t {
		// CAP_SYS_NICE over the target's user namespace.
		if !ctx.Credentials().HasCapabilityIn(unix.CAP_SYS_NICE, t.UserNamespace()) {
			return unix.EPERM
		}
	}
	t.SetTimerSlack(ns)
	return nil
}

// MayPtrace implements proc.PtraceTask, with the context's credentials
// (access(2) checks with its own): the Sentry itself may; a task, or a
// context wrapping one (KernelTask), passes Linux's ptrace access check;
// any other context may not. A process without threads has no memory to
// show.
func (p procTask) MayPtrace(ctx fs.Context) bool {
	var caller *Task
	switch c := ctx.(type) {
	case *Task:
		caller = c
	case backgroundContext:
		return true
	case interface{ KernelTask() *Task }:
		caller = c.KernelTask()
	default:
		return false
	}
	target := p.leader()
	if target == nil {
		return true
	}
	return ptraceMayAccess(caller, ctx.Credentials(), target, true)
}

// KernelTask returns t: contexts that embed a task (access(2)'s, with other
// credentials) are known by it.
func (t *Task) KernelTask() *Task { return t }

// BoundMemory implements proc.MemAccessTask.
func (p procTask) BoundMemory() proc.MemAccess {
	m := p.memory()
	if m == nil {
		return nil
	}
	return boundMemory{m}
}

// boundMemory is one address space of a process, for /proc/[pid]/mem.
type boundMemory struct{ m *mm.MemoryManager }

// ReadMemory implements proc.MemAccess.
func (b boundMemory) ReadMemory(addr uint64, dst []byte) (int, error) {
	if !b.m.TryIncUsers() {
		// The address space is gone: nothing, as Linux's mem_rw once
		// mmget_not_zero fails.
		return 0, nil
	}
	defer b.m.DecUsers()
	return b.m.ForceCopyIn(uintptr(addr), dst)
}

// WriteMemory implements proc.MemAccess.
func (b boundMemory) WriteMemory(addr uint64, src []byte) (int, error) {
	if !b.m.TryIncUsers() {
		return 0, nil
	}
	defer b.m.DecUsers()
	return b.m.ForceCopyOut(uintptr(addr), src)
}

// Personality implements proc.PersonalityTask.
func (p procTask) Personality() uint32 {
	if t := p.leader(); t != nil {
		return t.Personality()
	}
	return 0
}

// ResidentIn implements proc.ResidentTask.
func (p procTask) ResidentIn(start, end uint64) uint64 {
	if m := p.memory(); m != nil {
		return m.ResidentIn(uintptr(start), uintptr(end))
	}
	return 0
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
