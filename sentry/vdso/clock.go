package vdso

import (
	"fmt"
	"math"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Tunables of the time keeper. Times are nanoseconds.
const (
	// calibrationNs: the first rate estimate is the slope between a
	// pairing of the TSC with the host's CLOCK_MONOTONIC that NewClock
	// takes and one that the first Update takes, at least this much
	// later; Update sleeps out what is left of it. Each pairing is the
	// tightest of calPairTries, good to a few tens of ns here, so over
	// 4 ms the estimate is within about 10 ppm, and the rate is
	// re-estimated from the history once it spans minBaselineNs.
	calibrationNs    = 4_000_000
	calibrationTries = 3
	calPairTries     = 16
	// maxCalError bounds the two pairings' windows, as a fraction of the
	// time between them: with wider ones (a host whose CLOCK_MONOTONIC is
	// a syscall, about a microsecond) the first Update waits longer, up
	// to maxCalibrationNs, before it pairs again; past that (a thread
	// preempted while pairing) the calibration is tried again.
	maxCalError      = 50e-6
	maxCalibrationNs = 100_000_000
	// pairTries is how many (TSC, host clock) readings a pairing takes; the
	// tightest one is kept.
	pairTries = 3
	// maxSlew bounds how much faster or slower than the estimated rate a
	// clock may run while it catches up with the host (500 ppm, as NTP).
	maxSlew = 500e-6
	// stepNs: a clock further than this behind the host jumps forward
	// instead of slewing (a paused VM, a suspended host).
	stepNs = 1_000_000
	// A clock corrects its error against the host over horizonUpdates
	// update intervals, bounded by [minHorizonNs, maxHorizonNs].
	horizonUpdates = 4
	minHorizonNs   = 100_000_000
	maxHorizonNs   = 2_000_000_000
	// Rates are estimated over at most maxBaselineNs of history, and only
	// once the history spans minBaselineNs.
	maxBaselineNs = 8_000_000_000
	minBaselineNs = 20_000_000
	histSize      = 16
	// A host reading further off the prediction than its track's jump
	// threshold plus maxRateError of the time since the previous reading
	// is a jump, not noise. The thresholds are well above the pairing
	// noise: tens of ns through the host vDSO, about a microsecond (at
	// most maxWindowNs/2) through a syscall.
	monoJumpNs   = 2_000
	rawJumpNs    = 2 * maxWindowNs
	maxRateError = 100e-6
	// realStepNs: a change of the host's REALTIME-MONOTONIC distance larger
	// than this is the host clock being set; smaller ones are noise.
	realStepNs = 1_000
	// bootStepNs: likewise for BOOTTIME-MONOTONIC, which only grows (when
	// the host suspends); the syscall it is read with is noisier.
	bootStepNs = 50_000
	// maxWindowNs: pairings slower than this (the thread was preempted)
	// are not trusted for offsets.
	maxWindowNs = 20_000
	// defaultCoarseRes is the coarse clocks' resolution if the host's
	// cannot be read (a 250 Hz tick).
	defaultCoarseRes = 4_000_000
)

// host is where a Clock reads the host's time. Tests substitute fakes.
type host struct {
	tsc          func() uint64
	invariantTSC func() bool
	// nanotime returns CLOCK_MONOTONIC cheaply (the host vDSO).
	nanotime func() int64
	// now returns CLOCK_REALTIME and then CLOCK_MONOTONIC, cheaply.
	now func() (wall, mono int64)
	// gettime and getres read any clock with a host syscall.
	gettime func(id int32) (int64, error)
	getres  func(id int32) (int64, error)
	// sleep lets ns pass.
	sleep func(ns int64)
}

func realHost() host {
	return host{
		tsc:          rdtsc,
		invariantTSC: invariantTSC,
		nanotime:     hostNanotime,
		now: func() (int64, int64) {
			sec, nsec, mono := hostNow()
			return sec*1e9 + int64(nsec), mono
		},
		gettime: func(id int32) (int64, error) {
			var ts unix.Timespec
			if err := unix.ClockGettime(id, &ts); err != nil {
				return 0, err
			}
			return ts.Nano(), nil
		},
		getres: func(id int32) (int64, error) {
			var ts unix.Timespec
			if err := unix.ClockGetres(id, &ts); err != nil {
				return 0, err
			}
			return ts.Nano(), nil
		},
		sleep: func(ns int64) { time.Sleep(time.Duration(ns)) },
	}
}

// Clock is the Sentry's time keeper. It follows the host's clocks through
// the TSC and publishes the parameters the vDSO needs into the vvar page
// (see the package documentation).
//
// Now may be called from any goroutine at any time; Update and SetCPU
// serialise on mu.
type Clock struct {
	h host
	// fast is set when clocks are answered from the TSC; otherwise every
	// reading goes to the host and the vDSO always makes the syscall.
	fast bool
	// calibrating is set from NewClock to the first Update, which
	// calibrates the TSC from calStart, NewClock's pairing, whose window
	// is calWin cycles.
	calibrating bool
	calStart    sample
	calWin      uint64
	// data is the parameters last published. Now reads it with the same
	// seqlock protocol as the vDSO; only Update writes it, holding mu.
	data vvarData

	mu sync.Mutex
	// mono follows the host's CLOCK_MONOTONIC (REALTIME, BOOTTIME and TAI
	// are fixed offsets from it), raw its CLOCK_MONOTONIC_RAW.
	mono, raw track
	// rawOK, bootOK and taiOK say whether the host has those clocks.
	rawOK, bootOK, taiOK bool
	// offReal, offBoot and offTAI are the host's CLOCK_REALTIME,
	// CLOCK_BOOTTIME and CLOCK_TAI minus their base clock.
	offReal, offBoot, offTAI int64
	// lastUpdate is the TSC at the last publication; interval the
	// smoothed number of cycles between publications.
	lastUpdate, interval uint64
	coarseRes            int64
}

// sample is a host clock reading paired with the TSC.
type sample struct {
	tsc uint64
	ns  int64
}

// track estimates one host clock's rate against the TSC.
type track struct {
	hist [histSize]sample // oldest first
	n    int
	rate float64 // ns per cycle
	// jumpNs is how far off the prediction a reading must be to count as
	// a jump of the host clock.
	jumpNs float64
}

// NewClock returns a time keeper whose parameters are published with
// Update. It starts the TSC's calibration, which the first Update
// finishes: a caller that lets calibrationNs (4 ms) pass in between waits
// for none of it. Until then, and for good if the TSC cannot be used (not
// invariant, or absurd), every reading is a host syscall and the vDSO
// falls back to the syscall; UsesTSC reports which.
func NewClock() (*Clock, error) {
	return newClock(realHost())
}

func newClock(h host) (*Clock, error) {
	c := &Clock{h: h}
	if _, err := h.gettime(unix.CLOCK_MONOTONIC); err != nil {
		return nil, fmt.Errorf("reading the host's CLOCK_MONOTONIC: %w", err)
	}
	c.coarseRes = defaultCoarseRes
	if res, err := h.getres(unix.CLOCK_MONOTONIC_COARSE); err == nil && res > 0 {
		c.coarseRes = res
	}
	seq := c.data.beginWrite()
	c.data.shift.Store(fixedShift)
	c.data.coarseRes.Store(c.coarseRes)
	c.data.endWrite(seq)
	if h.invariantTSC() {
		c.calibrating = true
		c.calStart, c.calWin = c.pairTSCOf(calPairTries)
	}
	return c, nil
}

// UsesTSC reports whether clocks are answered from the TSC (true on any
// host with an invariant TSC, once Update has run) rather than by host
// syscalls.
func (c *Clock) UsesTSC() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fast
}

