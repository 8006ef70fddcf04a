package kernel

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs/proc"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/kernel/shm"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

// PID namespaces.
//
// A PIDNamespace numbers the processes, threads, process groups and
// sessions of its own and of every namespace nested in it; the initial
// (root) namespace numbers them all. A task lives in one namespace, fixed
// at its creation, and has an id there and in each ancestor: Task.ids[l]
// is its id in the ancestor at level l (ids[0], the root's, is Task.tid).
// A thread group, process group or session has the ids of the task that
// made it. An object is visible in a namespace when it lives there or
// in a descendant; elsewhere its id reads as 0, as on Linux.
//
// The root namespace's maps are Kernel.tasks, threadGroups, processGroups
// and sessions (the same map values): code that works on root ids uses
// those directly. Everything that takes or returns an id on behalf of an
// application goes through the namespace of the task asking (Task.
// PIDNamespace, then IDOf*, *WithID).
//
// The first process made in a namespace is its init (id 1): orphans of
// the namespace go to it, signals from inside the namespace reach it only
// when it handles or blocks them, and its exit kills every process left
// in the namespace, after which no process may join it (fork fails with
// ENOMEM). Its parent hears of its exit only once the namespace is empty.
//
// Everything here is guarded by Kernel.mu.

// PIDNamespace is a PID namespace.
type PIDNamespace struct {
	k      *Kernel
	parent *PIDNamespace
	level  int
	inode  uint64
	// owner is the user namespace of the creator (nil: the initial).
	owner *auth.UserNamespace

	// Guarded by Kernel.mu.
	nextID   ThreadID
	tasks    map[ThreadID]*Task
	tgs      map[ThreadID]*ThreadGroup
	pgs      map[ThreadID]*ProcessGroup
	sessions map[ThreadID]*Session
	init     *ThreadGroup
	// container is set on a namespace made for a container's init by the
	// runtime (InitOptions.NewPIDNamespace): the one the container's
	// boot-time /proc shows (ProcKernel.nsFor).
	container bool
	// initExited is set when init has exited: no process may join.
	initExited bool
	// live counts the tasks of the namespace and its descendants that
	// have not finished exiting; initExitPending that the parent of init
	// (which has exited) is told once live falls to zero.
	live            int
	initExitPending bool
}

// newRootPIDNamespace returns the initial namespace over k's maps.
// Preconditions: the maps are made.
func (k *Kernel) newRootPIDNamespace() *PIDNamespace {
	return &PIDNamespace{
		k:        k,
		inode:    initPIDInode,
		nextID:   1,
		tasks:    k.tasks,
		tgs:      k.threadGroups,
		pgs:      k.processGroups,
		sessions: k.sessions,
	}
}

// newChildLocked returns a new namespace nested in ns, ENOSPC beyond
// Linux's 32 levels. Preconditions: k.mu is held.
func (ns *PIDNamespace) newChildLocked() (*PIDNamespace, error) {
	return ns.newChildOwnedLocked(nil)
}

// newChildOwnedLocked is newChildLocked for a namespace owned by user
// namespace owner.
func (ns *PIDNamespace) newChildOwnedLocked(owner *auth.UserNamespace) (*PIDNamespace, error) {
	if ns.level+1 > maxPIDNSLevel {
		return nil, unix.ENOSPC
	}
	return &PIDNamespace{
		k:        ns.k,
		owner:    owner,
		parent:   ns,
		level:    ns.level + 1,
		inode:    ns.k.allocNSInode(),
		nextID:   1,
		tasks:    make(map[ThreadID]*Task),
		tgs:      make(map[ThreadID]*ThreadGroup),
		pgs:      make(map[ThreadID]*ProcessGroup),
		sessions: make(map[ThreadID]*Session),
	}, nil
}

// Inode returns the namespace's nsfs inode number.
func (ns *PIDNamespace) Inode() uint64 { return ns.inode }

// Parent returns the namespace's parent, nil for the root.
func (ns *PIDNamespace) Parent() *PIDNamespace { return ns.parent }

// Level returns how deep the namespace is nested (0 for the root).
func (ns *PIDNamespace) Level() int { return ns.level }

// contains reports whether o is ns or nested in it.
func (ns *PIDNamespace) contains(o *PIDNamespace) bool {
	for ; o != nil && o.level >= ns.level; o = o.parent {
		if o == ns {
			return true
		}
	}
	return false
}

