package vdso

import (
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// servedClocks are the clocks the vDSO answers from the vvar page.
var servedClocks = []struct {
	name   string
	id     int32
	coarse bool
}{
	{"REALTIME", unix.CLOCK_REALTIME, false},
	{"MONOTONIC", unix.CLOCK_MONOTONIC, false},
	{"MONOTONIC_RAW", unix.CLOCK_MONOTONIC_RAW, false},
	{"REALTIME_COARSE", unix.CLOCK_REALTIME_COARSE, true},
	{"MONOTONIC_COARSE", unix.CLOCK_MONOTONIC_COARSE, true},
	{"BOOTTIME", unix.CLOCK_BOOTTIME, false},
	{"TAI", unix.CLOCK_TAI, false},
}

func hostTime(t *testing.T, id int32) int64 {
	t.Helper()
	var ts unix.Timespec
	if err := unix.ClockGettime(id, &ts); err != nil {
		t.Fatalf("host clock_gettime(%d): %v", id, err)
	}
	return ts.Nano()
}

// newMappedClock returns a real Clock and a mapped vDSO whose page it has
// published into.
func newMappedClock(t *testing.T) (*Clock, *mappedVDSO) {
	t.Helper()
	c, err := NewClock()
	if err != nil {
		t.Fatalf("NewClock: %v", err)
	}
	m := mapVDSO(t)
	// The first Update finishes the TSC's calibration.
	c.Update(m.vvar)
	if !c.UsesTSC() {
		t.Skip("the TSC is not usable on this machine; the vDSO always makes syscalls")
	}
	return c, m
}

func TestVDSOClockGettimeMatchesHost(t *testing.T) {
	c, m := newMappedClock(t)
	// A few updates, as the Sentry makes them, to let the clocks settle.
	for range 5 {
		time.Sleep(10 * time.Millisecond)
		c.Update(m.vvar)
	}
	for _, tc := range servedClocks {
		t.Run(tc.name, func(t *testing.T) {
			// A coarse clock is its fine clock rounded down to a tick
			// (the host's ticks at other instants, so compare with the
			// host's fine clock).
			ref := tc.id
			switch ref {
			case unix.CLOCK_REALTIME_COARSE:
				ref = unix.CLOCK_REALTIME
			case unix.CLOCK_MONOTONIC_COARSE:
				ref = unix.CLOCK_MONOTONIC
			}
			before := hostTime(t, ref)
			ret, got := m.clockGettime(t, tc.id)
			after := hostTime(t, ref)
			if ret != 0 {
				t.Fatalf("__vdso_clock_gettime(%d) = %d", tc.id, ret)
			}
			if nsec := int64(m.u64(8)); nsec < 0 || nsec >= 1e9 {
				t.Errorf("tv_nsec = %d", nsec)
			}
			slack := int64(50_000)
			lo := before - slack
			if tc.coarse {
				lo -= c.coarseRes
			}
			if got < lo || got > after+slack {
				t.Errorf("vDSO read %d, host read %d..%d (diff %d..%d ns)", got, before, after, got-before, got-after)
			}
			if tc.coarse {
				if got%c.coarseRes != 0 {
					t.Errorf("coarse reading %d is not a multiple of %d", got, c.coarseRes)
				}
			}
		})
	}
}

// TestVDSOAgreesWithNow checks that a trapped clock_gettime (Clock.Now)
// and the vDSO read the same clock: a vDSO reading lies between two Now
// readings around it.
func TestVDSOAgreesWithNow(t *testing.T) {
	c, m := newMappedClock(t)
	for _, tc := range servedClocks {
		t.Run(tc.name, func(t *testing.T) {
			for range 1000 {
				n1, err := c.Now(tc.id)
				if err != nil {
					t.Fatal(err)
				}
				_, v := m.clockGettime(t, tc.id)
				n2, _ := c.Now(tc.id)
				if v < n1 || v > n2 {
					t.Fatalf("Now %d, vDSO %d, Now %d: not ordered", n1, v, n2)
				}
			}
		})
	}
}

// TestVDSOMonotonicAcrossUpdates reads every clock through the vDSO and
// Now in a tight loop while another goroutine publishes new parameters
// every millisecond, and checks no clock ever goes back.
func TestVDSOMonotonicAcrossUpdates(t *testing.T) {
	c, m := newMappedClock(t)
	var stop atomic.Bool
	var wg sync.WaitGroup
	updates := 0
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			c.Update(m.vvar)
			updates++
			time.Sleep(time.Millisecond)
		}
	}()
	defer func() { stop.Store(true); wg.Wait() }()

	deadline := time.Now().Add(300 * time.Millisecond)
	last := map[int32]int64{}
	reads := 0
	for time.Now().Before(deadline) {
		for _, tc := range servedClocks {
			ret, v := m.clockGettime(t, tc.id)
			if ret != 0 {
				t.Fatalf("clock %s: ret %d", tc.name, ret)
			}
			if v < last[tc.id] {
				t.Fatalf("clock %s went back by %d ns through the vDSO", tc.name, last[tc.id]-v)
			}
			last[tc.id] = v
			n, err := c.Now(tc.id)
			if err != nil {
				t.Fatal(err)
			}
			if n < last[tc.id] {
				t.Fatalf("clock %s: Now %d is before the vDSO's %d", tc.name, n, last[tc.id])
			}
			last[tc.id] = n
			reads++
		}
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d readings across %d updates", reads, updates)
}