// calibrate finishes the calibration NewClock started: it makes the first
// rate estimate and publishes the first curves into c.data. A calibration
// fails when a pairing was disturbed (a very busy host); it is tried again
// from a fresh pairing before the TSC is given up. It reports whether the
// TSC is usable. Precondition: c.mu held.
func (c *Clock) calibrate() bool {
	s0, w0 := c.calStart, c.calWin
	for try := 0; try < calibrationTries; try++ {
		if try > 0 {
			s0, w0 = c.pairTSCOf(calPairTries)
		}
		if c.calibrateFrom(s0, w0) {
			return true
		}
	}
	return false
}

// calibrateFrom is one try of calibrate, from the pairing s0 of window w0
// cycles.
func (c *Clock) calibrateFrom(s0 sample, w0 uint64) bool {
	if int64(w0) < 0 {
		return false // no pairing had the TSC going forwards
	}
	var s1 sample
	var dt, dns int64
	for wait := int64(calibrationNs); ; {
		if left := wait - (c.h.nanotime() - s0.ns); left > 0 {
			c.h.sleep(left)
		}
		var w1 uint64
		s1, w1 = c.pairTSCOf(calPairTries)
		dt, dns = int64(s1.tsc-s0.tsc), s1.ns-s0.ns
		if int64(w1) < 0 || dt <= 0 || dns < wait {
			return false
		}
		// The windows bound each end's error: wait until they are
		// within maxCalError of the interval.
		need := int64(float64(w0+w1) / 2 / maxCalError * float64(dns) / float64(dt))
		if need <= dns {
			break
		}
		if need > maxCalibrationNs {
			return false
		}
		wait = need
	}
	rate := float64(dns) / float64(dt)
	if rate < 0.05 || rate > 20 { // a TSC between 50 MHz and 20 GHz
		return false
	}
	c.mono = track{rate: rate, n: 2, jumpNs: monoJumpNs}
	c.mono.hist[0], c.mono.hist[1] = s0, s1
	c.raw = track{rate: rate, jumpNs: rawJumpNs}
	rawRef, _, err := c.pairClock(unix.CLOCK_MONOTONIC_RAW)
	c.rawOK = err == nil
	if c.rawOK {
		c.raw.reset(rawRef)
	}
	c.measureOffsets(true)

	t1 := c.h.tsc()
	monoCurve := c.mono.start(s1, t1)
	rawCurve := c.raw.start(rawRef, t1)
	seq := c.data.beginWrite()
	c.publish(t1, monoCurve, rawCurve)
	c.data.endWrite(seq)
	c.lastUpdate = t1
	return true
}

