package vdso

import (
	"errors"
	"math"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// monotonicClocks never go back, whatever the host does.
var monotonicClocks = []int32{
	unix.CLOCK_MONOTONIC, unix.CLOCK_MONOTONIC_COARSE,
	unix.CLOCK_MONOTONIC_RAW, unix.CLOCK_BOOTTIME,
}

// allClocks are the clocks Now serves.
var allClocks = []int32{
	unix.CLOCK_REALTIME, unix.CLOCK_MONOTONIC, unix.CLOCK_MONOTONIC_RAW,
	unix.CLOCK_REALTIME_COARSE, unix.CLOCK_MONOTONIC_COARSE,
	unix.CLOCK_BOOTTIME, unix.CLOCK_TAI,
}

// sim drives a Clock on a fake host: time passes in update intervals, the
// Clock publishes into a page after each, and every clock is read (and
// checked monotonic) many times in between.
type sim struct {
	t    *testing.T
	f    *fakeHost
	c    *Clock
	page []byte
	last map[int32]int64
	// realBack allows REALTIME and TAI to go back once (the host clock was
	// set back).
	realBack bool
	// tscBack skips reading until the next update (the TSC went back).
	tscBack bool
}

func newSim(t *testing.T, f *fakeHost) *sim {
	t.Helper()
	c, err := newClock(f.host())
	if err != nil {
		t.Fatalf("newClock: %v", err)
	}
	s := &sim{t: t, f: f, c: c, page: make([]byte, VVarSize), last: map[int32]int64{}}
	c.Update(s.page)
	s.readAll()
	return s
}

func (s *sim) readAll() {
	s.t.Helper()
	if s.tscBack {
		return
	}
	for _, id := range allClocks {
		if s.f.missing[id] {
			continue
		}
		v, err := s.c.Now(id)
		if err != nil {
			s.t.Fatalf("Now(%d): %v", id, err)
		}
		// The page must say the same as Now.
		if pv, ok := pageData(s.page).read(int(id), func() uint64 { return s.f.tsc }); ok && pv < v-1 {
			s.t.Fatalf("clock %d: page reads %d, Now %d", id, pv, v)
		}
		if prev, ok := s.last[id]; ok && v < prev {
			if (id == unix.CLOCK_REALTIME || id == unix.CLOCK_TAI || id == unix.CLOCK_REALTIME_COARSE) && s.realBack {
				s.last[id] = v
				continue
			}
			s.t.Fatalf("clock %d went back by %d ns", id, prev-v)
		}
		s.last[id] = v
	}
}

// run lets d pass in steps of interval, publishing after each step.
func (s *sim) run(d, interval time.Duration) {
	s.t.Helper()
	for elapsed := time.Duration(0); elapsed < d; elapsed += interval {
		for range 4 {
			s.f.advance(float64(interval) / 4)
			s.readAll()
		}
		s.c.Update(s.page)
		s.tscBack = false
		s.readAll()
	}
	s.realBack = false
}

// errNs returns Now(id) minus the host's clock id.
func (s *sim) errNs(id int32) int64 {
	s.t.Helper()
	v, err := s.c.Now(id)
	if err != nil {
		s.t.Fatal(err)
	}
	return v - s.f.Read(id)
}

func (s *sim) wantClose(id int32, tol int64) {
	s.t.Helper()
	if e := s.errNs(id); abs(e) > tol {
		s.t.Errorf("clock %d is %d ns off the host (tolerance %d)", id, e, tol)
	}
}

func TestClockFollowsHost(t *testing.T) {
	s := newSim(t, newFakeHost())
	s.run(2*time.Second, 50*time.Millisecond)
	for _, id := range allClocks {
		tol := int64(1000)
		if id == unix.CLOCK_REALTIME_COARSE || id == unix.CLOCK_MONOTONIC_COARSE {
			tol = s.c.coarseRes
		}
		s.wantClose(id, tol)
	}
}

func TestClockFollowsRateChange(t *testing.T) {
	tests := []struct {
		name      string
		mono, raw float64 // ppm changes of the host's rates
	}{
		{"NTP speeds MONOTONIC up", 300, 0},
		{"NTP slows MONOTONIC down", -400, 0},
		{"TSC slower than thought", 50, 50},
		{"RAW apart from MONOTONIC", 0, -200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeHost()
			s := newSim(t, f)
			s.run(time.Second, 50*time.Millisecond)
			f.setRates(f.mono.rate*(1+tc.mono*1e-6), f.raw.rate*(1+tc.raw*1e-6))
			s.run(20*time.Second, 50*time.Millisecond)
			for _, id := range []int32{unix.CLOCK_MONOTONIC, unix.CLOCK_REALTIME, unix.CLOCK_BOOTTIME, unix.CLOCK_MONOTONIC_RAW} {
				s.wantClose(id, 1000)
			}
		})
	}
}

