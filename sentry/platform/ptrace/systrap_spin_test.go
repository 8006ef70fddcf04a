package ptrace

import (
	"testing"
	"time"

	"github.com/moat-sandbox/moat/sentry/platform"
)

// noSpinByte reads the handler's commNoSpin byte of nr in w's region.
func noSpinByte(s *systrap, w *worker, nr int) byte {
	return s.slot(w.region)[commNoSpin+nr]
}

// TestSystrapNoSpinLearnt checks that the Sentry marks a system call it
// serves slowly (it blocked) so that the handler sleeps at once on it,
// unmarks it once it is served fast again, that the trap still works
// either way, and that a worker of another process starts with nothing
// marked: the application can read its region.
func TestSystrapNoSpinLearnt(t *testing.T) {
	// loop: mov eax, 39; syscall; jmp loop
	code := []byte{0xb8, 39, 0, 0, 0, 0x0f, 0x05, 0xeb, 0xf7}
	// Fast and slow far apart, for a loaded machine and -race.
	old := noSpinAfter
	noSpinAfter = 5 * time.Millisecond
	defer func() { noSpinAfter = old }()
	const slow = 20 * time.Millisecond
	p, _ := newSystrapPlatform(t, code)
	as := newSystrapAS(t, p)
	defer as.Release()
	pc := p.NewContext()
	defer pc.Release()
	c := pc.(*trapContext)
	regs := InitialRegisters()
	regs.Rip = 0x100000
	step := func(serve time.Duration) {
		t.Helper()
		r, _, err := c.Switch(as, &regs)
		if err != nil || r != platform.SwitchSyscall || regs.Orig_rax != 39 {
			t.Fatalf("got %v %v, syscall %d, want getpid", r, err, regs.Orig_rax)
		}
		time.Sleep(serve)
	}
	for i := 0; i < 5; i++ {
		step(0)
	}
	if b := noSpinByte(p.sys, c.w, 39); b != 0 {
		t.Fatalf("getpid served at once is marked as blocking (%d)", b)
	}
	for i := 0; i < 4; i++ {
		step(slow)
	}
	step(0) // learns from the last slow one
	if b := noSpinByte(p.sys, c.w, 39); b != 1 {
		t.Fatalf("getpid served slowly is not marked as blocking (%d)", b)
	}

	// A worker made now, in another address space, starts unmarked.
	as2 := newSystrapAS(t, p)
	defer as2.Release()
	pc2 := p.NewContext()
	defer pc2.Release()
	c2 := pc2.(*trapContext)
	regs2 := InitialRegisters()
	regs2.Rip = 0x100000
	if r, _, err := c2.Switch(as2, &regs2); err != nil || r != platform.SwitchSyscall || regs2.Orig_rax != 39 {
		t.Fatalf("new worker: got %v %v, syscall %d", r, err, regs2.Orig_rax)
	}
	for nr := 0; nr < noSpinCalls; nr++ {
		if b := noSpinByte(p.sys, c2.w, nr); b != 0 {
			t.Errorf("a new worker of another process starts with system call %d marked (%d)", nr, b)
		}
	}

	for i := 0; i < 6; i++ {
		step(0)
	}
	if b := noSpinByte(p.sys, c.w, 39); b != 0 {
		t.Fatalf("getpid served fast again is still marked (%d)", b)
	}
}

// TestSystrapSeedMode checks that a new worker starts with the way of
// waiting other workers chose, rather than measuring from scratch.
func TestSystrapSeedMode(t *testing.T) {
	p, _ := newSystrapPlatform(t, []byte{0xb8, 39, 0, 0, 0, 0x0f, 0x05, 0xeb, 0xf7})
	for _, mode := range []int32{modeSleep, modeSpin} {
		p.sys.mode.Store(mode)
		as := newSystrapAS(t, p)
		pc := p.NewContext()
		c := pc.(*trapContext)
		regs := InitialRegisters()
		regs.Rip = 0x100000
		if _, _, err := c.Switch(as, &regs); err != nil {
			t.Fatal(err)
		}
		if c.w.phase != phaseRun || c.w.spinning != (mode == modeSpin) {
			t.Errorf("mode %d: new worker in phase %d, spinning %v", mode, c.w.phase, c.w.spinning)
		}
		pc.Release()
		as.Release()
	}
}

// TestSystrapAdaptCutsLosingSpin checks the measurement: a spinning window
// that has already taken longer than the sleeping one ends at once with
// sleeping chosen, and one that ran its course faster chooses spinning.
func TestSystrapAdaptCutsLosingSpin(t *testing.T) {
	p, _ := newSystrapPlatform(t, []byte{0xb8, 39, 0, 0, 0, 0x0f, 0x05, 0xeb, 0xf7})
	as := newSystrapAS(t, p)
	defer as.Release()
	pc := p.NewContext()
	defer pc.Release()
	c := pc.(*trapContext)
	regs := InitialRegisters()
	regs.Rip = 0x100000
	if _, _, err := c.Switch(as, &regs); err != nil {
		t.Fatal(err)
	}
	w := c.w
	for _, tc := range []struct {
		name      string
		sleepCost time.Duration
		ago       time.Duration
		handoffs  int
		wantSpin  bool
		wantPhase int
	}{
		{"losing spin cut short", time.Millisecond, 2 * time.Millisecond, 3, false, phaseRun},
		{"spin still measuring", time.Hour, 0, 3, true, phaseProbeSpin},
		{"winning spin", time.Hour, 0, spinWindow - 1, true, phaseRun},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w.startPhase(phaseProbeSpin, true)
			w.sleepCost = tc.sleepCost
			w.phaseStart = time.Now().Add(-tc.ago)
			w.handoffs = tc.handoffs
			w.adapt()
			if w.phase != tc.wantPhase || w.spinning != tc.wantSpin {
				t.Errorf("phase %d spinning %v, want phase %d spinning %v", w.phase, w.spinning, tc.wantPhase, tc.wantSpin)
			}
		})
	}
}