// Update refreshes the parameters from fresh host readings and writes them
// into vvar, the data page mapped below the vDSO (at least VVarSize bytes,
// 8-byte aligned). The Sentry calls it about every 50 ms, always with the
// same page: each publication continues the curves of the previous one,
// which is what keeps every clock monotonic for readers of that page.
func (c *Clock) Update(vvar []byte) {
	d := pageData(vvar)
	c.mu.Lock()
	defer c.mu.Unlock()

	if c.calibrating {
		// The first Update: c.data gets the first curves, or keeps the
		// syscall modes, and the page gets c.data as it is.
		c.calibrating = false
		c.fast = c.calibrate()
	} else if c.fast {
		c.refresh(d)
		return
	}
	seq := c.data.beginWrite()
	pseq := d.beginWrite()
	d.copyFrom(&c.data)
	d.endWrite(pseq)
	c.data.endWrite(seq)
}

// refresh is Update once the TSC is calibrated and used.
// Precondition: c.mu held.
func (c *Clock) refresh(d *vvarData) {

	// Read the host first: it is the slow part, and readers are not held
	// off meanwhile.
	monoRef, monoWin := c.pairMono()
	monoOK := monoWin < maxWindowNs
	if monoOK {
		c.mono.add(monoRef, c.mono.rate)
	}
	rawRef, rawWin, err := c.pairClock(unix.CLOCK_MONOTONIC_RAW)
	rawOK := c.rawOK && err == nil && rawWin < maxWindowNs
	if rawOK {
		c.raw.add(rawRef, c.mono.rate)
	}
	c.measureOffsets(false)

	seq := c.data.beginWrite()
	pseq := d.beginWrite()
	t1 := c.h.tsc()
	// The switch point t1 is read inside the write section, so every
	// reader of the old curves read the TSC before t1 and every reader of
	// the new ones after it; the new curves start where the old ones are at
	// t1, hence no clock goes backwards.
	oldBase := c.data.tscBase.Load()
	c.noteInterval(t1)
	horizon := uint64(c.clampNs(horizonUpdates*float64(c.interval)*c.mono.rate, minHorizonNs, maxHorizonNs) / c.mono.rate)
	monoCurve := c.data.loadCurve(unix.CLOCK_MONOTONIC)
	if monoOK {
		monoCurve = c.mono.next(monoCurve, t1-oldBase, monoRef, t1, horizon)
	} else {
		monoCurve = rebase(monoCurve, t1-oldBase)
	}
	rawCurve := c.data.loadCurve(unix.CLOCK_MONOTONIC_RAW)
	if rawOK {
		rawCurve = c.raw.next(rawCurve, t1-oldBase, rawRef, t1, horizon)
	} else {
		rawCurve = rebase(rawCurve, t1-oldBase)
	}
	c.publish(t1, monoCurve, rawCurve)
	d.copyFrom(&c.data)
	d.endWrite(pseq)
	c.data.endWrite(seq)
	c.lastUpdate = t1
}

