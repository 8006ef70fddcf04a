package mm

import (
	"testing"

	"golang.org/x/sys/unix"
)

func unlimited() *Limits {
	return &Limits{AS: RLimInfinity, Data: RLimInfinity, DataMax: RLimInfinity, MemLock: RLimInfinity}
}

func TestMMapLimits(t *testing.T) {
	rw := unix.PROT_READ | unix.PROT_WRITE
	tests := []struct {
		name   string
		limits func(l *Limits)
		opts   MMapOpts
		err    error
	}{
		{"as allows", func(l *Limits) { l.AS = 64 * pageSize }, MMapOpts{Length: 16 * pageSize, Prot: unix.PROT_READ, Private: true}, nil},
		{"as refuses", func(l *Limits) { l.AS = 8 * pageSize }, MMapOpts{Length: 16 * pageSize, Prot: unix.PROT_READ, Private: true}, unix.ENOMEM},
		{"data refuses private writable", func(l *Limits) { l.Data, l.DataMax = 8*pageSize, 8*pageSize }, MMapOpts{Length: 16 * pageSize, Prot: rw, Private: true}, unix.ENOMEM},
		{"data ignores read-only", func(l *Limits) { l.Data, l.DataMax = 8*pageSize, 8*pageSize }, MMapOpts{Length: 16 * pageSize, Prot: unix.PROT_READ, Private: true}, nil},
		{"data ignores shared", func(l *Limits) { l.Data, l.DataMax = 8*pageSize, 8*pageSize }, MMapOpts{Length: 16 * pageSize, Prot: rw}, nil},
		{"data zero up to max", func(l *Limits) { l.Data, l.DataMax = 0, 32*pageSize }, MMapOpts{Length: 16 * pageSize, Prot: rw, Private: true}, nil},
		{"locked needs a limit", func(l *Limits) { l.MemLock = 0 }, MMapOpts{Length: pageSize, Prot: rw, Private: true, Locked: true}, unix.EPERM},
		{"locked over limit", func(l *Limits) { l.MemLock = 2 * pageSize }, MMapOpts{Length: 4 * pageSize, Prot: rw, Private: true, Locked: true}, unix.EAGAIN},
		{"locked with CAP_IPC_LOCK", func(l *Limits) { l.MemLock, l.IPCLock = 0, true }, MMapOpts{Length: 4 * pageSize, Prot: rw, Private: true, Locked: true}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestMM(t)
			l := unlimited()
			tc.limits(l)
			tc.opts.Limits = l
			if _, err := m.MMap(tc.opts); err != tc.err {
				t.Fatalf("MMap = %v, want %v", err, tc.err)
			}
		})
	}
}

func TestMLockAccounting(t *testing.T) {
	m := newTestMM(t)
	l := unlimited()
	l.MemLock = 8 * pageSize
	addr, err := m.MMap(MMapOpts{Length: 16 * pageSize, Prot: unix.PROT_READ | unix.PROT_WRITE, Private: true})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name       string
		lock       bool
		off, pages uintptr
		err        error
		locked     uint64
	}{
		{"within limit", true, 0, 8, nil, 8 * pageSize},
		{"over limit", true, 8, 1, unix.ENOMEM, 8 * pageSize},
		{"relock is free", true, 0, 8, nil, 8 * pageSize},
		{"unlock part", false, 0, 4, nil, 4 * pageSize},
		{"room again", true, 8, 4, nil, 8 * pageSize},
	}
	for _, s := range steps {
		var err error
		if s.lock {
			err = m.MLock(addr+s.off*pageSize, s.pages*pageSize, true, l)
		} else {
			err = m.MUnlock(addr+s.off*pageSize, s.pages*pageSize)
		}
		if err != s.err {
			t.Fatalf("%s: err %v, want %v", s.name, err, s.err)
		}
		if got := m.LockedSize(); got != s.locked {
			t.Fatalf("%s: locked %d, want %d", s.name, got, s.locked)
		}
	}
	if err := m.MAdviseDontNeed(addr+8*pageSize, pageSize); err != unix.EINVAL {
		t.Fatalf("MADV_DONTNEED on locked pages = %v, want EINVAL", err)
	}
	c, err := m.Fork()
	if err != nil {
		t.Fatal(err)
	}
	if got := c.LockedSize(); got != 0 {
		t.Fatalf("fork child has %d locked bytes", got)
	}
	m.MUnlockAll()
	if got := m.LockedSize(); got != 0 {
		t.Fatalf("after munlockall: %d locked", got)
	}
}

func TestBrkLimits(t *testing.T) {
	m := newTestMM(t)
	Loader{M: m}.SetBrkStart(0x600000)
	l := unlimited()
	l.Data = 4 * pageSize
	if got := m.Brk(0x600000+8*pageSize, l); got != 0x600000 {
		t.Fatalf("brk past RLIMIT_DATA = %#x, want it unchanged", got)
	}
	if got := m.Brk(0x600000+2*pageSize, l); got != 0x600000+2*pageSize {
		t.Fatalf("brk within RLIMIT_DATA = %#x", got)
	}
	l.Data, l.AS = RLimInfinity, m.VirtualSize()+pageSize
	if got := m.Brk(0x600000+8*pageSize, l); got != 0x600000+2*pageSize {
		t.Fatalf("brk past RLIMIT_AS = %#x, want it unchanged", got)
	}
}

func TestMProtectMergesBack(t *testing.T) {
	m := newTestMM(t)
	rw := unix.PROT_READ | unix.PROT_WRITE
	addr, err := m.MMap(MMapOpts{Length: 3 * pageSize, Prot: rw, Private: true})
	if err != nil {
		t.Fatal(err)
	}
	count := func() int {
		m.mu.RLock()
		defer m.mu.RUnlock()
		n := 0
		for _, v := range m.vmas {
			if v.start < addr+3*pageSize && addr < v.end {
				n++
			}
		}
		return n
	}
	steps := []struct {
		name string
		prot int
		want int
	}{
		{"split", unix.PROT_READ, 3},
		{"merged back", rw, 1},
	}
	for _, s := range steps {
		if err := m.MProtect(addr+pageSize, pageSize, s.prot, MProtectOpts{}); err != nil {
			t.Fatal(err)
		}
		if got := count(); got != s.want {
			t.Fatalf("%s: %d vmas, want %d", s.name, got, s.want)
		}
	}
	// Locking the middle splits it too, and unlocking merges it back.
	if err := m.MLock(addr+pageSize, pageSize, true, nil); err != nil {
		t.Fatal(err)
	}
	if got := count(); got != 3 {
		t.Fatalf("locked middle: %d vmas", got)
	}
	if err := m.MUnlock(addr+pageSize, pageSize); err != nil {
		t.Fatal(err)
	}
	if got := count(); got != 1 {
		t.Fatalf("unlocked: %d vmas", got)
	}
}
