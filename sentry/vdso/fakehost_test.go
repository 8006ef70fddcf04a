package vdso

import (
	"sync"

	"golang.org/x/sys/unix"
)

// line is a host clock as a linear function of the fake TSC.
type line struct {
	tsc0 uint64
	ns0  float64
	rate float64 // ns per cycle
}

func (l line) at(tsc uint64) float64 {
	return l.ns0 + float64(int64(tsc-l.tsc0))*l.rate
}

// fakeHost is a host whose TSC only moves when read (or advanced), and
// whose clocks are lines of it that tests can bend and jump.
type fakeHost struct {
	mu        sync.Mutex
	tsc       uint64
	tick      uint64 // cycles each cheap call takes
	sysTicks  uint64 // cycles a syscall takes
	mono, raw line
	// realOff, bootOff, taiOff: REALTIME-MONOTONIC, BOOTTIME-MONOTONIC,
	// TAI-REALTIME.
	realOff, bootOff, taiOff int64
	invariant                bool
	stuckTSC                 bool           // the TSC reads a constant
	missing                  map[int32]bool // clocks the host lacks
	slept                    int64          // ns the Clock slept
}

func newFakeHost() *fakeHost {
	const rate = 1 / 2.1 // a 2.1 GHz TSC
	return &fakeHost{
		tsc:       1 << 40,
		tick:      20,
		sysTicks:  2000,
		mono:      line{tsc0: 1 << 40, ns0: 5e12, rate: rate},
		raw:       line{tsc0: 1 << 40, ns0: 4.9e12, rate: rate},
		realOff:   1_700_000_000e9,
		invariant: true,
		missing:   map[int32]bool{},
	}
}

func (f *fakeHost) host() host {
	return host{
		tsc: func() uint64 {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.tsc += f.tick
			if f.stuckTSC {
				return 12345
			}
			return f.tsc
		},
		invariantTSC: func() bool { return f.invariant },
		nanotime: func() int64 {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.tsc += f.tick
			return int64(f.mono.at(f.tsc))
		},
		now: func() (int64, int64) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.tsc += f.tick
			wall := int64(f.mono.at(f.tsc)) + f.realOff
			f.tsc += f.tick
			return wall, int64(f.mono.at(f.tsc))
		},
		gettime: func(id int32) (int64, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.tsc += f.sysTicks / 2
			defer func() { f.tsc += f.sysTicks / 2 }()
			return f.read(id)
		},
		getres: func(id int32) (int64, error) {
			if id == unix.CLOCK_MONOTONIC_COARSE || id == unix.CLOCK_REALTIME_COARSE {
				return 4_000_000, nil
			}
			return 1, nil
		},
		sleep: func(ns int64) {
			f.advance(float64(ns))
			f.mu.Lock()
			f.slept += ns
			f.mu.Unlock()
		},
	}
}

// read returns the host's clock id at the current fake TSC.
// Precondition: f.mu held.
func (f *fakeHost) read(id int32) (int64, error) {
	if f.missing[id] {
		return 0, unix.EINVAL
	}
	mono := int64(f.mono.at(f.tsc))
	switch id {
	case unix.CLOCK_MONOTONIC, unix.CLOCK_MONOTONIC_COARSE:
		return mono, nil
	case unix.CLOCK_REALTIME, unix.CLOCK_REALTIME_COARSE:
		return mono + f.realOff, nil
	case unix.CLOCK_BOOTTIME:
		return mono + f.bootOff, nil
	case unix.CLOCK_TAI:
		return mono + f.realOff + f.taiOff, nil
	case unix.CLOCK_MONOTONIC_RAW:
		return int64(f.raw.at(f.tsc)), nil
	}
	return 0, unix.EINVAL
}

// Read returns the host's clock id now, without moving time.
func (f *fakeHost) Read(id int32) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	ns, err := f.read(id)
	if err != nil {
		panic(err)
	}
	return ns
}

// advance lets ns of host time pass (at the monotonic clock's rate).
func (f *fakeHost) advance(ns float64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tsc += uint64(ns / f.mono.rate)
}

// setRates changes how fast the host's clocks run against the TSC, from
// now on.
func (f *fakeHost) setRates(mono, raw float64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mono = line{tsc0: f.tsc, ns0: f.mono.at(f.tsc), rate: mono}
	f.raw = line{tsc0: f.tsc, ns0: f.raw.at(f.tsc), rate: raw}
}

// jumpMono moves the host's MONOTONIC (and the clocks built on it) by d.
func (f *fakeHost) jumpMono(d int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mono.ns0 += float64(d)
}

// resetTSC sets the TSC to v while the host clocks carry on (a restored
// snapshot, a migrated VM).
func (f *fakeHost) resetTSC(v uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mono = line{tsc0: v, ns0: f.mono.at(f.tsc), rate: f.mono.rate}
	f.raw = line{tsc0: v, ns0: f.raw.at(f.tsc), rate: f.raw.rate}
	f.tsc = v
}

func (f *fakeHost) set(fn func(f *fakeHost)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}
