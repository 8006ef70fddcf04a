package mm

import (
	"bytes"
	"errors"
	"io"
	"math/rand"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

func newTestObject(t *testing.T, size int64) (*Object, *MemoryFile) {
	t.Helper()
	mf, err := NewMemoryFile()
	if err != nil {
		t.Fatal(err)
	}
	return NewObject(mf, size, nil), mf
}

func readAll(t *testing.T, o *Object) []byte {
	t.Helper()
	b := make([]byte, o.Size())
	if n, err := o.ReadAt(b, 0); n != len(b) || (err != nil && err != io.EOF) {
		t.Fatalf("ReadAt whole object: %d %v", n, err)
	}
	return b
}

func TestObjectReadWrite(t *testing.T) {
	o, mf := newTestObject(t, 0)
	if n, err := o.ReadAt(make([]byte, 4), 0); n != 0 || err != io.EOF {
		t.Fatalf("read of empty object: %d %v", n, err)
	}
	// A sparse write: one page allocated, the rest a hole.
	if n, err := o.WriteAt([]byte("far"), 3*pageSize+10); n != 3 || err != nil {
		t.Fatalf("WriteAt: %d %v", n, err)
	}
	if got, want := o.Size(), int64(3*pageSize+13); got != want {
		t.Fatalf("size %d, want %d", got, want)
	}
	if got := o.Allocated(); got != pageSize {
		t.Fatalf("allocated %d, want one page", got)
	}
	buf := make([]byte, 20)
	n, err := o.ReadAt(buf, 3*pageSize)
	if n != 13 || err != io.EOF {
		t.Fatalf("read at the end: %d %v", n, err)
	}
	if !bytes.Equal(buf[:13], append(make([]byte, 10), "far"...)) {
		t.Fatalf("read %q", buf[:13])
	}
	// A write spanning pages.
	data := bytes.Repeat([]byte("0123456789"), 1000)
	if n, err := o.WriteAt(data, 100); n != len(data) || err != nil {
		t.Fatalf("WriteAt: %d %v", n, err)
	}
	got := make([]byte, len(data))
	if n, err := o.ReadAt(got, 100); n != len(data) || err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d %v equal=%v", n, err, bytes.Equal(got, data))
	}
	if _, err := o.WriteAt([]byte("x"), MaxObjectSize); err != unix.EFBIG {
		t.Fatalf("write at the largest offset: %v, want EFBIG", err)
	}
	if _, err := o.WriteAt([]byte("x"), -1); err != unix.EINVAL {
		t.Fatalf("negative offset: %v", err)
	}
	o.DecRef()
	if u := mf.Used(); u != 0 {
		t.Fatalf("%d bytes leaked", u)
	}
}