// TestVDSOMonotonicAcrossThreads has several goroutines (so several OS
// threads on any CPU) read MONOTONIC through the vDSO and publish the
// largest value seen; nobody may read a smaller value after it was
// published.
func TestVDSOMonotonicAcrossThreads(t *testing.T) {
	c, m := newMappedClock(t)
	var max atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for range runtime.GOMAXPROCS(0) + 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				seen := max.Load()
				v := c.mustNow(unix.CLOCK_MONOTONIC)
				if v < seen {
					errs <- "Now went back"
					return
				}
				for {
					cur := max.Load()
					if v <= cur || max.CompareAndSwap(cur, v) {
						break
					}
				}
			}
		}()
	}
	// The vDSO itself, on this goroutine, against the same maximum.
	deadline := time.Now().Add(200 * time.Millisecond)
	for i := 0; time.Now().Before(deadline); i++ {
		if i%1000 == 0 {
			c.Update(m.vvar)
		}
		seen := max.Load()
		_, v := m.clockGettime(t, unix.CLOCK_MONOTONIC)
		if v < seen {
			t.Errorf("vDSO read %d after %d was published: back by %d ns", v, seen, seen-v)
			break
		}
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func (c *Clock) mustNow(id int32) int64 {
	ns, err := c.Now(id)
	if err != nil {
		panic(err)
	}
	return ns
}

func TestVDSOGettimeofday(t *testing.T) {
	_, m := newMappedClock(t)
	t.Run("tv and tz", func(t *testing.T) {
		m.fill(0xff)
		var before unix.Timeval
		unix.Gettimeofday(&before)
		ret := int32(uint32(m.call(t, "__vdso_gettimeofday", m.scr(0), m.scr(64), 0)))
		var after unix.Timeval
		unix.Gettimeofday(&after)
		if ret != 0 {
			t.Fatalf("ret = %d", ret)
		}
		sec, usec := int64(m.u64(0)), int64(m.u64(8))
		got := sec*1e6 + usec
		if usec < 0 || usec >= 1e6 {
			t.Errorf("tv_usec = %d", usec)
		}
		lo := before.Sec*1e6 + before.Usec - 50
		hi := after.Sec*1e6 + after.Usec + 50
		if got < lo || got > hi {
			t.Errorf("vDSO %d us, host %d..%d", got, lo+50, hi-50)
		}
		if tz := m.u64(64); tz != 0 {
			t.Errorf("timezone = %#x, want zeros", tz)
		}
	})
	t.Run("null tv", func(t *testing.T) {
		m.fill(0xff)
		if ret := int32(uint32(m.call(t, "__vdso_gettimeofday", 0, m.scr(64), 0))); ret != 0 {
			t.Errorf("ret = %d", ret)
		}
		if tz := m.u64(64); tz != 0 {
			t.Errorf("timezone = %#x, want zeros", tz)
		}
	})
	t.Run("null both", func(t *testing.T) {
		if ret := int32(uint32(m.call(t, "__vdso_gettimeofday", 0, 0, 0))); ret != 0 {
			t.Errorf("ret = %d", ret)
		}
	})
}

func TestVDSOTime(t *testing.T) {
	_, m := newMappedClock(t)
	t.Run("with pointer", func(t *testing.T) {
		m.fill(0xff)
		before := time.Now().Unix()
		got := int64(m.call(t, "__vdso_time", m.scr(0), 0, 0))
		after := time.Now().Unix()
		if got < before || got > after {
			t.Errorf("time() = %d, host %d..%d", got, before, after)
		}
		if stored := int64(m.u64(0)); stored != got {
			t.Errorf("*t = %d, returned %d", stored, got)
		}
	})
	t.Run("null", func(t *testing.T) {
		before := time.Now().Unix()
		got := int64(m.call(t, "__vdso_time", 0, 0, 0))
		if got < before || got > time.Now().Unix() {
			t.Errorf("time(NULL) = %d, host about %d", got, before)
		}
	})
}

func TestVDSOGetcpu(t *testing.T) {
	c, m := newMappedClock(t)
	getcpu := func(cpu, node uintptr) {
		t.Helper()
		if ret := int64(m.call(t, "__vdso_getcpu", cpu, node, 0)); ret != 0 {
			t.Fatalf("getcpu = %d", ret)
		}
	}
	m.fill(0xff)
	getcpu(m.scr(0), m.scr(8))
	if cpu, node := m.u32(0), m.u32(8); cpu != 0 || node != 0 {
		t.Errorf("cpu, node = %d, %d; want 0, 0", cpu, node)
	}
	c.SetCPU(3, 1)
	c.Update(m.vvar)
	getcpu(m.scr(0), m.scr(8))
	if cpu, node := m.u32(0), m.u32(8); cpu != 3 || node != 1 {
		t.Errorf("cpu, node = %d, %d; want 3, 1", cpu, node)
	}
	getcpu(0, 0)
	getcpu(m.scr(0), 0)
	getcpu(0, m.scr(8))
}

func TestVDSOClockGetres(t *testing.T) {
	c, m := newMappedClock(t)
	tests := []struct {
		name string
		id   int32
		want int64
	}{
		{"REALTIME", unix.CLOCK_REALTIME, 1},
		{"MONOTONIC", unix.CLOCK_MONOTONIC, 1},
		{"MONOTONIC_RAW", unix.CLOCK_MONOTONIC_RAW, 1},
		{"BOOTTIME", unix.CLOCK_BOOTTIME, 1},
		{"REALTIME_COARSE", unix.CLOCK_REALTIME_COARSE, c.coarseRes},
		{"MONOTONIC_COARSE", unix.CLOCK_MONOTONIC_COARSE, c.coarseRes},
		// Served by the (here native) syscall.
		{"PROCESS_CPUTIME", unix.CLOCK_PROCESS_CPUTIME_ID, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m.fill(0xff)
			ret := int32(uint32(m.call(t, "__vdso_clock_getres", uintptr(tc.id), m.scr(0), 0)))
			if ret != 0 {
				t.Fatalf("ret = %d", ret)
			}
			if got := int64(m.u64(0))*1e9 + int64(m.u64(8)); got != tc.want {
				t.Errorf("resolution = %d, want %d", got, tc.want)
			}
			if hres, err := c.Resolution(tc.id); err == nil && hres != tc.want {
				t.Errorf("Clock.Resolution = %d, want %d", hres, tc.want)
			}
			if ret := int32(uint32(m.call(t, "__vdso_clock_getres", uintptr(tc.id), 0, 0))); ret != 0 {
				t.Errorf("with NULL res: ret = %d", ret)
			}
		})
	}
	t.Run("invalid", func(t *testing.T) {
		ret := int32(uint32(m.call(t, "__vdso_clock_getres", 100, m.scr(0), 0)))
		if ret != -int32(unix.EINVAL) {
			t.Errorf("ret = %d, want -EINVAL", ret)
		}
	})
}