// idIn returns the id, in ns, of an object of namespace owner with ids,
// or 0 if it is not visible there.
func (ns *PIDNamespace) idIn(owner *PIDNamespace, ids []ThreadID) ThreadID {
	if owner == nil || !ns.contains(owner) || ns.level >= len(ids) {
		return 0
	}
	return ids[ns.level]
}

// allocIDLocked returns a free id of ns. Preconditions: k.mu is held.
func (ns *PIDNamespace) allocIDLocked() (ThreadID, error) {
	const pidMax = 4194304
	for i := 0; i < pidMax; i++ {
		id := ns.nextID
		ns.nextID++
		if ns.nextID >= pidMax {
			// Linux skips the low ids when it wraps: below 300 in
			// the initial namespace, init's 1 in the others.
			ns.nextID = 300
			if ns.parent != nil {
				ns.nextID = 2
			}
		}
		if ns.tasks[id] == nil && ns.tgs[id] == nil && ns.pgs[id] == nil && ns.sessions[id] == nil {
			return id, nil
		}
	}
	return 0, errNoPIDs
}

// allocIDsLocked returns ids for a new task of ns, one for each level:
// ENOMEM once an init on the way has exited, as Linux's alloc_pid.
// Preconditions: k.mu is held.
func (k *Kernel) allocIDsLocked(ns *PIDNamespace) ([]ThreadID, error) {
	ids := make([]ThreadID, ns.level+1)
	for n := ns; n != nil; n = n.parent {
		if n.initExited {
			return nil, unix.ENOMEM
		}
		id, err := n.allocIDLocked()
		if err != nil {
			return nil, err
		}
		ids[n.level] = id
	}
	return ids, nil
}

// mapTaskLocked enters t under its ids in its namespace and every
// ancestor. Preconditions: k.mu is held; t.pidns and t.ids are set.
func (k *Kernel) mapTaskLocked(t *Task) { mapIDs(t.pidns, t.ids, t, tasksOf) }

// unmapTaskLocked removes t from the namespaces' maps.
// Preconditions: k.mu is held.
func (k *Kernel) unmapTaskLocked(t *Task) { unmapIDs(t.pidns, t.ids, t, tasksOf) }

// taskStartedLocked counts t live in its namespaces.
func (k *Kernel) taskStartedLocked(t *Task) {
	for n := t.pidns; n != nil; n = n.parent {
		n.live++
	}
}

// taskGoneLocked uncounts t, which has finished exiting, and tells the
// parent of an init waiting for its namespace to empty.
// Preconditions: k.mu is held.
func (k *Kernel) taskGoneLocked(t *Task) {
	for n := t.pidns; n != nil; n = n.parent {
		n.live--
		if n.live == 0 && n.initExitPending {
			n.initExitPending = false
			k.signalParentExitLocked(n.init)
			if n.init.pidfdMade {
				// init's pidfds become readable only now; Notify must
				// not run under k.mu (see reapLocked).
				go n.init.pidfdEvents.Notify(waiter.EventIn | waiter.EventRdNorm)
			}
		}
	}
}

// mapThreadGroupLocked enters tg under its leader's ids.
// Preconditions: k.mu is held.
func (k *Kernel) mapThreadGroupLocked(tg *ThreadGroup) { mapIDs(tg.pidns, tg.ids, tg, tgsOf) }

// unmapThreadGroupLocked removes tg from the namespaces' maps.
func (k *Kernel) unmapThreadGroupLocked(tg *ThreadGroup) { unmapIDs(tg.pidns, tg.ids, tg, tgsOf) }

// mapProcessGroupLocked enters pg under its ids.
func (k *Kernel) mapProcessGroupLocked(pg *ProcessGroup) { mapIDs(pg.pidns, pg.ids, pg, pgsOf) }

// unmapProcessGroupLocked removes pg from the namespaces' maps.
func (k *Kernel) unmapProcessGroupLocked(pg *ProcessGroup) { unmapIDs(pg.pidns, pg.ids, pg, pgsOf) }

// mapSessionLocked enters s under its ids.
func (k *Kernel) mapSessionLocked(s *Session) { mapIDs(s.pidns, s.ids, s, sessionsOf) }

// unmapSessionLocked removes s from the namespaces' maps.
func (k *Kernel) unmapSessionLocked(s *Session) { unmapIDs(s.pidns, s.ids, s, sessionsOf) }