func TestObjectTruncateAndHoles(t *testing.T) {
	tests := []struct {
		name string
		op   func(o *Object) error
		// want is the object's contents afterwards, from a 3-page object
		// full of 'a'.
		want      func() []byte
		allocated int64
	}{
		{
			name:      "shrink mid page zeroes the tail",
			op:        func(o *Object) error { return o.Truncate(pageSize + 10) },
			want:      func() []byte { return bytes.Repeat([]byte("a"), pageSize+10) },
			allocated: 2 * pageSize,
		},
		{
			name: "shrink then grow reads zeros",
			op: func(o *Object) error {
				if err := o.Truncate(10); err != nil {
					return err
				}
				return o.Truncate(2 * pageSize)
			},
			want:      func() []byte { return append(bytes.Repeat([]byte("a"), 10), make([]byte, 2*pageSize-10)...) },
			allocated: pageSize,
		},
		{
			name: "punch whole middle page",
			op:   func(o *Object) error { return o.PunchHole(pageSize, pageSize) },
			want: func() []byte {
				b := bytes.Repeat([]byte("a"), 3*pageSize)
				clear(b[pageSize : 2*pageSize])
				return b
			},
			allocated: 2 * pageSize,
		},
		{
			name: "punch partial pages zeroes without freeing",
			op:   func(o *Object) error { return o.PunchHole(100, pageSize) },
			want: func() []byte {
				b := bytes.Repeat([]byte("a"), 3*pageSize)
				clear(b[100 : pageSize+100])
				return b
			},
			allocated: 3 * pageSize,
		},
		{
			name:      "allocate keep size",
			op:        func(o *Object) error { return o.Allocate(3*pageSize, 2*pageSize, true) },
			want:      func() []byte { return bytes.Repeat([]byte("a"), 3*pageSize) },
			allocated: 5 * pageSize,
		},
		{
			name:      "allocate grows",
			op:        func(o *Object) error { return o.Allocate(3*pageSize, 10, false) },
			want:      func() []byte { return append(bytes.Repeat([]byte("a"), 3*pageSize), make([]byte, 10)...) },
			allocated: 4 * pageSize,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, mf := newTestObject(t, 0)
			o.WriteAt(bytes.Repeat([]byte("a"), 3*pageSize), 0)
			if err := tc.op(o); err != nil {
				t.Fatal(err)
			}
			if got := readAll(t, o); !bytes.Equal(got, tc.want()) {
				t.Fatalf("contents differ (len %d, want %d)", len(got), len(tc.want()))
			}
			if got := o.Allocated(); got != tc.allocated {
				t.Fatalf("allocated %d, want %d", got, tc.allocated)
			}
			if got := int64(mf.Used()); got != tc.allocated {
				t.Fatalf("memory file holds %d, want %d", got, tc.allocated)
			}
			o.DecRef()
			if u := mf.Used(); u != 0 {
				t.Fatalf("%d bytes leaked", u)
			}
		})
	}
}

