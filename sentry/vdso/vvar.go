package vdso

import (
	"math/bits"
	"runtime"
	"sync/atomic"
)

// VVarSize is the size of the data page the Sentry maps immediately below
// Image in every address space.
const VVarSize = 4096

// Clock modes (vvarClock.mode), as in vdso.c.
const (
	modeSyscall = 0 // the vDSO makes the real syscall
	modeFine    = 1 // nanosecond clock evaluated from the page
	modeCoarse  = 2 // the same, rounded down to coarseRes
)

// numClocks is the number of clock ids the page describes (0..15).
const numClocks = 16

// fixedShift is the fixed-point shift of every mult the Sentry writes.
const fixedShift = 32

// vvarClock is one clock's curve; it mirrors struct vvar_clock in vdso.c
// (48 bytes). Fields are atomics because the page is read concurrently.
type vvarClock struct {
	base    atomic.Int64  // ns at tscBase
	mult    atomic.Uint64 // ns per cycle << shift, for the first slewEnd cycles
	slewEnd atomic.Uint64 // cycles after tscBase where the slew segment ends
	baseEnd atomic.Int64  // ns at tscBase + slewEnd
	multEnd atomic.Uint64 // ns per cycle << shift after the slew segment
	mode    atomic.Uint32 // mode*
	_       uint32
}

// vvarData mirrors struct vvar_data in vdso.c byte for byte: it is the
// start of the vvar page. vvar_unsafe.go checks the layout at compile time.
type vvarData struct {
	seq           atomic.Uint64 // odd while a writer is inside
	tscBase       atomic.Uint64 // TSC value every curve starts from
	shift         atomic.Uint32 // fixed-point shift of all mults
	_             uint32
	cpu           atomic.Uint32 // getcpu's answer
	node          atomic.Uint32
	tzMinutesWest atomic.Int32 // gettimeofday's timezone answer
	tzDSTTime     atomic.Int32
	coarseRes     atomic.Int64 // ns, resolution of the coarse clocks
	_             [2]uint64
	clocks        [numClocks]vvarClock
}

// curve is a plain copy of one clock's parameters: a clock reads
// base + cycles*mult>>shift for the first slewEnd cycles after the switch
// point, then continues from baseEnd at multEnd.
type curve struct {
	base    int64
	mult    uint64
	slewEnd uint64
	baseEnd int64
	multEnd uint64
}

// scale returns cycles*mult >> shift computed on 128 bits, truncated to 64
// bits exactly as vdso.c's scale does.
func scale(cycles, mult uint64, shift uint32) uint64 {
	hi, lo := bits.Mul64(cycles, mult)
	s := shift & 127
	switch {
	case s == 0:
		return lo
	case s < 64:
		return hi<<(64-s) | lo>>s
	default:
		return hi >> (s - 64)
	}
}

// at evaluates the curve delta cycles after its switch point. A negative
// delta (a TSC reading from before the switch point, e.g. on a CPU whose
// counter lags) counts as zero, so readings never precede the base.
func (c *curve) at(delta uint64, shift uint32) int64 {
	if int64(delta) < 0 {
		delta = 0
	}
	if delta < c.slewEnd {
		return c.base + int64(scale(delta, c.mult, shift))
	}
	return c.baseEnd + int64(scale(delta-c.slewEnd, c.multEnd, shift))
}

// shifted returns the curve moved by off nanoseconds.
func (c curve) shifted(off int64) curve {
	c.base += off
	c.baseEnd += off
	return c
}

// roundDown rounds ns down to a multiple of res (res > 0), towards minus
// infinity like vdso.c.
func roundDown(ns, res int64) int64 {
	if res <= 0 {
		return ns
	}
	rem := ns % res
	if rem < 0 {
		rem += res
	}
	return ns - rem
}

// read evaluates clock id (< numClocks) from d at the TSC value tsc()
// returns, with the same seqlock protocol and arithmetic as vdso.c's
// read_ns. ok is false when the clock is not served from the page.
func (d *vvarData) read(id int, tsc func() uint64) (ns int64, ok bool) {
	c := &d.clocks[id]
	for spins := 0; ; spins++ {
		seq := d.seq.Load()
		if seq&1 != 0 {
			if spins > 100 {
				runtime.Gosched()
			}
			continue
		}
		mode := c.mode.Load()
		if mode == modeSyscall {
			return 0, false
		}
		base := d.tscBase.Load()
		shift := d.shift.Load()
		cv := curve{
			base:    c.base.Load(),
			mult:    c.mult.Load(),
			slewEnd: c.slewEnd.Load(),
			baseEnd: c.baseEnd.Load(),
			multEnd: c.multEnd.Load(),
		}
		var res int64
		if mode == modeCoarse {
			res = d.coarseRes.Load()
		}
		now := tsc()
		if d.seq.Load() != seq {
			continue
		}
		ns = cv.at(now-base, shift)
		if mode == modeCoarse {
			ns = roundDown(ns, res)
		}
		return ns, true
	}
}

// loadCurve returns clock id's curve. Only the (single) writer may use it
// outside a read section.
func (d *vvarData) loadCurve(id int) curve {
	c := &d.clocks[id]
	return curve{
		base:    c.base.Load(),
		mult:    c.mult.Load(),
		slewEnd: c.slewEnd.Load(),
		baseEnd: c.baseEnd.Load(),
		multEnd: c.multEnd.Load(),
	}
}

// beginWrite makes d's sequence odd: readers retry until endWrite. It
// returns the value to pass to endWrite.
func (d *vvarData) beginWrite() uint64 {
	seq := d.seq.Load()
	if seq&1 == 0 {
		seq++
	}
	d.seq.Store(seq) // an xchg: later stores cannot pass it
	return seq
}

// endWrite publishes what was written since beginWrite returned seq.
func (d *vvarData) endWrite(seq uint64) {
	d.seq.Store(seq + 1)
}

// storeClock sets clock id's curve and mode. Precondition: inside a write
// section.
func (d *vvarData) storeClock(id int, cv curve, mode uint32) {
	c := &d.clocks[id]
	c.base.Store(cv.base)
	c.mult.Store(cv.mult)
	c.slewEnd.Store(cv.slewEnd)
	c.baseEnd.Store(cv.baseEnd)
	c.multEnd.Store(cv.multEnd)
	c.mode.Store(mode)
}

// copyFrom copies every parameter but the sequence from src. Precondition:
// inside a write section of d.
func (d *vvarData) copyFrom(src *vvarData) {
	d.tscBase.Store(src.tscBase.Load())
	d.shift.Store(src.shift.Load())
	d.cpu.Store(src.cpu.Load())
	d.node.Store(src.node.Load())
	d.tzMinutesWest.Store(src.tzMinutesWest.Load())
	d.tzDSTTime.Store(src.tzDSTTime.Load())
	d.coarseRes.Store(src.coarseRes.Load())
	for id := range src.clocks {
		d.storeClock(id, src.loadCurve(id), src.clocks[id].mode.Load())
	}
}