// TestClockUpdateIntervals checks the keeper copes with the Sentry
// updating rarely or irregularly.
func TestClockUpdateIntervals(t *testing.T) {
	for _, iv := range []time.Duration{5 * time.Millisecond, 50 * time.Millisecond, time.Second, 10 * time.Second} {
		t.Run(iv.String(), func(t *testing.T) {
			f := newFakeHost()
			s := newSim(t, f)
			f.setRates(f.mono.rate*(1+100e-6), f.raw.rate*(1+100e-6))
			s.run(30*iv, iv)
			s.wantClose(unix.CLOCK_MONOTONIC, 2000)
		})
	}
}

func TestClockHostJumps(t *testing.T) {
	tests := []struct {
		name string
		jump int64
		// settle: how long after the jump the clock must be back within
		// a microsecond of the host.
		settle time.Duration
	}{
		{"forward 3s (VM paused)", 3e9, 50 * time.Millisecond},
		{"forward 200us", 200_000, 3 * time.Second},
		{"forward 20us", 20_000, 3 * time.Second},
		{"back 20us", -20_000, 3 * time.Second},
		{"back 2ms", -2_000_000, 10 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeHost()
			s := newSim(t, f)
			s.run(time.Second, 50*time.Millisecond)
			before := s.c.mustNow(unix.CLOCK_MONOTONIC)
			f.jumpMono(tc.jump)
			s.run(50*time.Millisecond, 50*time.Millisecond)
			after := s.c.mustNow(unix.CLOCK_MONOTONIC)
			// Small errors are slewed: no visible jump, the clock runs at
			// most 500 ppm off the host rate.
			if tc.jump < stepNs {
				if d := after - before; float64(d) > 50e6*1.0006 || float64(d) < 50e6*0.9994 {
					t.Errorf("50 ms later the clock moved %d ns: slewing faster than 500 ppm", d)
				}
			}
			s.run(tc.settle, 50*time.Millisecond)
			// The jump must not have leaked into the rate estimate.
			if e := (s.c.mono.rate/f.mono.rate - 1) * 1e6; math.Abs(e) > 0.1 {
				t.Errorf("rate estimate %.3f ppm off after the jump", e)
			}
			s.wantClose(unix.CLOCK_MONOTONIC, 1000)
			s.wantClose(unix.CLOCK_BOOTTIME, 1000)
			s.wantClose(unix.CLOCK_REALTIME, 1000)
		})
	}
}

func TestClockRealtimeSet(t *testing.T) {
	for _, d := range []int64{-3600e9, -5e6, 5e6, 86400e9} {
		f := newFakeHost()
		s := newSim(t, f)
		s.run(200*time.Millisecond, 50*time.Millisecond)
		mono := s.c.mustNow(unix.CLOCK_MONOTONIC)
		f.set(func(f *fakeHost) { f.realOff += d })
		s.realBack = d < 0
		s.run(50*time.Millisecond, 50*time.Millisecond)
		s.wantClose(unix.CLOCK_REALTIME, 1000)
		s.wantClose(unix.CLOCK_TAI, 1000)
		// MONOTONIC did not notice.
		if got := s.c.mustNow(unix.CLOCK_MONOTONIC) - mono; got < 50e6 || got > 51e6 {
			t.Errorf("setting REALTIME by %d moved MONOTONIC by %d ns in 50 ms", d, got)
		}
	}
}