// The id tables of a namespace, for mapIDs and unmapIDs.
func tasksOf(n *PIDNamespace) map[ThreadID]*Task       { return n.tasks }
func tgsOf(n *PIDNamespace) map[ThreadID]*ThreadGroup  { return n.tgs }
func pgsOf(n *PIDNamespace) map[ThreadID]*ProcessGroup { return n.pgs }
func sessionsOf(n *PIDNamespace) map[ThreadID]*Session { return n.sessions }

// mapIDs enters v, whose namespace is ns and whose id at each level is
// ids[level], in the table of ns and of every ancestor.
func mapIDs[T comparable](ns *PIDNamespace, ids []ThreadID, v T, table func(*PIDNamespace) map[ThreadID]T) {
	for n := ns; n != nil; n = n.parent {
		table(n)[ids[n.level]] = v
	}
}

// unmapIDs removes v from the tables mapIDs entered it in, leaving an id
// another object has taken since.
func unmapIDs[T comparable](ns *PIDNamespace, ids []ThreadID, v T, table func(*PIDNamespace) map[ThreadID]T) {
	for n := ns; n != nil; n = n.parent {
		if id := ids[n.level]; table(n)[id] == v {
			delete(table(n), id)
		}
	}
}

// RootPIDNamespace returns the sandbox's initial PID namespace.
func (k *Kernel) RootPIDNamespace() *PIDNamespace { return k.rootPID }

// PIDNamespace returns the namespace t lives in.
func (t *Task) PIDNamespace() *PIDNamespace {
	if t.pidns == nil {
		return t.k.rootPID
	}
	return t.pidns
}

// PIDNamespaceForChildren returns the namespace t's new children go to
// (/proc/[pid]/ns/pid_for_children): a new one after unshare(CLONE_NEWPID).
func (t *Task) PIDNamespaceForChildren() *PIDNamespace {
	t.k.mu.Lock()
	defer t.k.mu.Unlock()
	return t.childPIDNSLocked()
}

func (t *Task) childPIDNSLocked() *PIDNamespace {
	if t.pidnsChildren != nil {
		return t.pidnsChildren
	}
	return t.pidns
}

// newChildPIDNamespace makes the namespace unshare(CLONE_NEWPID) gives
// t's children: EINVAL if t already did (Linux's copy_pid_ns).
func (t *Task) newChildPIDNamespace(owner *auth.UserNamespace) (*PIDNamespace, error) {
	k := t.k
	k.mu.Lock()
	defer k.mu.Unlock()
	if t.childPIDNSLocked() != t.pidns {
		return nil, errEINVAL
	}
	return t.pidns.newChildOwnedLocked(owner)
}

// Owner returns the user namespace that owns ns.
func (ns *PIDNamespace) Owner() *auth.UserNamespace { return ns.owner }

// IDOfTaskLocked returns t's id in ns, 0 if not visible there.
func (ns *PIDNamespace) IDOfTaskLocked(t *Task) ThreadID { return ns.idIn(t.pidns, t.ids) }

// IDOfTask returns t's id (thread id) in ns, 0 if not visible there.
func (ns *PIDNamespace) IDOfTask(t *Task) ThreadID {
	ns.k.mu.Lock()
	defer ns.k.mu.Unlock()
	return ns.IDOfTaskLocked(t)
}

// idOfTGLocked returns tg's id in ns, 0 if not visible there; it reads
// only what never changes, so callers need not hold k.mu (IDOfThreadGroup).
func (ns *PIDNamespace) idOfTGLocked(tg *ThreadGroup) ThreadID {
	if tg == nil {
		return 0
	}
	return ns.idIn(tg.pidns, tg.ids)
}

// IDOfThreadGroup returns tg's id (process id) in ns, 0 if not visible.
// A process's namespace and ids and the namespace tree never change, so
// getpid takes no lock.
func (ns *PIDNamespace) IDOfThreadGroup(tg *ThreadGroup) ThreadID {
	return ns.idOfTGLocked(tg)
}

// idOfPGLocked returns pg's id in ns, 0 if not visible there.
func (ns *PIDNamespace) idOfPGLocked(pg *ProcessGroup) ThreadID {
	if pg == nil {
		return 0
	}
	return ns.idIn(pg.pidns, pg.ids)
}

// idOfSessionLocked returns s's id in ns, 0 if not visible there.
func (ns *PIDNamespace) idOfSessionLocked(s *Session) ThreadID {
	if s == nil {
		return 0
	}
	return ns.idIn(s.pidns, s.ids)
}

