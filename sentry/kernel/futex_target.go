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