// SetCPU sets what the vDSO's getcpu answers, from the next Update on.
func (c *Clock) SetCPU(cpu, node uint32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	seq := c.data.beginWrite()
	c.data.cpu.Store(cpu)
	c.data.node.Store(node)
	c.data.endWrite(seq)
}

// Now returns clock clockid's current value in nanoseconds, as the vDSO
// in any address space would read it from the published parameters: a
// trapped clock_gettime and a vDSO one agree and are mutually monotonic.
// The alarm clocks read their base clock. CPU-time clocks belong to tasks
// and are not served here (EINVAL, like an unknown id).
func (c *Clock) Now(clockid int32) (int64, error) {
	id, err := baseClock(clockid)
	if err != nil {
		return 0, err
	}
	if ns, ok := c.data.read(int(id), c.h.tsc); ok {
		return ns, nil
	}
	// Not answered from the TSC: the host has no such clock, or the TSC is
	// not used at all.
	ns, err := c.h.gettime(id)
	if err != nil {
		return 0, fmt.Errorf("reading the host's clock %d: %w", id, err)
	}
	return ns, nil
}

// Resolution returns clock clockid's resolution in nanoseconds (what
// clock_getres reports): 1 for the fine clocks, the tick for the coarse
// ones.
func (c *Clock) Resolution(clockid int32) (int64, error) {
	id, err := baseClock(clockid)
	if err != nil {
		return 0, err
	}
	if id == unix.CLOCK_REALTIME_COARSE || id == unix.CLOCK_MONOTONIC_COARSE {
		return c.coarseRes, nil
	}
	return 1, nil
}

// baseClock maps clockid to the clock id Now reads, or EINVAL.
func baseClock(clockid int32) (int32, error) {
	switch clockid {
	case unix.CLOCK_REALTIME, unix.CLOCK_MONOTONIC, unix.CLOCK_MONOTONIC_RAW,
		unix.CLOCK_REALTIME_COARSE, unix.CLOCK_MONOTONIC_COARSE,
		unix.CLOCK_BOOTTIME, unix.CLOCK_TAI:
		return clockid, nil
	case unix.CLOCK_REALTIME_ALARM:
		return unix.CLOCK_REALTIME, nil
	case unix.CLOCK_BOOTTIME_ALARM:
		return unix.CLOCK_BOOTTIME, nil
	}
	return 0, unix.EINVAL
}

// publish writes the curves of every clock, all starting at TSC t1, into
// c.data. Precondition: inside a write section of c.data, c.mu held.
func (c *Clock) publish(t1 uint64, mono, raw curve) {
	d := &c.data
	d.tscBase.Store(t1)
	d.shift.Store(fixedShift)
	d.coarseRes.Store(c.coarseRes)
	real := mono.shifted(c.offReal)
	d.storeClock(unix.CLOCK_MONOTONIC, mono, modeFine)
	d.storeClock(unix.CLOCK_MONOTONIC_COARSE, mono, modeCoarse)
	d.storeClock(unix.CLOCK_REALTIME, real, modeFine)
	d.storeClock(unix.CLOCK_REALTIME_COARSE, real, modeCoarse)
	d.storeClock(unix.CLOCK_BOOTTIME, mono.shifted(c.offBoot), modeIf(c.bootOK))
	d.storeClock(unix.CLOCK_TAI, real.shifted(c.offTAI), modeIf(c.taiOK))
	d.storeClock(unix.CLOCK_MONOTONIC_RAW, raw, modeIf(c.rawOK))
}

func modeIf(ok bool) uint32 {
	if ok {
		return modeFine
	}
	return modeSyscall
}

// noteInterval folds the time since the last publication into the
// smoothed update interval.
func (c *Clock) noteInterval(t1 uint64) {
	iv := t1 - c.lastUpdate
	if int64(iv) <= 0 {
		return
	}
	if c.interval == 0 {
		c.interval = iv
		return
	}
	c.interval = (3*c.interval + iv) / 4
}

func (c *Clock) clampNs(ns, lo, hi float64) float64 {
	return math.Max(lo, math.Min(hi, ns))
}