// TestVDSOFallback checks that clocks the page does not serve reach the
// real syscall (natively here; the Sentry traps it in a sandbox).
func TestVDSOFallback(t *testing.T) {
	_, m := newMappedClock(t)
	t.Run("THREAD_CPUTIME", func(t *testing.T) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		before := hostTime(t, unix.CLOCK_THREAD_CPUTIME_ID)
		ret, got := m.clockGettime(t, unix.CLOCK_THREAD_CPUTIME_ID)
		after := hostTime(t, unix.CLOCK_THREAD_CPUTIME_ID)
		if ret != 0 || got < before || got > after {
			t.Errorf("ret %d, cpu time %d, host %d..%d", ret, got, before, after)
		}
	})
	t.Run("PROCESS_CPUTIME", func(t *testing.T) {
		ret, got := m.clockGettime(t, unix.CLOCK_PROCESS_CPUTIME_ID)
		if ret != 0 || got <= 0 {
			t.Errorf("ret %d, cpu time %d", ret, got)
		}
	})
	t.Run("invalid id", func(t *testing.T) {
		for _, id := range []int32{12, 15, 16, 100} {
			if ret, _ := m.clockGettime(t, id); ret != -int32(unix.EINVAL) {
				t.Errorf("clock %d: ret = %d, want -EINVAL", id, ret)
			}
		}
	})
	t.Run("NULL timespec", func(t *testing.T) {
		ret := int32(uint32(m.call(t, "__vdso_clock_gettime", unix.CLOCK_MONOTONIC, 0, 0)))
		if ret != -int32(unix.EFAULT) {
			t.Errorf("ret = %d, want -EFAULT", ret)
		}
	})
}