// ProcessGroupIDOf returns the id in ns of tg's process group.
func (ns *PIDNamespace) ProcessGroupIDOf(tg *ThreadGroup) ThreadID {
	ns.k.mu.Lock()
	defer ns.k.mu.Unlock()
	return ns.idOfPGLocked(tg.pg)
}

// SessionIDOf returns the id in ns of tg's session.
func (ns *PIDNamespace) SessionIDOf(tg *ThreadGroup) ThreadID {
	ns.k.mu.Lock()
	defer ns.k.mu.Unlock()
	if tg.pg == nil {
		return 0
	}
	return ns.idOfSessionLocked(tg.pg.session)
}

// ParentIDOf returns the id in ns of tg's parent, 0 for none or one not
// visible in ns (the parent of a namespace's init).
func (ns *PIDNamespace) ParentIDOf(tg *ThreadGroup) ThreadID {
	ns.k.mu.Lock()
	defer ns.k.mu.Unlock()
	return ns.idOfTGLocked(tg.parent)
}

// TaskWithID returns the task with id tid in ns, or nil.
func (ns *PIDNamespace) TaskWithID(tid ThreadID) *Task {
	ns.k.mu.Lock()
	defer ns.k.mu.Unlock()
	return ns.tasks[tid]
}

// ThreadGroupWithID returns the thread group with id tgid in ns, or nil.
func (ns *PIDNamespace) ThreadGroupWithID(tgid ThreadID) *ThreadGroup {
	ns.k.mu.Lock()
	defer ns.k.mu.Unlock()
	return ns.tgs[tgid]
}

// ThreadGroups returns the live thread groups visible in ns.
func (ns *PIDNamespace) ThreadGroups() []*ThreadGroup {
	ns.k.mu.Lock()
	defer ns.k.mu.Unlock()
	out := make([]*ThreadGroup, 0, len(ns.tgs))
	for _, tg := range ns.tgs {
		out = append(out, tg)
	}
	return out
}

// NSIDs returns t's ids from its own namespace's up to the root's, as
// /proc/[pid]/status's NSpid line lists them, starting at the level of
// ns (the namespace of the /proc that shows them).
func (ns *PIDNamespace) NSIDs(t *Task) []ThreadID {
	ns.k.mu.Lock()
	defer ns.k.mu.Unlock()
	if !ns.contains(t.pidns) {
		return nil
	}
	return append([]ThreadID(nil), t.ids[ns.level:]...)
}

// NSTGIDs is NSIDs for t's process.
func (ns *PIDNamespace) NSTGIDs(t *Task) []ThreadID {
	ns.k.mu.Lock()
	defer ns.k.mu.Unlock()
	tg := t.tg
	if !ns.contains(tg.pidns) {
		return nil
	}
	return append([]ThreadID(nil), tg.ids[ns.level:]...)
}

// isNSInitLocked reports whether tg is the init of its namespace.
func (tg *ThreadGroup) isNSInitLocked() bool {
	return tg.pidns != nil && tg.pidns.init == tg
}

// Pid, Tid, Ppid, Pgid and Sid are the ids the task's own namespace gives
// (getpid(2) and friends).

// Pid returns t's process id in its namespace (getpid).
func (t *Task) Pid() ThreadID { return t.PIDNamespace().IDOfThreadGroup(t.tg) }

// Tid returns t's thread id in its namespace (gettid).
func (t *Task) Tid() ThreadID { return t.PIDNamespace().IDOfTask(t) }

// Ppid returns t's parent's process id in its namespace (getppid): 0 for
// a namespace's init.
func (t *Task) Ppid() ThreadID { return t.PIDNamespace().ParentIDOf(t.tg) }

// LookupTask returns the task with id tid in t's namespace, or nil.
func (t *Task) LookupTask(tid ThreadID) *Task { return t.PIDNamespace().TaskWithID(tid) }

// LookupThreadGroup returns the process with id pid in t's namespace, or
// nil.
func (t *Task) LookupThreadGroup(pid ThreadID) *ThreadGroup {
	return t.PIDNamespace().ThreadGroupWithID(pid)
}

var _ proc.NamespaceTask = procTask{}

