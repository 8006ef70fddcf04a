package kernel

import (
	"sync"

	"golang.org/x/sys/unix"
)

// RLimInfinity is RLIM_INFINITY.
const RLimInfinity = ^uint64(0)

// Limit is one resource limit.
type Limit struct {
	Cur, Max uint64
}

// Limits are a process's resource limits.
type Limits struct {
	mu sync.Mutex
	l  [unix.RLIMIT_RTTIME + 1]Limit
}

// DefaultLimits returns the limits a sandbox's init starts with, as Linux
// gives a fresh login (with the host's NOFILE hard limit kept small).
func DefaultLimits() *Limits {
	l := &Limits{}
	for i := range l.l {
		l.l[i] = Limit{RLimInfinity, RLimInfinity}
	}
	l.l[unix.RLIMIT_CORE] = Limit{0, RLimInfinity}
	l.l[unix.RLIMIT_STACK] = Limit{8 << 20, RLimInfinity}
	l.l[unix.RLIMIT_NOFILE] = Limit{1024, 1 << 20}
	l.l[unix.RLIMIT_NPROC] = Limit{1 << 20, 1 << 20}
	l.l[unix.RLIMIT_MEMLOCK] = Limit{8 << 20, 8 << 20}
	l.l[unix.RLIMIT_SIGPENDING] = Limit{1 << 16, 1 << 16}
	l.l[unix.RLIMIT_MSGQUEUE] = Limit{819200, 819200}
	l.l[unix.RLIMIT_NICE] = Limit{0, 0}
	l.l[unix.RLIMIT_RTPRIO] = Limit{0, 0}
	return l
}

// Get returns limit r.
func (l *Limits) Get(r int) Limit {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.l[r]
}

// Set replaces limit r, returning the old one. Raising the hard limit
// needs privilege (privileged).
func (l *Limits) Set(r int, v Limit, privileged bool) (Limit, error) {
	if v.Cur > v.Max {
		return Limit{}, unix.EINVAL
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	old := l.l[r]
	if v.Max > old.Max && !privileged {
		return Limit{}, unix.EPERM
	}
	if r == unix.RLIMIT_NOFILE && v.Max > 1<<20 {
		return Limit{}, unix.EPERM
	}
	l.l[r] = v
	return old, nil
}

// Copy returns an independent copy (for fork).
func (l *Limits) Copy() *Limits {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := &Limits{l: l.l}
	return n
}