// TestVDSOEmptyPage checks that a page the Sentry never wrote (all zero)
// makes every call a syscall, which still gives correct answers.
func TestVDSOEmptyPage(t *testing.T) {
	m := mapVDSO(t)
	for _, tc := range servedClocks {
		before := hostTime(t, tc.id)
		ret, got := m.clockGettime(t, tc.id)
		after := hostTime(t, tc.id)
		if ret != 0 || got < before || got > after {
			t.Errorf("%s: ret %d, %d not in %d..%d", tc.name, ret, got, before, after)
		}
	}
	before := time.Now().Unix()
	if got := int64(m.call(t, "__vdso_time", 0, 0, 0)); got < before || got > time.Now().Unix() {
		t.Errorf("time() = %d", got)
	}
}

// TestVDSOWaitsForWriter checks the seqlock: while the sequence is odd (a
// write in progress) the vDSO does not return; it does once it is even.
func TestVDSOWaitsForWriter(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("the spinning call would hold the only P")
	}
	c, m := newMappedClock(t)
	d := pageData(m.vvar)
	// The spinning vDSO call cannot be preempted, so a stop-the-world
	// while it spins would wait for it forever (the goroutine that ends
	// the write would be stopped): no GC meanwhile.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	seq := d.beginWrite()
	done := make(chan int64)
	go func() {
		_, v := m.clockGettime(t, unix.CLOCK_MONOTONIC)
		done <- v
	}()
	select {
	case <-done:
		t.Fatal("the vDSO returned during a write")
	case <-time.After(20 * time.Millisecond):
	}
	d.endWrite(seq)
	select {
	case v := <-done:
		if now := c.mustNow(unix.CLOCK_MONOTONIC); v > now {
			t.Errorf("read %d after the write, Now is %d", v, now)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the vDSO did not return after the write")
	}
}

// BenchmarkVDSOClockGettime measures a clock_gettime through Moat's vDSO
// (called from Go through ccall); compare BenchmarkHostClockGettime (a
// host syscall) and, for the host's own vDSO, BenchmarkHostVDSO.
func BenchmarkVDSOClockGettime(b *testing.B) {
	c, err := NewClock()
	if err != nil {
		b.Fatal(err)
	}
	m := mapVDSO(b)
	c.Update(m.vvar)
	off, _ := SymbolOffset("__vdso_clock_gettime")
	fn := m.base + off
	for b.Loop() {
		ccallMonotonic(fn, m.scr(0))
	}
}