// TestClockOffsetsStayExact checks that REALTIME, BOOTTIME and TAI stay
// exactly parallel to MONOTONIC when the host's offsets only jitter.
func TestClockOffsetsStayExact(t *testing.T) {
	f := newFakeHost()
	f.taiOff = 37e9
	s := newSim(t, f)
	at := func(id int32) int64 {
		v, ok := s.c.data.read(int(id), func() uint64 { return f.tsc })
		if !ok {
			t.Fatalf("clock %d not served", id)
		}
		return v
	}
	real0 := at(unix.CLOCK_REALTIME) - at(unix.CLOCK_MONOTONIC)
	boot0 := at(unix.CLOCK_BOOTTIME) - at(unix.CLOCK_MONOTONIC)
	for i := range 50 {
		// Measurement noise: a few hundred ns either way.
		f.set(func(f *fakeHost) { f.realOff += int64(300 * (1 - 2*(i%2))) })
		s.run(50*time.Millisecond, 50*time.Millisecond)
		if got := at(unix.CLOCK_REALTIME) - at(unix.CLOCK_MONOTONIC); got != real0 {
			t.Fatalf("REALTIME-MONOTONIC moved from %d to %d", real0, got)
		}
		if got := at(unix.CLOCK_BOOTTIME) - at(unix.CLOCK_MONOTONIC); got != boot0 {
			t.Fatalf("BOOTTIME-MONOTONIC moved from %d to %d", boot0, got)
		}
		if got := at(unix.CLOCK_TAI) - at(unix.CLOCK_REALTIME); got != 37e9 {
			t.Fatalf("TAI-REALTIME = %d, want 37 s", got)
		}
	}
}

func TestClockSuspend(t *testing.T) {
	f := newFakeHost()
	s := newSim(t, f)
	s.run(200*time.Millisecond, 50*time.Millisecond)
	mono := s.c.mustNow(unix.CLOCK_MONOTONIC)
	f.set(func(f *fakeHost) { f.bootOff += 10e9; f.realOff += 10e9 })
	s.run(50*time.Millisecond, 50*time.Millisecond)
	s.wantClose(unix.CLOCK_BOOTTIME, 1000)
	s.wantClose(unix.CLOCK_REALTIME, 1000)
	if got := s.c.mustNow(unix.CLOCK_MONOTONIC) - mono; got > 51e6 {
		t.Errorf("MONOTONIC moved %d ns over a suspend", got)
	}
}

// TestClockTSCReset checks a TSC that goes back (a restored snapshot):
// until the next update every clock stands still at the value of the last
// switch point (it cannot know better, and must not run wild), then the
// update catches up with the host, beyond any earlier reading.
func TestClockTSCReset(t *testing.T) {
	f := newFakeHost()
	s := newSim(t, f)
	s.run(time.Second, 50*time.Millisecond)
	base := s.c.data.loadCurve(unix.CLOCK_MONOTONIC).base
	f.resetTSC(1 << 30)
	for range 3 {
		f.advance(1e6)
		if got := s.c.mustNow(unix.CLOCK_MONOTONIC); got != base {
			t.Errorf("after the reset MONOTONIC reads %d, want the switch point's %d", got, base)
		}
	}
	s.tscBack = true
	s.run(200*time.Millisecond, 50*time.Millisecond)
	for _, id := range []int32{unix.CLOCK_MONOTONIC, unix.CLOCK_REALTIME, unix.CLOCK_MONOTONIC_RAW} {
		s.wantClose(id, 1000)
	}
}

func TestClockHostLacksClocks(t *testing.T) {
	f := newFakeHost()
	f.missing[unix.CLOCK_MONOTONIC_RAW] = true
	f.missing[unix.CLOCK_TAI] = true
	s := newSim(t, f)
	d := pageData(s.page)
	for _, id := range []int32{unix.CLOCK_MONOTONIC_RAW, unix.CLOCK_TAI} {
		if m := d.clocks[id].mode.Load(); m != modeSyscall {
			t.Errorf("clock %d mode %d, want the syscall", id, m)
		}
		if _, err := s.c.Now(id); !errors.Is(err, unix.EINVAL) {
			t.Errorf("Now(%d) = %v, want EINVAL from the host", id, err)
		}
	}
	if m := d.clocks[unix.CLOCK_MONOTONIC].mode.Load(); m != modeFine {
		t.Errorf("MONOTONIC mode %d, want fine", m)
	}
}