func TestObjectSeekDataHole(t *testing.T) {
	o, _ := newTestObject(t, 0)
	o.WriteAt([]byte("x"), 2*pageSize+5) // pages 0,1 holes; page 2 data
	o.Truncate(4*pageSize + 1)           // page 3,4 holes
	tests := []struct {
		name    string
		seek    func(int64) (int64, error)
		off     int64
		want    int64
		wantErr error
	}{
		{"data from 0", o.SeekData, 0, 2 * pageSize, nil},
		{"data inside data", o.SeekData, 2*pageSize + 7, 2*pageSize + 7, nil},
		{"data after last", o.SeekData, 3 * pageSize, 0, unix.ENXIO},
		{"data past end", o.SeekData, 5 * pageSize, 0, unix.ENXIO},
		{"hole from 0", o.SeekHole, 0, 0, nil},
		{"hole inside data", o.SeekHole, 2 * pageSize, 3 * pageSize, nil},
		{"hole past end", o.SeekHole, 4*pageSize + 1, 0, unix.ENXIO},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.seek(tc.off)
			if err != tc.wantErr || (err == nil && got != tc.want) {
				t.Fatalf("got %d %v, want %d %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestObjectSeals(t *testing.T) {
	o, _ := newTestObject(t, 0)
	o.WriteAt([]byte("hello"), 0)
	if err := o.AddSeals(0x100, false); err != unix.EINVAL {
		t.Fatalf("unknown seal: %v", err)
	}
	if err := o.AddSeals(unix.F_SEAL_SHRINK|unix.F_SEAL_GROW, false); err != nil {
		t.Fatal(err)
	}
	if err := o.Truncate(2); err != unix.EPERM {
		t.Fatalf("shrink with F_SEAL_SHRINK: %v", err)
	}
	if err := o.Truncate(20); err != unix.EPERM {
		t.Fatalf("grow with F_SEAL_GROW: %v", err)
	}
	if _, err := o.WriteAt([]byte("!"), 5); err != unix.EPERM {
		t.Fatalf("appending with F_SEAL_GROW: %v", err)
	}
	if n, err := o.WriteAt([]byte("J"), 0); n != 1 || err != nil {
		t.Fatalf("overwrite with F_SEAL_GROW: %d %v", n, err)
	}
	if err := o.Allocate(0, pageSize*2, false); err != unix.EPERM {
		t.Fatalf("growing fallocate with F_SEAL_GROW: %v", err)
	}

	// F_SEAL_WRITE is refused while a shared mapping may write.
	m := newTestMMWithFile(t, o.mf)
	addr, err := m.MMap(MMapOpts{Length: pageSize, Prot: unix.PROT_READ | unix.PROT_WRITE, Object: o})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.AddSeals(unix.F_SEAL_WRITE, false); err != unix.EBUSY {
		t.Fatalf("F_SEAL_WRITE with a writable mapping: %v", err)
	}
	m.MUnmap(addr, pageSize)
	if err := o.AddSeals(unix.F_SEAL_WRITE, false); err != nil {
		t.Fatalf("F_SEAL_WRITE after munmap: %v", err)
	}
	if _, err := o.WriteAt([]byte("x"), 0); err != unix.EPERM {
		t.Fatalf("write with F_SEAL_WRITE: %v", err)
	}
	if err := o.PunchHole(0, 1); err != unix.EPERM {
		t.Fatalf("punch with F_SEAL_WRITE: %v", err)
	}
	if _, err := m.MMap(MMapOpts{Length: pageSize, Prot: unix.PROT_READ | unix.PROT_WRITE, Object: o}); err != unix.EPERM {
		t.Fatalf("writable shared mmap of a sealed object: %v", err)
	}
	ro, err := m.MMap(MMapOpts{Length: pageSize, Prot: unix.PROT_READ, Object: o})
	if err != nil {
		t.Fatalf("read-only shared mmap: %v", err)
	}
	if err := m.MProtect(ro, pageSize, unix.PROT_READ|unix.PROT_WRITE, MProtectOpts{}); err != unix.EACCES {
		t.Fatalf("mprotect to writable: %v", err)
	}
	if _, err := m.MMap(MMapOpts{Length: pageSize, Prot: unix.PROT_READ | unix.PROT_WRITE, Private: true, Object: o}); err != nil {
		t.Fatalf("private writable mmap of a sealed object: %v", err)
	}
	if err := o.AddSeals(unix.F_SEAL_SEAL, false); err != nil {
		t.Fatal(err)
	}
	if err := o.AddSeals(unix.F_SEAL_SHRINK, false); err != unix.EPERM {
		t.Fatalf("sealing after F_SEAL_SEAL: %v", err)
	}
	if got, want := o.Seals(), unix.F_SEAL_SEAL|unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE; got != want {
		t.Fatalf("seals %#x, want %#x", got, want)
	}
	m.DecUsers()
}

func newTestMMWithFile(t *testing.T, mf *MemoryFile) *MemoryManager {
	t.Helper()
	return New(nil, mf)
}

func TestObjectMappings(t *testing.T) {
	o, mf := newTestObject(t, 2*pageSize)
	m := newTestMMWithFile(t, mf)
	rw := unix.PROT_READ | unix.PROT_WRITE
	shared, err := m.MMap(MMapOpts{Length: 2 * pageSize, Prot: rw, Object: o})
	if err != nil {
		t.Fatal(err)
	}
	private, err := m.MMap(MMapOpts{Length: 2 * pageSize, Prot: rw, Private: true, Object: o})
	if err != nil {
		t.Fatal(err)
	}
	read := func(mm *MemoryManager, addr uintptr, n int) string {
		t.Helper()
		b := make([]byte, n)
		if _, err := mm.CopyIn(addr, b); err != nil {
			t.Fatalf("CopyIn at %#x: %v", addr, err)
		}
		return string(b)
	}

	// A write through the shared mapping reaches the object and the
	// private mapping (whose page is not copied yet).
	if _, err := m.CopyOut(shared+10, []byte("shared")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 6)
	o.ReadAt(b, 10)
	if string(b) != "shared" {
		t.Fatalf("object reads %q", b)
	}
	if got := read(m, private+10, 6); got != "shared" {
		t.Fatalf("private mapping reads %q", got)
	}
	// A write(2) is seen through the mappings.
	o.WriteAt([]byte("WRITE"), pageSize)
	if got := read(m, shared+pageSize, 5); got != "WRITE" {
		t.Fatalf("shared mapping reads %q after WriteAt", got)
	}
	// A write through the private mapping stays private.
	if _, err := m.CopyOut(private+10, []byte("PRIV")); err != nil {
		t.Fatal(err)
	}
	if got := read(m, shared+10, 6); got != "shared" {
		t.Fatalf("shared mapping reads %q after a private write", got)
	}
	o.WriteAt([]byte("later"), 100)
	if got := read(m, private+100, 5); got == "later" {
		t.Fatal("a copied private page still follows the object")
	}

	// Across fork, the shared page stays shared.
	c, err := m.Fork()
	if err != nil {
		t.Fatal(err)
	}
	c.CopyOut(shared+200, []byte("child"))
	if got := read(m, shared+200, 5); got != "child" {
		t.Fatalf("parent reads %q after the child's shared write", got)
	}

	// Truncation removes the pages from both address spaces: the Sentry's
	// access past the end faults.
	if err := o.Truncate(pageSize); err != nil {
		t.Fatal(err)
	}
	for _, mm := range []*MemoryManager{m, c} {
		if _, err := mm.CopyIn(shared+pageSize, make([]byte, 1)); err != unix.EFAULT {
			t.Fatalf("access past the end after truncate: %v", err)
		}
		if _, err := mm.CopyIn(private+pageSize, make([]byte, 1)); err != unix.EFAULT {
			t.Fatalf("private access past the end after truncate: %v", err)
		}
	}
	// A copy straddling the end stops at it.
	if n, err := m.CopyIn(shared+pageSize-4, make([]byte, 8)); n != 4 || err != unix.EFAULT {
		t.Fatalf("straddling copy: %d %v", n, err)
	}

	// Punching a hole zeroes the shared view and keeps private copies.
	if err := o.PunchHole(0, pageSize); err != nil {
		t.Fatal(err)
	}
	if got := read(m, shared+10, 6); got != "\x00\x00\x00\x00\x00\x00" {
		t.Fatalf("shared mapping reads %q after punching", got)
	}
	if got := read(m, private+10, 4); got != "PRIV" {
		t.Fatalf("private copy reads %q after punching", got)
	}

	c.DecUsers()
	m.DecUsers()
	o.DecRef()
	if u := mf.Used(); u != 0 {
		t.Fatalf("%d bytes leaked", u)
	}
}

func TestSharedAnonymousIsObject(t *testing.T) {
	m := newTestMM(t)
	addr, err := m.MMap(MMapOpts{Length: 2 * pageSize, Prot: unix.PROT_READ | unix.PROT_WRITE})
	if err != nil {
		t.Fatal(err)
	}
	c, err := m.Fork()
	if err != nil {
		t.Fatal(err)
	}
	c.CopyOut(addr+pageSize, []byte("both"))
	b := make([]byte, 4)
	m.CopyIn(addr+pageSize, b)
	if string(b) != "both" {
		t.Fatalf("parent reads %q", b)
	}
	// Growing the mapping in place does not grow the object: the new part
	// is past its end.
	if _, err := m.MRemap(addr, 2*pageSize, 3*pageSize, MRemapOpts{}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.CopyIn(addr+2*pageSize, b); err != unix.EFAULT {
		t.Fatalf("past the end of the shared object: %v", err)
	}
	c.DecUsers()
	m.DecUsers()
	if u := m.mf.Used(); u != 0 {
		t.Fatalf("%d bytes leaked", u)
	}
}

func TestObjectBudget(t *testing.T) {
	mf, err := NewMemoryFile()
	if err != nil {
		t.Fatal(err)
	}
	var b Budget
	b.SetLimit(2 * pageSize)
	o := NewObject(mf, 0, &b)
	// A write beyond the budget writes what fits.
	n, err := o.WriteAt(make([]byte, 3*pageSize), 0)
	if n != 2*pageSize || err != nil {
		t.Fatalf("write over budget: %d %v", n, err)
	}
	if _, err := o.WriteAt([]byte("x"), 5*pageSize); err != unix.ENOSPC {
		t.Fatalf("write with the budget spent: %v", err)
	}
	if err := o.Allocate(2*pageSize, pageSize, false); !errors.Is(err, unix.ENOSPC) {
		t.Fatalf("fallocate over budget: %v", err)
	}
	if got := b.Used(); got != 2*pageSize {
		t.Fatalf("used %d", got)
	}
	o.Truncate(0)
	if got := b.Used(); got != 0 {
		t.Fatalf("used %d after truncate", got)
	}
	o.DecRef()
}

// TestObjectModel runs random operations against the object and a plain
// byte slice and compares them.
func TestObjectModel(t *testing.T) {
	o, mf := newTestObject(t, 0)
	var model []byte
	r := rand.New(rand.NewSource(1))
	const span = 6 * pageSize
	for i := 0; i < 2000; i++ {
		off := int64(r.Intn(span))
		n := int64(r.Intn(2*pageSize) + 1)
		switch r.Intn(4) {
		case 0:
			data := make([]byte, n)
			r.Read(data)
			o.WriteAt(data, off)
			if int64(len(model)) < off+n {
				model = append(model, make([]byte, off+n-int64(len(model)))...)
			}
			copy(model[off:], data)
		case 1:
			o.Truncate(off)
			if int64(len(model)) > off {
				model = model[:off]
			} else {
				model = append(model, make([]byte, off-int64(len(model)))...)
			}
		case 2:
			o.PunchHole(off, n)
			for j := off; j < off+n && j < int64(len(model)); j++ {
				model[j] = 0
			}
		case 3:
			o.Allocate(off, n, r.Intn(2) == 0)
		}
		if i%50 == 0 || i == 1999 {
			if o.Size() < int64(len(model)) {
				model = model[:o.Size()] // fallocate never shrinks; keep both honest
			}
			for int64(len(model)) < o.Size() {
				model = append(model, 0)
			}
			if got := readAll(t, o); !bytes.Equal(got, model) {
				t.Fatalf("step %d: contents differ", i)
			}
		}
	}
	o.DecRef()
	if u := mf.Used(); u != 0 {
		t.Fatalf("%d bytes leaked", u)
	}
}

func TestMAdviseRemoveAndFree(t *testing.T) {
	o, mf := newTestObject(t, 2*pageSize)
	m := newTestMMWithFile(t, mf)
	rw := unix.PROT_READ | unix.PROT_WRITE
	shared, _ := m.MMap(MMapOpts{Length: 2 * pageSize, Prot: rw, Object: o})
	ro, _ := m.MMap(MMapOpts{Length: pageSize, Prot: unix.PROT_READ, MaxProt: unix.PROT_READ, Object: o})
	private, _ := m.MMap(MMapOpts{Length: pageSize, Prot: rw, Private: true, Object: o})
	anon, _ := m.MMap(MMapOpts{Length: pageSize, Prot: rw, Private: true})
	sharedAnon, _ := m.MMap(MMapOpts{Length: pageSize, Prot: rw})
	m.CopyOut(shared, bytes.Repeat([]byte("s"), 2*pageSize))
	tests := []struct {
		name string
		fn   func() error
		want error
	}{
		{"remove shared", func() error { return m.MAdviseRemove(shared, pageSize) }, nil},
		{"remove read-only shared", func() error { return m.MAdviseRemove(ro, pageSize) }, unix.EACCES},
		{"remove private file", func() error { return m.MAdviseRemove(private, pageSize) }, unix.EACCES},
		{"remove anonymous", func() error { return m.MAdviseRemove(anon, pageSize) }, unix.EINVAL},
		{"remove shared anonymous", func() error { return m.MAdviseRemove(sharedAnon, pageSize) }, nil},
		{"free anonymous", func() error { return m.MAdviseFree(anon, pageSize) }, nil},
		{"free shared", func() error { return m.MAdviseFree(shared, pageSize) }, unix.EINVAL},
		{"free private file", func() error { return m.MAdviseFree(private, pageSize) }, unix.EINVAL},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.fn(); err != tc.want {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
	b := make([]byte, 2)
	o.ReadAt(b, pageSize-1)
	if string(b) != "\x00s" {
		t.Fatalf("after MADV_REMOVE of the first page the object reads %q", b)
	}
	if got := o.Allocated(); got != pageSize {
		t.Fatalf("allocated %d after MADV_REMOVE", got)
	}
	m.DecUsers()
	o.DecRef()
	if u := mf.Used(); u != 0 {
		t.Fatalf("%d bytes leaked", u)
	}
}

func TestObjectAppend(t *testing.T) {
	o, _ := newTestObject(t, 0)
	o.WriteAt([]byte("ab"), 0)
	n, end, err := o.Append([]byte("cd"))
	if n != 2 || end != 4 || err != nil {
		t.Fatalf("Append: %d %d %v", n, end, err)
	}
	if got := readAll(t, o); string(got) != "abcd" {
		t.Fatalf("contents %q", got)
	}
	o.AddSeals(unix.F_SEAL_GROW, false)
	if _, _, err := o.Append([]byte("e")); err != unix.EPERM {
		t.Fatalf("Append with F_SEAL_GROW: %v", err)
	}
	o.DecRef()
}

// TestObjectConcurrency races file operations on an object against copies
// through shared and private mappings of it in two address spaces (run
// with -race): nothing deadlocks, panics or leaks.
func TestObjectConcurrency(t *testing.T) {
	o, mf := newTestObject(t, 16*pageSize)
	rw := unix.PROT_READ | unix.PROT_WRITE
	var mms []*MemoryManager
	var addrs []uintptr
	for i := 0; i < 2; i++ {
		m := newTestMMWithFile(t, mf)
		for _, private := range []bool{false, true} {
			a, err := m.MMap(MMapOpts{Length: 16 * pageSize, Prot: rw, Private: private, Object: o})
			if err != nil {
				t.Fatal(err)
			}
			mms = append(mms, m)
			addrs = append(addrs, a)
		}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	for i := range mms {
		wg.Add(1)
		go func(m *MemoryManager, a uintptr, seed int64) {
			defer wg.Done()
			r := rand.New(rand.NewSource(seed))
			buf := make([]byte, 3*pageSize)
			for {
				select {
				case <-done:
					return
				default:
				}
				off := uintptr(r.Intn(14 * pageSize))
				n := r.Intn(len(buf)) + 1
				if r.Intn(2) == 0 {
					m.CopyOut(a+off, buf[:n])
				} else {
					m.CopyIn(a+off, buf[:n])
				}
			}
		}(mms[i], addrs[i], int64(i))
	}
	r := rand.New(rand.NewSource(99))
	for i := 0; i < 300; i++ {
		off := int64(r.Intn(16 * pageSize))
		switch r.Intn(4) {
		case 0:
			o.Truncate(off)
		case 1:
			o.Truncate(16 * pageSize)
		case 2:
			o.PunchHole(off, int64(r.Intn(4*pageSize)+1))
		case 3:
			o.WriteAt(make([]byte, r.Intn(4*pageSize)+1), off)
		}
	}
	close(done)
	wg.Wait()
	mms[0].DecUsers()
	mms[2].DecUsers()
	o.DecRef()
	if u := mf.Used(); u != 0 {
		t.Fatalf("%d bytes leaked", u)
	}
}

func TestObjectSeekHuge(t *testing.T) {
	o, _ := newTestObject(t, 0)
	o.Truncate(1 << 62)
	o.WriteAt([]byte("x"), 1<<61)
	if got, err := o.SeekData(0); got != 1<<61 || err != nil {
		t.Fatalf("SeekData over a huge hole: %d %v", got, err)
	}
	if got, err := o.SeekData(1<<61 + pageSize); err != unix.ENXIO {
		t.Fatalf("SeekData past the data: %d %v", got, err)
	}
	if got, err := o.SeekHole(1 << 61); got != 1<<61+pageSize || err != nil {
		t.Fatalf("SeekHole: %d %v", got, err)
	}
	o.DecRef()
}