// pairTSCOf is pairMono with tries readings, before the rate is known:
// the window is in cycles.
func (c *Clock) pairTSCOf(tries int) (sample, uint64) {
	var best sample
	bestWin := uint64(math.MaxUint64)
	for range tries {
		a := c.h.tsc()
		ns := c.h.nanotime()
		b := c.h.tsc()
		if w := b - a; int64(w) >= 0 && w < bestWin {
			bestWin = w
			best = sample{tsc: a + w/2, ns: ns}
		}
	}
	return best, bestWin
}

// pairMono reads the host's CLOCK_MONOTONIC between two TSC readings,
// pairTries times, and returns the tightest pairing (TSC at the middle of
// the window) and its window in ns.
func (c *Clock) pairMono() (sample, int64) {
	var best sample
	bestWin := uint64(math.MaxUint64)
	for range pairTries {
		a := c.h.tsc()
		ns := c.h.nanotime()
		b := c.h.tsc()
		if w := b - a; int64(w) >= 0 && w < bestWin {
			bestWin = w
			best = sample{tsc: a + w/2, ns: ns}
		}
	}
	return best, c.cyclesToNs(bestWin)
}

// pairClock is pairMono for any clock, read with a host syscall.
func (c *Clock) pairClock(id int32) (sample, int64, error) {
	var best sample
	bestWin := uint64(math.MaxUint64)
	for range pairTries {
		a := c.h.tsc()
		ns, err := c.h.gettime(id)
		b := c.h.tsc()
		if err != nil {
			return sample{}, 0, err
		}
		if w := b - a; int64(w) >= 0 && w < bestWin {
			bestWin = w
			best = sample{tsc: a + w/2, ns: ns}
		}
	}
	return best, c.cyclesToNs(bestWin), nil
}

func (c *Clock) cyclesToNs(cycles uint64) int64 {
	if cycles == math.MaxUint64 || c.mono.rate == 0 {
		return math.MaxInt64
	}
	return int64(float64(cycles) * c.mono.rate)
}