// TestCalibrationSleepsOnlyWhatIsLeft checks that the first Update
// finishes the calibration NewClock started, sleeping only for what is
// left of calibrationNs since, and that the rate it finds is the host's.
func TestCalibrationSleepsOnlyWhatIsLeft(t *testing.T) {
	for _, passed := range []int64{0, calibrationNs / 4, calibrationNs, 10 * calibrationNs} {
		f := newFakeHost()
		c, err := newClock(f.host())
		if err != nil {
			t.Fatal(err)
		}
		if c.UsesTSC() {
			t.Fatalf("%d ns after NewClock: UsesTSC before the first Update", passed)
		}
		f.advance(float64(passed))
		c.Update(make([]byte, VVarSize))
		if !c.UsesTSC() {
			t.Fatalf("%d ns after NewClock: the first Update did not calibrate the TSC", passed)
		}
		// The fake host's readings since NewClock's pairing count as
		// time passed too.
		reads := int64(calPairTries * 4 * float64(f.tick) * f.mono.rate)
		if want := max(0, calibrationNs-passed); f.slept > want || f.slept < want-reads {
			t.Errorf("%d ns after NewClock: the first Update slept %d ns, want %d", passed, f.slept, want)
		}
		if e := math.Abs(c.mono.rate/f.mono.rate - 1); e > 10e-6 {
			t.Errorf("%d ns after NewClock: rate %v ns per cycle, host's %v (%.1f ppm off)", passed, c.mono.rate, f.mono.rate, e*1e6)
		}
	}
}

// TestCalibrationWaitsOutWideWindows checks that a host whose pairings
// are microseconds wide (CLOCK_MONOTONIC through a syscall) still gets
// its TSC calibrated: the first Update waits longer for the interval that
// makes the windows small.
func TestCalibrationWaitsOutWideWindows(t *testing.T) {
	f := newFakeHost()
	f.tick = uint64(600 / f.mono.rate) // 600 ns a reading: windows of about 1.2 us
	c, err := newClock(f.host())
	if err != nil {
		t.Fatal(err)
	}
	c.Update(make([]byte, VVarSize))
	if !c.UsesTSC() {
		t.Fatal("no calibration with wide windows")
	}
	if f.slept <= calibrationNs {
		t.Errorf("slept %d ns, want more than %d for windows that wide", f.slept, calibrationNs)
	}
	if e := math.Abs(c.mono.rate/f.mono.rate - 1); e > maxCalError {
		t.Errorf("rate %.1f ppm off the host's", e*1e6)
	}
}

func TestClockWithoutUsableTSC(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(f *fakeHost)
	}{
		{"not invariant", func(f *fakeHost) { f.invariant = false }},
		{"stuck", func(f *fakeHost) { f.stuckTSC = true }},
		{"absurdly slow", func(f *fakeHost) { f.setRates(25, 25) }}, // 40 MHz
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeHost()
			tc.setup(f)
			testSyscallClock(t, f)
		})
	}
}

// testSyscallClock checks a Clock that cannot use f's TSC: it answers
// from the host and has the vDSO make syscalls.
func testSyscallClock(t *testing.T, f *fakeHost) {
	c, err := newClock(f.host())
	if err != nil {
		t.Fatal(err)
	}
	page := make([]byte, VVarSize)
	for i := range page {
		page[i] = 0xa5
	}
	c.Update(page)
	if c.UsesTSC() {
		t.Fatal("UsesTSC with an unusable TSC")
	}
	d := pageData(page)
	if d.seq.Load()&1 != 0 {
		t.Errorf("sequence left odd")
	}
	for id := range numClocks {
		if m := d.clocks[id].mode.Load(); m != modeSyscall {
			t.Errorf("clock %d mode %d, want the syscall", id, m)
		}
	}
	for _, id := range allClocks {
		got, err := c.Now(id)
		if err != nil {
			t.Fatalf("Now(%d): %v", id, err)
		}
		// Now read the host (a fake syscall) just before.
		if want := f.Read(id); abs(got-want) > int64(float64(f.sysTicks+4*f.tick)*f.mono.rate) {
			t.Errorf("Now(%d) = %d, host %d", id, got, want)
		}
	}
}

