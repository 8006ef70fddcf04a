package kernel

// membarrier(2): memory barriers on the threads of other CPUs. Linux
// sends an IPI to every CPU running a thread concerned; the interrupt and
// the return to user mode order that thread's memory accesses around the
// caller's. Moat's application threads run in ptrace stubs, so the Sentry
// does the same by interrupting every concerned task that is in
// application code (Task.runningSince is set) through its platform
// context, and waiting until each has left application code once: the
// host kernel's trap and the ptrace resume are full barriers and, on
// x86, serializing (SYNC_CORE).
//
// Registrations belong to an address space (Linux's mm->membarrier_state):
// they are inherited by fork, dropped by exec (a new address space), and
// kept in membarrierRegs, keyed weakly so an address space that goes
// away takes its entry with it.

import (
	"runtime"
	"sync"
	"time"
	"weak"

	"github.com/moat-sandbox/moat/sentry/mm"
)

// membarrier commands (include/uapi/linux/membarrier.h).
const (
	MEMBARRIER_CMD_QUERY                                = 0
	MEMBARRIER_CMD_GLOBAL                               = 1 << 0
	MEMBARRIER_CMD_GLOBAL_EXPEDITED                     = 1 << 1
	MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED            = 1 << 2
	MEMBARRIER_CMD_PRIVATE_EXPEDITED                    = 1 << 3
	MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED           = 1 << 4
	MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE          = 1 << 5
	MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE = 1 << 6
	MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ               = 1 << 7
	MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ      = 1 << 8
	MEMBARRIER_CMD_GET_REGISTRATIONS                    = 1 << 9

	// MEMBARRIER_CMD_FLAG_CPU is the one flag, of the RSEQ command.
	MEMBARRIER_CMD_FLAG_CPU = 1 << 0
)

// MembarrierSupported is what MEMBARRIER_CMD_QUERY answers: every command
// but the RSEQ pair, since Moat has no rseq(2).
const MembarrierSupported = MEMBARRIER_CMD_GLOBAL | MEMBARRIER_CMD_GLOBAL_EXPEDITED |
	MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED | MEMBARRIER_CMD_PRIVATE_EXPEDITED |
	MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED | MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE |
	MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE | MEMBARRIER_CMD_GET_REGISTRATIONS

// membarrierRegs maps an address space to the REGISTER_* commands done
// on it. Leaf lock: nothing is taken while holding mu.
var membarrierRegs struct {
	mu sync.Mutex
	m  map[weak.Pointer[mm.MemoryManager]]uint32
}

func membarrierRegistrations(m *mm.MemoryManager) uint32 {
	membarrierRegs.mu.Lock()
	defer membarrierRegs.mu.Unlock()
	return membarrierRegs.m[weak.Make(m)]
}

func membarrierRegister(m *mm.MemoryManager, cmd uint32) {
	key := weak.Make(m)
	membarrierRegs.mu.Lock()
	defer membarrierRegs.mu.Unlock()
	if membarrierRegs.m == nil {
		membarrierRegs.m = make(map[weak.Pointer[mm.MemoryManager]]uint32)
	}
	old, ok := membarrierRegs.m[key]
	membarrierRegs.m[key] = old | cmd
	if !ok {
		runtime.AddCleanup(m, func(k weak.Pointer[mm.MemoryManager]) {
			membarrierRegs.mu.Lock()
			delete(membarrierRegs.m, k)
			membarrierRegs.mu.Unlock()
		}, key)
	}
}

// membarrierForked gives child, fork's copy of parent, parent's
// registrations (Linux copies the whole mm).
func membarrierForked(parent, child *mm.MemoryManager) {
	if r := membarrierRegistrations(parent); r != 0 {
		membarrierRegister(child, r)
	}
}

// Membarrier implements membarrier(2)'s commands (flags and cpu already
// checked by the caller): the registrations, or a barrier.
func (t *Task) Membarrier(cmd uint32) (uint32, error) {
	m := t.MemoryManager()
	switch cmd {
	case MEMBARRIER_CMD_QUERY:
		return MembarrierSupported, nil
	case MEMBARRIER_CMD_GET_REGISTRATIONS:
		return membarrierRegistrations(m), nil
	case MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED,
		MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE:
		membarrierRegister(m, cmd)
		return 0, nil
	case MEMBARRIER_CMD_GLOBAL:
		// synchronize_rcu: every thread of the system passes a
		// quiescent state.
		t.membarrierSync(func(*Task) bool { return true })
		return 0, nil
	case MEMBARRIER_CMD_GLOBAL_EXPEDITED:
		// The threads of address spaces registered for it.
		t.membarrierSync(func(o *Task) bool {
			return membarrierRegistrations(o.MemoryManager())&MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED != 0
		})
		return 0, nil
	case MEMBARRIER_CMD_PRIVATE_EXPEDITED, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE:
		if membarrierRegistrations(m)&(cmd<<1) == 0 {
			return 0, errEPERM
		}
		t.membarrierSync(func(o *Task) bool { return o.MemoryManager() == m })
		return 0, nil
	case MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ:
		// Linux without CONFIG_RSEQ.
		return 0, errEINVAL
	}
	return 0, errEINVAL
}

// membarrierWait bounds the wait for one task to leave application code;
// a task that takes longer is stuck on the host, and the barrier gives up
// on it rather than hang its caller.
const membarrierWait = 5 * time.Second

// membarrierSync interrupts every task but t that match selects and is in
// application code, and waits until each has left it once.
func (t *Task) membarrierSync(match func(*Task) bool) {
	type running struct {
		o     *Task
		since int64
	}
	var rs []running
	k := t.k
	k.mu.Lock()
	for _, o := range k.tasks {
		if o == t || o.pctx == nil {
			continue
		}
		if since := o.runningSince.Load(); since != 0 && match(o) {
			rs = append(rs, running{o, since})
		}
	}
	k.mu.Unlock()
	for _, r := range rs {
		r.o.pctx.Interrupt()
	}
	deadline := time.Now().Add(membarrierWait)
	for _, r := range rs {
		for d := time.Microsecond; r.o.runningSince.Load() == r.since; d = min(2*d, time.Millisecond) {
			if time.Now().After(deadline) {
				k.Log.Info("membarrier: a thread did not leave application code", "tid", r.o.tid)
				break
			}
			time.Sleep(d)
		}
	}
}
