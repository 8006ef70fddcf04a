package mm

import (
	"testing"

	"golang.org/x/sys/unix"
)

const rw = unix.PROT_READ | unix.PROT_WRITE

// fillWith writes b to every byte of [addr, addr+n).
func fillWith(t *testing.T, m *MemoryManager, addr, n uintptr, b byte) {
	t.Helper()
	buf := make([]byte, n)
	for i := range buf {
		buf[i] = b
	}
	if _, err := m.CopyOut(addr, buf); err != nil {
		t.Fatalf("CopyOut(%#x, %d): %v", addr, n, err)
	}
}

// byteAt reads one byte, or returns the error.
func byteAt(m *MemoryManager, addr uintptr) (byte, error) {
	var b [1]byte
	_, err := m.CopyIn(addr, b[:])
	return b[0], err
}

func TestForkAdvice(t *testing.T) {
	for _, tc := range []struct {
		name   string
		advice int
		// child is what the child reads at the advised page: -1 for
		// EFAULT (not mapped).
		child int
	}{
		{"dontfork", unix.MADV_DONTFORK, -1},
		{"wipeonfork", unix.MADV_WIPEONFORK, 0},
		{"dontfork then dofork", unix.MADV_DOFORK, 7},
		{"wipeonfork then keeponfork", unix.MADV_KEEPONFORK, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestMM(t)
			defer m.DecUsers()
			addr, err := m.MMap(MMapOpts{Length: 2 * pageSize, Prot: rw, Private: true})
			if err != nil {
				t.Fatal(err)
			}
			fillWith(t, m, addr, 2*pageSize, 7)
			switch tc.advice {
			case unix.MADV_DOFORK:
				if err := m.MAdviseFork(addr, pageSize, unix.MADV_DONTFORK); err != nil {
					t.Fatal(err)
				}
			case unix.MADV_KEEPONFORK:
				if err := m.MAdviseFork(addr, pageSize, unix.MADV_WIPEONFORK); err != nil {
					t.Fatal(err)
				}
			}
			if err := m.MAdviseFork(addr, pageSize, tc.advice); err != nil {
				t.Fatalf("MAdviseFork: %v", err)
			}
			c, err := m.Fork()
			if err != nil {
				t.Fatal(err)
			}
			defer c.DecUsers()
			got, err := byteAt(c, addr)
			switch {
			case tc.child < 0 && err != unix.EFAULT:
				t.Errorf("child read %d, %v; want EFAULT", got, err)
			case tc.child >= 0 && (err != nil || int(got) != tc.child):
				t.Errorf("child read %d, %v; want %d", got, err, tc.child)
			}
			// The page after the advised one is copied as usual, and
			// the parent keeps its own.
			if got, err := byteAt(c, addr+pageSize); err != nil || got != 7 {
				t.Errorf("child's second page: %d, %v", got, err)
			}
			if got, err := byteAt(m, addr); err != nil || got != 7 {
				t.Errorf("parent's page: %d, %v", got, err)
			}
		})
	}
}

func TestForkAdviceErrors(t *testing.T) {
	m := newTestMM(t)
	defer m.DecUsers()
	shared, _ := m.MMap(MMapOpts{Length: pageSize, Prot: rw})
	if err := m.MAdviseFork(shared, pageSize, unix.MADV_WIPEONFORK); err != unix.EINVAL {
		t.Errorf("WIPEONFORK on shared memory: %v, want EINVAL", err)
	}
	addr, _ := m.MMap(MMapOpts{Length: 2 * pageSize, Prot: rw, Private: true})
	m.MUnmap(addr+pageSize, pageSize)
	if err := m.MAdviseFork(addr, 2*pageSize, unix.MADV_DONTFORK); err != unix.ENOMEM {
		t.Errorf("DONTFORK over a hole: %v, want ENOMEM", err)
	}
}

func TestMRemapDontUnmap(t *testing.T) {
	m := newTestMM(t)
	defer m.DecUsers()
	addr, _ := m.MMap(MMapOpts{Length: pageSize, Prot: rw, Private: true})
	fillWith(t, m, addr, pageSize, 'm')
	for _, tc := range []struct {
		name string
		old  uintptr
		size uintptr
		o    MRemapOpts
	}{
		{"without MAYMOVE", pageSize, pageSize, MRemapOpts{DontUnmap: true}},
		{"resizing", pageSize, 2 * pageSize, MRemapOpts{MayMove: true, DontUnmap: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := m.MRemap(addr, tc.old, tc.size, tc.o); err != unix.EINVAL {
				t.Errorf("MRemap: %v, want EINVAL", err)
			}
		})
	}
	n, err := m.MRemap(addr, pageSize, pageSize, MRemapOpts{MayMove: true, DontUnmap: true})
	if err != nil || n == addr {
		t.Fatalf("MRemap = %#x, %v", n, err)
	}
	if got, err := byteAt(m, n); err != nil || got != 'm' {
		t.Errorf("new range: %q, %v", got, err)
	}
	if got, err := byteAt(m, addr); err != nil || got != 0 {
		t.Errorf("old range: %q, %v; want mapped and zero", got, err)
	}
}

