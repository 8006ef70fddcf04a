package ptrace

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/moat-sandbox/moat/sentry/platform"
)

// benchmarkLifecycle measures what a short process costs the platform: an
// address space, a context's first syscalls and a fault in it, then the
// address space released before the context, as an exit or exec does. It
// reports the median of each step.
func benchmarkLifecycle(b *testing.B, newPlat func(int) (*Platform, error)) {
	p, _ := newPlatformWith(b, newPlat, testCode)
	names := []string{"new", "first", "second", "fault", "map", "last", "asrel", "ctxrel"}
	samples := make([][]time.Duration, len(names))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var ts []time.Time
		mark := func() { ts = append(ts, time.Now()) }
		mark()
		pas, err := p.NewAddressSpace()
		if err != nil {
			b.Fatal(err)
		}
		if err := pas.MapFile(0x100000, 0, 0x1000, platform.Read|platform.Exec); err != nil {
			b.Fatal(err)
		}
		mark()
		c := p.NewContext()
		regs := InitialRegisters()
		regs.Rip = 0x100000
		for j := 0; j < 2; j++ {
			if r, _, err := c.Switch(pas, &regs); err != nil || r != platform.SwitchSyscall {
				b.Fatal(r, err)
			}
			mark()
		}
		r, info, err := c.Switch(pas, &regs)
		if err != nil || r != platform.SwitchFault {
			b.Fatal(r, err)
		}
		mark()
		if err := pas.MapFile(uintptr(info.Addr)&^0xfff, 0x1000, 0x1000, platform.Read|platform.Write); err != nil {
			b.Fatal(err)
		}
		mark()
		if r, _, err := c.Switch(pas, &regs); err != nil || r != platform.SwitchFault {
			b.Fatal(r, err)
		}
		mark()
		pas.Release()
		mark()
		c.Release()
		mark()
		for k := range names {
			samples[k] = append(samples[k], ts[k+1].Sub(ts[k]))
		}
	}
	for k, name := range names {
		slices.Sort(samples[k])
		b.ReportMetric(float64(samples[k][len(samples[k])/2])/1e3, name+"-med-us")
	}
}

func BenchmarkLifecycle(b *testing.B)        { benchmarkLifecycle(b, New) }
func BenchmarkSystrapLifecycle(b *testing.B) { benchmarkLifecycle(b, NewSystrap) }

// BenchmarkMasterMapFile measures a MapFile done by the master.
func BenchmarkMasterMapFile(b *testing.B) {
	p, _ := newPlatformWith(b, NewSystrap, testCode)
	pas, _ := p.NewAddressSpace()
	defer pas.Release()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := pas.MapFile(0x200000, 0x1000, 0x1000, platform.Read); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHelperNew measures making a helper thread, a MapFile through
// it and its end: against BenchmarkMasterMapFile, what helperAfter weighs.
func BenchmarkHelperNew(b *testing.B) {
	p, _ := newPlatformWith(b, NewSystrap, testCode)
	pas, _ := p.NewAddressSpace()
	defer pas.Release()
	as := pas.(*addressSpace)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var tNew, tMap, tDrop time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		h, err := as.newThread()
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := pas.MapFile(0x200000, 0x1000, 0x1000, platform.Read); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		as.dropThread(h)
		t3 := time.Now()
		tNew += t1.Sub(t0)
		tMap += t2.Sub(t1)
		tDrop += t3.Sub(t2)
	}
	n := time.Duration(b.N)
	b.ReportMetric(float64(tNew/n)/1e3, "new-us")
	b.ReportMetric(float64(tMap/n)/1e3, "map-us")
	b.ReportMetric(float64(tDrop/n)/1e3, "drop-us")
}

