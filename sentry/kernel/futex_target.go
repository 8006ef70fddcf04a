package kernel

import (
	"github.com/moat-sandbox/moat/sentry/kernel/futex"
	"github.com/moat-sandbox/moat/sentry/mm"
)

// futexTarget adapts an address space to the futex manager.
type futexTarget struct {
	*mm.MemoryManager
}

func (t *Task) futexTarget() futexTarget { return futexTarget{t.MemoryManager()} }

// FutexTarget returns the task's address space as a futex target.
func (t *Task) FutexTarget() futex.Target { return t.futexTarget() }

// memFileKey names the memory file in shared futex keys.
const memFileKey = 1

func (f futexTarget) SharedKey(addr uintptr) (futex.Key, error) {
	shared, off, err := f.SharedFutexKey(addr)
	if err != nil {
		return futex.Key{}, err
	}
	if shared {
		return futex.Key{Kind: futex.KindShared, A: memFileKey, B: off}, nil
	}
	return futex.Key{Kind: futex.KindSharedPrivateMapping, A: f.ID, B: uint64(addr)}, nil
}

func (f futexTarget) PrivateKey(addr uintptr) futex.Key {
	return futex.Key{Kind: futex.KindPrivate, A: f.ID, B: uint64(addr)}
}

func (f futexTarget) CopyInBytes(addr uintptr, dst []byte) (int, error) {
	return f.CopyIn(addr, dst)
}

// futexNS is a nested PID namespace as the futex manager sees it: the
// manager's thread ids are root ids. Its methods take Kernel.mu, which the
// futex manager's bucket locks come before.
type futexNS struct{ ns *PIDNamespace }

var _ futex.Namespace = futexNS{}

// ManagerID implements futex.Namespace.
func (f futexNS) ManagerID(tid uint32) uint32 {
	f.ns.k.mu.Lock()
	defer f.ns.k.mu.Unlock()
	if t := f.ns.tasks[ThreadID(tid)]; t != nil {
		return uint32(t.tid)
	}
	return 0
}

// TID implements futex.Namespace.
func (f futexNS) TID(id uint32) uint32 {
	f.ns.k.mu.Lock()
	defer f.ns.k.mu.Unlock()
	if t := f.ns.k.tasks[ThreadID(id)]; t != nil {
		return uint32(f.ns.IDOfTaskLocked(t))
	}
	return 0
}

// FutexCaller returns t as PI futex operations name it: its root id, and
// its PID namespace, whose ids the futex words hold (Linux's
// task_pid_vnr).
func (t *Task) FutexCaller() futex.Caller {
	ns := t.PIDNamespace()
	if ns.parent == nil {
		return futex.Self(uint32(t.ThreadID()))
	}
	return futex.Caller{ID: uint32(t.ThreadID()), NS: futexNS{ns}}
}