// Namespace implements proc.NamespaceTask: the user, UTS, IPC and PID
// namespaces are the task's own; the other kinds are the sandbox's.
func (p procTask) Namespace(name string) (uint64, any, bool) {
	t := p.leader()
	if t == nil {
		return 0, nil, false
	}
	switch name {
	case "user":
		ns := t.UserNamespace()
		return ns.Inode(), ns, true
	case "uts":
		ns := t.UTSNamespace()
		return ns.Inode(), ns, true
	case "ipc":
		ns := t.IPCNamespace()
		return ns.Inode(), ns, true
	case "pid":
		ns := t.PIDNamespace()
		return ns.Inode(), ns, true
	case "mnt":
		return t.mountNamespaceForProc()
	case "pid_for_children":
		// A namespace made by unshare cannot be named until its init
		// exists (Linux's pidns_for_children_get).
		k := t.k
		k.mu.Lock()
		ns := t.childPIDNSLocked()
		named := ns == t.pidns || ns.init != nil || ns.initExited
		k.mu.Unlock()
		if !named {
			return 0, ns, true
		}
		return ns.Inode(), ns, true
	}
	return 0, nil, false
}

// RootThreadGroupID returns t's process id in the root namespace, the
// kernel-wide id objects that outlive a syscall keep (socket credentials,
// SysV IPC pids) and translate for each reader with PIDFromRoot.
func (t *Task) RootThreadGroupID() int32 { return int32(t.tg.id) }

// PIDToRoot returns the root id of the thread or process that t's
// namespace numbers pid, 0 if there is none (Linux's find_vpid for a
// task).
func (t *Task) PIDToRoot(pid int32) int32 {
	if pid <= 0 {
		return 0
	}
	k := t.k
	k.mu.Lock()
	defer k.mu.Unlock()
	ns := t.PIDNamespace()
	if o := ns.tasks[ThreadID(pid)]; o != nil {
		return int32(o.tid)
	}
	if tg := ns.tgs[ThreadID(pid)]; tg != nil {
		return int32(tg.id)
	}
	return 0
}

// PIDFromRoot returns the id, in t's namespace, of the process or thread
// with root id pid: 0 when it is not visible there. An id whose owner has
// gone reads as itself in the root namespace and as 0 elsewhere (Linux
// keeps the struct pid, and so the number, of a dead sender; the Sentry
// keeps only the root id).
func (t *Task) PIDFromRoot(pid int32) int32 {
	// A task's namespace and a namespace's parent never change: the root
	// namespace's readers (most) need not take Kernel.mu.
	ns := t.PIDNamespace()
	if pid <= 0 || ns.parent == nil {
		return pid
	}
	k := t.k
	k.mu.Lock()
	defer k.mu.Unlock()
	if tg := k.threadGroups[ThreadID(pid)]; tg != nil {
		return int32(ns.idOfTGLocked(tg))
	}
	if o := k.tasks[ThreadID(pid)]; o != nil {
		return int32(ns.IDOfTaskLocked(o))
	}
	return 0
}

// ProcessRef is a process as objects that outlive it record it (SysV
// shared memory pids): its ids in its namespace and each ancestor, which
// stay readable once it has gone, as Linux's struct pid.
type ProcessRef struct {
	ns  *PIDNamespace
	ids []ThreadID
}

var _ shm.PID = ProcessRef{}

// ProcessRef returns t's process as a ProcessRef.
func (t *Task) ProcessRef() ProcessRef {
	ns := t.tg.pidns
	if ns == nil {
		ns = t.k.rootPID
	}
	return ProcessRef{ns: ns, ids: t.tg.ids}
}

// IDFor implements shm.PID: the process's id in the namespace of reader, a
// *Task (0 if not visible there); the root namespace's for other readers.
// Both the namespace tree and the ids are immutable: no lock is needed.
func (r ProcessRef) IDFor(reader any) int32 {
	if len(r.ids) == 0 {
		return 0
	}
	t, ok := reader.(*Task)
	if !ok {
		return int32(r.ids[0])
	}
	return int32(t.PIDNamespace().idIn(r.ns, r.ids))
}

// PIDFromRoot returns the id, in the namespace of tg, of the live process
// with root id pid: 0 when it is not visible there (a message queue
// notification's sender, as Linux's task_tgid_nr_ns for the owner's
// namespace).
func (tg *ThreadGroup) PIDFromRoot(pid int32) int32 {
	ns := tg.pidns
	if ns == nil || ns.parent == nil {
		return pid
	}
	k := tg.k
	k.mu.Lock()
	defer k.mu.Unlock()
	if o := k.threadGroups[ThreadID(pid)]; o != nil {
		return int32(ns.idOfTGLocked(o))
	}
	return 0
}