// measureOffsets refreshes the distances of REALTIME, BOOTTIME and TAI
// from their base clocks. Each only changes when the host's clock was set
// (or the host suspended); small differences are measurement noise and
// are ignored so the derived clocks stay exactly parallel to MONOTONIC.
func (c *Clock) measureOffsets(first bool) {
	// The first measurements stick until the host's clocks are set, so
	// they get more tries at a tight window.
	tries := pairTries
	if first {
		tries = 4 * pairTries
	}
	// REALTIME - MONOTONIC, from the host vDSO: wall is read between m1
	// and m2.
	bestWin := int64(math.MaxInt64)
	var real int64
	for range tries {
		m1 := c.h.nanotime()
		wall, m2 := c.h.now()
		if w := m2 - m1; w >= 0 && w < bestWin {
			bestWin, real = w, wall-(m1+(m2-m1)/2)
		}
	}
	// The reading is off by at most half its window, so a difference
	// beyond realStepNs plus the window is the host clock being set.
	if first || (bestWin < maxWindowNs && abs(real-c.offReal) > realStepNs+bestWin) {
		c.offReal = real
	}

	// BOOTTIME - MONOTONIC, by syscall between two vDSO readings. It only
	// grows.
	bestWin = math.MaxInt64
	var boot int64
	var bootErr error
	for range tries {
		m1 := c.h.nanotime()
		b, err := c.h.gettime(unix.CLOCK_BOOTTIME)
		m2 := c.h.nanotime()
		if err != nil {
			bootErr = err
			break
		}
		if w := m2 - m1; w >= 0 && w < bestWin {
			bestWin, boot = w, b-(m1+(m2-m1)/2)
		}
	}
	if first {
		c.bootOK = bootErr == nil
		c.offBoot = boot
	} else if bootErr == nil && bestWin < maxWindowNs && boot-c.offBoot > bootStepNs+bestWin {
		c.offBoot = boot
	}

	// TAI - REALTIME is a whole number of seconds.
	m1 := c.h.nanotime()
	wall, _ := c.h.now()
	tai, err := c.h.gettime(unix.CLOCK_TAI)
	m2 := c.h.nanotime()
	if first {
		c.taiOK = err == nil
	}
	if err == nil && m2-m1 < 100_000_000 {
		c.offTAI = int64(math.Round(float64(tai-wall)/1e9)) * 1e9
	}
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// toMult converts a rate in ns per cycle to fixed point.
func toMult(rate float64) uint64 {
	m := math.Round(rate * (1 << fixedShift))
	if m < 1 {
		return 1
	}
	return uint64(m)
}

// rebase re-expresses cv, whose switch point was d1 cycles ago, with its
// switch point now; the clock it describes does not change (up to a
// nanosecond of rounding, never backwards).
func rebase(cv curve, d1 uint64) curve {
	v1 := cv.at(d1, fixedShift)
	if int64(d1) < 0 {
		d1 = 0
	}
	if d1 < cv.slewEnd {
		return curve{base: v1, mult: cv.mult, slewEnd: cv.slewEnd - d1, baseEnd: cv.baseEnd, multEnd: cv.multEnd}
	}
	return curve{base: v1, mult: cv.multEnd, baseEnd: v1, multEnd: cv.multEnd}
}

// reset restarts the rate history from s.
func (t *track) reset(s sample) {
	t.hist[0] = s
	t.n = 1
}

// add records a host reading and refreshes the rate estimate from the
// oldest reading no more than maxBaselineNs old. rate (ns per cycle) is
// the current estimate, used to convert baselines to cycles.
func (t *track) add(s sample, rate float64) {
	if t.n == 0 || int64(s.tsc-t.hist[t.n-1].tsc) <= 0 {
		t.reset(s)
		return
	}
	age := func(old sample) float64 { return float64(s.tsc-old.tsc) * rate }
	// A reading far from where the last one and the rate predict is a
	// jump of the host clock (or of the TSC): averaging across it would
	// skew the rate for as long as it stays in the history. Right after a
	// restart the rate itself may be what is off (the host's frequency
	// changed), so the second reading is taken as it is.
	last := t.hist[t.n-1]
	pred := float64(last.ns) + float64(s.tsc-last.tsc)*t.rate
	if t.n > 1 && math.Abs(float64(s.ns)-pred) > t.jumpNs+maxRateError*age(last) {
		t.reset(s)
		return
	}
	for t.n > 1 && age(t.hist[1]) >= maxBaselineNs {
		t.drop()
	}
	oldest := t.hist[0]
	if b := age(oldest); b >= minBaselineNs {
		r := float64(s.ns-oldest.ns) / float64(s.tsc-oldest.tsc)
		if r < t.rate/2 || r > t.rate*2 {
			// The host clock and the TSC no longer agree at all (the
			// TSC was reset?): start over.
			t.reset(s)
			return
		}
		t.rate = r
	}
	// Keep readings spaced out in proportion to the baseline, so the
	// history spans up to maxBaselineNs with histSize entries.
	if age(t.hist[t.n-1]) >= age(oldest)/histSize {
		if t.n == histSize {
			t.drop()
		}
		t.hist[t.n] = s
		t.n++
	}
}

func (t *track) drop() {
	copy(t.hist[:], t.hist[1:t.n])
	t.n--
}

// start returns a curve that runs at the estimated rate through reading s,
// with its switch point at TSC t1.
func (t *track) start(s sample, t1 uint64) curve {
	m := toMult(t.rate)
	v := s.ns + int64(float64(int64(t1-s.tsc))*t.rate)
	return curve{base: v, mult: m, baseEnd: v, multEnd: m}
}

// next returns the curve that continues old (whose switch point was d1
// cycles before t1) from t1 on and steers towards the host clock, known
// through reading ref: it slews the error away over horizon cycles (at
// most maxSlew), or jumps forward when more than stepNs behind. It never
// goes back.
func (t *track) next(old curve, d1 uint64, ref sample, t1, horizon uint64) curve {
	v1 := old.at(d1, fixedShift)
	target := ref.ns + int64(float64(int64(t1-ref.tsc))*t.rate)
	e := target - v1
	m := toMult(t.rate)
	if e > stepNs {
		t.reset(ref)
		return curve{base: target, mult: m, baseEnd: target, multEnd: m}
	}
	if horizon == 0 {
		horizon = 1
	}
	corr := float64(e) / float64(horizon)
	lim := maxSlew * t.rate
	corr = math.Max(-lim, math.Min(lim, corr))
	sm := toMult(t.rate + corr)
	return curve{
		base:    v1,
		mult:    sm,
		slewEnd: horizon,
		baseEnd: v1 + int64(scale(horizon, sm, fixedShift)),
		multEnd: m,
	}
}