func TestResidentFollowsTouchedPages(t *testing.T) {
	m := newTestMM(t)
	defer m.DecUsers()
	addr, _ := m.MMap(MMapOpts{Length: 4 * pageSize, Prot: rw, Private: true})
	// Populate every page without touching any, as a fault's chunk does.
	m.mu.Lock()
	m.populate(m.vmas[m.findVMA(addr)], addr, addr+4*pageSize)
	m.mu.Unlock()
	m.CopyOut(addr, []byte{1})
	m.CopyOut(addr+2*pageSize, []byte{1})
	got, err := m.Resident(addr, 4*pageSize)
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte{1, 0, 1, 0}; string(got) != string(want) {
		t.Errorf("Resident = %v, want %v", got, want)
	}
	if err := m.MLock(addr, 4*pageSize, false, nil); err != nil {
		t.Fatal(err)
	}
	got, _ = m.Resident(addr, 4*pageSize)
	if want := []byte{1, 1, 1, 1}; string(got) != string(want) {
		t.Errorf("after mlock: Resident = %v, want %v", got, want)
	}
	// Locked pages cannot be dropped; unlocked they can.
	if err := m.MUnlock(addr, 4*pageSize); err != nil {
		t.Fatal(err)
	}
	m.MAdviseDontNeed(addr, pageSize)
	got, _ = m.Resident(addr, pageSize)
	if got[0] != 0 {
		t.Errorf("after MADV_DONTNEED: resident")
	}
	if _, err := m.Resident(addr, 5*pageSize); err != unix.ENOMEM {
		t.Errorf("Resident past the mapping: %v, want ENOMEM", err)
	}
}

func TestCommitLimit(t *testing.T) {
	m := newTestMM(t)
	defer m.DecUsers()
	huge := uintptr(1) << 46
	if _, err := m.MMap(MMapOpts{Length: huge, Prot: rw, Private: true}); err != unix.ENOMEM {
		t.Errorf("private writable %#x bytes: %v, want ENOMEM", huge, err)
	}
	for _, o := range []MMapOpts{
		{Length: huge, Prot: rw, Private: true, NoReserve: true},
		{Length: huge, Prot: unix.PROT_NONE, Private: true},
	} {
		a, err := m.MMap(o)
		if err != nil {
			t.Errorf("MMap(%+v): %v (not committed, so allowed)", o, err)
			continue
		}
		m.MUnmap(a, o.Length)
	}
	Loader{M: m}.SetBrkStart(0x600000)
	if got := m.Brk(0x600000+huge, nil); got != 0x600000 {
		t.Errorf("brk of %#x bytes = %#x, want it unchanged", huge, got)
	}
	if got := m.Brk(0x600000+16*pageSize, nil); got != 0x600000+16*pageSize {
		t.Errorf("brk = %#x", got)
	}
}

func TestMaxResidentSize(t *testing.T) {
	m := newTestMM(t)
	defer m.DecUsers()
	addr, _ := m.MMap(MMapOpts{Length: 8 * pageSize, Prot: rw, Private: true})
	fillWith(t, m, addr, 8*pageSize, 1)
	if got := m.ResidentSize(); got != 8*pageSize {
		t.Errorf("ResidentSize = %d, want %d", got, 8*pageSize)
	}
	moved, err := m.MRemap(addr, 8*pageSize, 8*pageSize, MRemapOpts{MayMove: true, Fixed: true, NewAddr: addr + 64*pageSize})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.ResidentSize(); got != 8*pageSize {
		t.Errorf("after a move: ResidentSize = %d, want %d", got, 8*pageSize)
	}
	m.MUnmap(moved, 8*pageSize)
	if got, max := m.ResidentSize(), m.MaxResidentSize(); got != 0 || max != 8*pageSize {
		t.Errorf("after munmap: ResidentSize %d, MaxResidentSize %d; want 0, %d", got, max, 8*pageSize)
	}
}