func TestClockIDs(t *testing.T) {
	s := newSim(t, newFakeHost())
	tests := []struct {
		name string
		id   int32
		base int32 // -1: EINVAL
		res  int64
	}{
		{"REALTIME", unix.CLOCK_REALTIME, unix.CLOCK_REALTIME, 1},
		{"MONOTONIC_COARSE", unix.CLOCK_MONOTONIC_COARSE, unix.CLOCK_MONOTONIC_COARSE, 4_000_000},
		{"REALTIME_ALARM", unix.CLOCK_REALTIME_ALARM, unix.CLOCK_REALTIME, 1},
		{"BOOTTIME_ALARM", unix.CLOCK_BOOTTIME_ALARM, unix.CLOCK_BOOTTIME, 1},
		{"PROCESS_CPUTIME", unix.CLOCK_PROCESS_CPUTIME_ID, -1, 0},
		{"THREAD_CPUTIME", unix.CLOCK_THREAD_CPUTIME_ID, -1, 0},
		{"10", 10, -1, 0},
		{"16", 16, -1, 0},
		{"negative", -6, -1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.c.Now(tc.id)
			res, rerr := s.c.Resolution(tc.id)
			if tc.base < 0 {
				if !errors.Is(err, unix.EINVAL) || !errors.Is(rerr, unix.EINVAL) {
					t.Errorf("Now, Resolution = %v, %v; want EINVAL", err, rerr)
				}
				return
			}
			if err != nil || rerr != nil {
				t.Fatalf("Now, Resolution = %v, %v", err, rerr)
			}
			if res != tc.res {
				t.Errorf("Resolution = %d, want %d", res, tc.res)
			}
			base := s.c.mustNow(tc.base)
			if got > base || base-got > 5_000_000 {
				t.Errorf("Now = %d, base clock %d", got, base)
			}
		})
	}
}

func TestCurveArithmetic(t *testing.T) {
	tests := []struct {
		cycles, mult uint64
		shift        uint32
		want         uint64
	}{
		{0, 1 << 32, 32, 0},
		{1000, 1 << 32, 32, 1000},
		{1000, 1 << 31, 32, 500},
		{1 << 40, 2045222520, 32, 2045222520 << 8},
		{math.MaxUint64, 1 << 32, 32, math.MaxUint64},
		{math.MaxUint64, 3 << 32, 32, math.MaxUint64 - 2},        // the high bits go, as in C
		{math.MaxUint64, math.MaxUint64, 64, math.MaxUint64 - 1}, // high word
		{math.MaxUint64, math.MaxUint64, 70, (math.MaxUint64 - 1) >> 6},
		{12345, 7, 0, 86415},
	}
	for _, tc := range tests {
		if got := scale(tc.cycles, tc.mult, tc.shift); got != tc.want {
			t.Errorf("scale(%d, %d, %d) = %d, want %d", tc.cycles, tc.mult, tc.shift, got, tc.want)
		}
	}
	cv := curve{base: 100, mult: 2 << 32, slewEnd: 10, baseEnd: 120, multEnd: 1 << 32}
	for _, tc := range []struct {
		delta uint64
		want  int64
	}{
		{0, 100}, {5, 110}, {10, 120}, {15, 125}, {math.MaxUint64 - 4, 100},
	} {
		if got := cv.at(tc.delta, 32); got != tc.want {
			t.Errorf("at(%d) = %d, want %d", tc.delta, got, tc.want)
		}
	}
	for _, tc := range []struct{ ns, res, want int64 }{
		{4_000_001, 4_000_000, 4_000_000}, {-1, 4_000_000, -4_000_000}, {8, 0, 8}, {-8_000_000, 4_000_000, -8_000_000},
	} {
		if got := roundDown(tc.ns, tc.res); got != tc.want {
			t.Errorf("roundDown(%d, %d) = %d, want %d", tc.ns, tc.res, got, tc.want)
		}
	}
}

// FuzzRebase checks that re-expressing a curve from a later switch point
// never makes the clock go back, and changes it by at most a nanosecond.
func FuzzRebase(f *testing.F) {
	f.Add(int64(1e12), uint64(2045222520), uint64(400_000_000), uint64(2045000000), uint64(1000), uint64(5000))
	f.Add(int64(-5), uint64(1), uint64(0), uint64(3), uint64(0), uint64(1))
	f.Fuzz(func(t *testing.T, base int64, mult, slewEnd, multEnd, d1, later uint64) {
		mult %= 1 << 40
		multEnd %= 1 << 40
		slewEnd %= 1 << 40
		d1 %= 1 << 42
		later %= 1 << 42
		cv := curve{base: base % (1 << 62), mult: mult, slewEnd: slewEnd, multEnd: multEnd}
		cv.baseEnd = cv.base + int64(scale(slewEnd, mult, fixedShift))
		nc := rebase(cv, d1)
		before := cv.at(d1, fixedShift)
		if got := nc.at(0, fixedShift); got != before {
			t.Fatalf("rebased curve starts at %d, old one is at %d", got, before)
		}
		old, now := cv.at(d1+later, fixedShift), nc.at(later, fixedShift)
		if now < before || now > old || old-now > 1 {
			t.Fatalf("%d cycles on: old curve %d, rebased %d (start %d)", later, old, now, before)
		}
	})
}