// benchmarkPingPong models two processes handing a byte back and forth
// through a pipe: each runs "write; read" in a loop, and the Sentry side
// of a read blocks until the peer's write (a channel here).
func benchmarkPingPong(b *testing.B, newPlat func(int) (*Platform, error)) {
	// loop: mov eax, 1; syscall; xor eax, eax; syscall; jmp loop
	code := []byte{0xb8, 1, 0, 0, 0, 0x0f, 0x05, 0x31, 0xc0, 0x0f, 0x05, 0xeb, 0xf3}
	p, _ := newPlatformWith(b, newPlat, code)
	var ases [2]platform.AddressSpace
	for i := range ases {
		as, err := p.NewAddressSpace()
		if err != nil {
			b.Fatal(err)
		}
		as.MapFile(0x100000, 0, 0x1000, platform.Read|platform.Exec)
		ases[i] = as
		defer as.Release()
	}
	chans := [2]chan struct{}{make(chan struct{}, 1), make(chan struct{}, 1)}
	n := b.N
	done := make(chan error, 2)
	b.ResetTimer()
	for side := 0; side < 2; side++ {
		go func() {
			c := p.NewContext()
			defer c.Release()
			regs := InitialRegisters()
			regs.Rip = 0x100000
			if side == 1 {
				// B starts in its read: skip to the second syscall.
				regs.Rip = 0x100007
			}
			for i := 0; i < n; {
				if _, _, err := c.Switch(ases[side], &regs); err != nil {
					done <- err
					return
				}
				switch regs.Orig_rax {
				case 1:
					chans[1-side] <- struct{}{}
					if side == 1 {
						i++
					}
				case 0:
					<-chans[side]
					if side == 0 {
						i++
					}
				}
			}
			done <- nil
		}()
	}
	for i := 0; i < 2; i++ {
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPingPong(b *testing.B)        { benchmarkPingPong(b, New) }
func BenchmarkSystrapPingPong(b *testing.B) { benchmarkPingPong(b, NewSystrap) }

// BenchmarkSystrapPingPongModes compares the adaptive handoff with always
// spinning and never spinning on the ping-pong.
func BenchmarkSystrapPingPongModes(b *testing.B) {
	for _, mode := range []string{"", "spin", "sleep"} {
		name := mode
		if name == "" {
			name = "adaptive"
		}
		b.Run(name, func(b *testing.B) {
			old := spinFixed
			spinFixed = mode
			defer func() { spinFixed = old }()
			benchmarkPingPong(b, NewSystrap)
		})
	}
}

// BenchmarkSystrapLifecycleHelper compares values of helperAfter.
func BenchmarkSystrapLifecycleHelper(b *testing.B) {
	for _, n := range []int{1, 2, 3} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			old := helperAfter
			helperAfter = n
			defer func() { helperAfter = old }()
			benchmarkLifecycle(b, NewSystrap)
		})
	}
}

// BenchmarkSystrapPingPongSleepSpin compares sleeping at once with a short
// spin first, both sides following the same CPU.
func BenchmarkSystrapPingPongSleepSpin(b *testing.B) {
	for _, n := range []int{0, 50} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			oldMode, oldShort := spinFixed, spinShort
			spinFixed, spinShort = "sleep", n
			defer func() { spinFixed, spinShort = oldMode, oldShort }()
			benchmarkPingPong(b, NewSystrap)
		})
	}
}

// BenchmarkSystrapMakeWorker measures making an address space's first
// worker (the refill makes one per address space).
func BenchmarkSystrapMakeWorker(b *testing.B) {
	p, _ := newPlatformWith(b, NewSystrap, testCode)
	var tAS, tW time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		as, err := p.newAddressSpace()
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		w, err := p.sys.makeWorker(as)
		if err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		w.release()
		as.Release()
		tAS += t1.Sub(t0)
		tW += t2.Sub(t1)
	}
	n := time.Duration(b.N)
	b.ReportMetric(float64(tAS/n)/1e3, "as-us")
	b.ReportMetric(float64(tW/n)/1e3, "worker-us")
}
