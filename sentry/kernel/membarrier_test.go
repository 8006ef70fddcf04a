package kernel

import (
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/mm"
)

func TestMembarrierRegistrations(t *testing.T) {
	k, mf := newNSTestKernel(t)
	task := k.NewTestTask(nil, mm.New(fakePlatform{}, mf), auth.NewRootCredentials())
	steps := []struct {
		name string
		cmd  uint32
		want uint32
		err  error
	}{
		{"query", MEMBARRIER_CMD_QUERY, MembarrierSupported, nil},
		{"none yet", MEMBARRIER_CMD_GET_REGISTRATIONS, 0, nil},
		{"private before register", MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, unix.EPERM},
		{"sync core before register", MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, unix.EPERM},
		{"global", MEMBARRIER_CMD_GLOBAL, 0, nil},
		{"global expedited", MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, nil},
		{"register private", MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, nil},
		{"private", MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, nil},
		{"sync core still unregistered", MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, unix.EPERM},
		{"register global", MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, nil},
		{"registrations", MEMBARRIER_CMD_GET_REGISTRATIONS,
			MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED | MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, nil},
		{"rseq", MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, 0, unix.EINVAL},
		{"unknown", 3, 0, unix.EINVAL},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			got, err := task.Membarrier(s.cmd)
			if got != s.want || err != s.err {
				t.Fatalf("Membarrier(%#x) = %#x, %v; want %#x, %v", s.cmd, got, err, s.want, s.err)
			}
		})
	}
	child := mm.New(fakePlatform{}, mf)
	membarrierForked(task.MemoryManager(), child)
	if got := membarrierRegistrations(child); got != MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED|MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED {
		t.Errorf("forked registrations %#x", got)
	}
	if got := membarrierRegistrations(mm.New(fakePlatform{}, mf)); got != 0 {
		t.Errorf("new address space has registrations %#x", got)
	}
}

// appLoop stands for a task's run loop: it is in application code
// (runningSince set) until its context is interrupted, then leaves and
// goes back. leaves counts the exits.
func appLoop(o *Task, ctx *fakeContext, stop chan struct{}, leaves *atomic.Int64, seq *atomic.Int64, wg *sync.WaitGroup) {
	defer wg.Done()
	for {
		o.runningSince.Store(seq.Add(1))
		select {
		case <-ctx.intr:
		case <-stop:
			o.runningSince.Store(0)
			return
		}
		leaves.Add(1)
		o.runningSince.Store(0)
	}
}

func TestMembarrierInterruptsRunningTasks(t *testing.T) {
	k, mf := newNSTestKernel(t)
	shared := mm.New(fakePlatform{}, mf)
	caller := k.NewTestTask(nil, shared, auth.NewRootCredentials())
	sibling := k.NewTestTask(caller, shared, auth.NewRootCredentials()) // CLONE_VM
	stranger := k.NewTestTask(caller, mm.New(fakePlatform{}, mf), auth.NewRootCredentials())
	if _, err := caller.Membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED); err != nil {
		t.Fatal(err)
	}
	var seq atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var sibLeaves, strLeaves atomic.Int64
	for _, x := range []struct {
		o      *Task
		leaves *atomic.Int64
	}{{sibling, &sibLeaves}, {stranger, &strLeaves}} {
		ctx := &fakeContext{intr: make(chan struct{}, 1)}
		x.o.pctx = ctx
		wg.Add(1)
		go appLoop(x.o, ctx, stop, x.leaves, &seq, &wg)
	}
	defer func() {
		close(stop)
		wg.Wait()
	}()
	for sibling.runningSince.Load() == 0 || stranger.runningSince.Load() == 0 {
	}
	for i := 1; i <= 20; i++ {
		if _, err := caller.Membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED); err != nil {
			t.Fatal(err)
		}
		if got := sibLeaves.Load(); got < int64(i) {
			t.Fatalf("barrier %d returned with the sibling left application code %d times", i, got)
		}
	}
	if got := strLeaves.Load(); got != 0 {
		t.Errorf("private barrier interrupted another address space's task %d times", got)
	}
	before := strLeaves.Load()
	if _, err := caller.Membarrier(MEMBARRIER_CMD_GLOBAL); err != nil {
		t.Fatal(err)
	}
	if strLeaves.Load() == before {
		t.Error("global barrier did not interrupt the other address space")
	}
}