// TestCalibrationAccuracy checks the TSC calibration that NewClock starts
// and the first Update finishes against the host: with no update after
// that one, MONOTONIC drifts less than 50 ppm over 200 ms.
func TestCalibrationAccuracy(t *testing.T) {
	start := time.Now()
	c, err := NewClock()
	if err != nil {
		t.Fatal(err)
	}
	c.Update(make([]byte, VVarSize))
	took := time.Since(start)
	if !c.UsesTSC() {
		t.Skip("the TSC is not usable here")
	}
	t.Logf("NewClock and the first Update took %v, TSC at %.3f MHz", took, 1e3/c.mono.rate)
	// Pair Now with the host's MONOTONIC read through its vDSO on either
	// side (a syscall would add microseconds of jitter, as much as the
	// drift being measured); keep the tightest of a few pairings.
	pair := func() (n, h int64) {
		best := int64(math.MaxInt64)
		for range 10 {
			a := hostNanotime()
			v := c.mustNow(unix.CLOCK_MONOTONIC)
			b := hostNanotime()
			if b-a < best {
				best, n, h = b-a, v, a+(b-a)/2
			}
		}
		return n, h
	}
	n0, h0 := pair()
	time.Sleep(200 * time.Millisecond)
	n1, h1 := pair()
	ppm := float64((n1-n0)-(h1-h0)) / float64(h1-h0) * 1e6
	t.Logf("drift %.2f ppm over %v", ppm, time.Duration(h1-h0))
	if math.Abs(ppm) > 50 {
		t.Errorf("drift %.2f ppm over 200 ms, want < 50", ppm)
	}
}

// TestNowMatchesHost compares Now with the host's clocks on the real host,
// with updates running as in the Sentry.
func TestNowMatchesHost(t *testing.T) {
	c, err := NewClock()
	if err != nil {
		t.Fatal(err)
	}
	page := make([]byte, VVarSize)
	for range 6 {
		c.Update(page)
		time.Sleep(20 * time.Millisecond)
	}
	for _, id := range append(allClocks, unix.CLOCK_REALTIME_ALARM, unix.CLOCK_BOOTTIME_ALARM) {
		ref, _ := baseClock(id)
		switch ref {
		case unix.CLOCK_REALTIME_COARSE:
			ref = unix.CLOCK_REALTIME
		case unix.CLOCK_MONOTONIC_COARSE:
			ref = unix.CLOCK_MONOTONIC
		}
		before := hostTime(t, ref)
		got := c.mustNow(id)
		after := hostTime(t, ref)
		lo := before - 50_000
		if ref != id && (id == unix.CLOCK_REALTIME_COARSE || id == unix.CLOCK_MONOTONIC_COARSE) {
			lo -= c.coarseRes
		}
		if got < lo || got > after+50_000 {
			t.Errorf("clock %d: Now %d, host %d..%d", id, got, before, after)
		}
	}
}

func BenchmarkNow(b *testing.B) {
	c, err := NewClock()
	if err != nil {
		b.Fatal(err)
	}
	c.Update(make([]byte, VVarSize)) // the calibration's end
	if !c.UsesTSC() {
		b.Log("the TSC is not usable here: Now makes host syscalls")
	}
	for b.Loop() {
		c.Now(unix.CLOCK_MONOTONIC)
	}
}

func BenchmarkNewClock(b *testing.B) {
	for b.Loop() {
		if _, err := NewClock(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUpdate(b *testing.B) {
	c, err := NewClock()
	if err != nil {
		b.Fatal(err)
	}
	page := make([]byte, VVarSize)
	for b.Loop() {
		c.Update(page)
	}
}

func BenchmarkHostClockGettime(b *testing.B) {
	var ts unix.Timespec
	for b.Loop() {
		unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	}
}