func BenchmarkHostVDSO(b *testing.B) {
	for b.Loop() {
		hostNanotime()
	}
}

// TestVDSOArithmetic checks the vDSO evaluates crafted pages exactly as
// the Go reader does: its answer lies between Go's evaluation at TSC
// readings taken just before and just after the call.
func TestVDSOArithmetic(t *testing.T) {
	m := mapVDSO(t)
	d := pageData(m.vvar)
	tests := []struct {
		name  string
		base  func(now uint64) uint64 // tsc_base from the current TSC
		shift uint32
		cv    curve
		mode  uint32
		res   int64
	}{
		{"slewing", func(n uint64) uint64 { return n - 1000 }, 32,
			curve{base: 5e9, mult: 3 << 31, slewEnd: 1 << 40, baseEnd: 5e9 + 3<<39, multEnd: 1 << 32}, modeFine, 0},
		{"past the slew", func(n uint64) uint64 { return n - 1e9 }, 32,
			curve{base: 5e9, mult: 3 << 31, slewEnd: 1e6, baseEnd: 5e9 + 1.5e6, multEnd: 1 << 31}, modeFine, 0},
		{"switch point ahead", func(n uint64) uint64 { return n + 1<<40 }, 32,
			curve{base: 123456789, mult: 1 << 32, baseEnd: 123456789, multEnd: 1 << 32}, modeFine, 0},
		{"huge delta", func(uint64) uint64 { return 0 }, 32,
			curve{base: 0, mult: 2045222520, baseEnd: 0, multEnd: 2045222520}, modeFine, 0},
		{"shift 0", func(n uint64) uint64 { return n - 5000 }, 0,
			curve{base: 7, multEnd: 3, baseEnd: 7}, modeFine, 0},
		{"shift 64", func(n uint64) uint64 { return n - 1e6 }, 64,
			curve{base: 1e9, multEnd: 1 << 63, baseEnd: 1e9}, modeFine, 0},
		{"shift 70", func(n uint64) uint64 { return n - 1e6 }, 70,
			curve{base: 1e9, multEnd: 1<<63 + 12345, baseEnd: 1e9}, modeFine, 0},
		{"before the epoch", func(n uint64) uint64 { return n + 1<<40 }, 32,
			curve{base: -1_500_000_001, baseEnd: -1_500_000_001, multEnd: 1 << 32}, modeFine, 0},
		{"coarse", func(n uint64) uint64 { return n - 1e7 }, 32,
			curve{base: 10_000_001, baseEnd: 10_000_001, multEnd: 1 << 32}, modeCoarse, 3_000_000},
		{"coarse before the epoch", func(n uint64) uint64 { return n + 1<<40 }, 32,
			curve{base: -10_000_001, baseEnd: -10_000_001, multEnd: 1 << 32}, modeCoarse, 3_000_000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			seq := d.beginWrite()
			d.tscBase.Store(tc.base(rdtsc()))
			d.shift.Store(tc.shift)
			d.coarseRes.Store(tc.res)
			d.storeClock(unix.CLOCK_MONOTONIC, tc.cv, tc.mode)
			d.endWrite(seq)

			lo, _ := d.read(unix.CLOCK_MONOTONIC, rdtsc)
			ret, got := m.clockGettime(t, unix.CLOCK_MONOTONIC)
			hi, _ := d.read(unix.CLOCK_MONOTONIC, rdtsc)
			if ret != 0 {
				t.Fatalf("ret = %d", ret)
			}
			if nsec := int64(m.u64(8)); nsec < 0 || nsec >= 1e9 {
				t.Errorf("tv_nsec = %d, want it normalised", nsec)
			}
			if got < lo || got > hi {
				t.Errorf("vDSO read %d, Go reads %d..%d", got, lo, hi)
			}
			if tc.mode == modeCoarse && roundDown(got, tc.res) != got {
				t.Errorf("coarse reading %d is not a multiple of %d", got, tc.res)
			}
		})
	}
}
