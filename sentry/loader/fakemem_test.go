package loader

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/moat-sandbox/moat/sentry/arch"
	"golang.org/x/sys/unix"
)

const pageSize = arch.PageSize

// fakeVMA is one mapping of a fakeMem.
type fakeVMA struct {
	start, end uintptr
	prot       int
	file       File // nil for anonymous memory
	off        int64
	stack      bool
}

// fakeMem is a Memory kept in Go: a sorted list of mappings and a map of
// the pages written so far. Unwritten pages read from their file (zero
// past its end) or as zeros, so mapping huge ranges costs nothing.
type fakeMem struct {
	vmas     []fakeVMA
	pages    map[uintptr]*[pageSize]byte
	top      uintptr // stack top MapStack returns
	brk      uintptr
	brkSet   bool
	log      []string
	failMaps int // when > 0, the failMaps-th Map call fails
	nmaps    int
}

func newFakeMem() *fakeMem {
	return &fakeMem{pages: make(map[uintptr]*[pageSize]byte), top: arch.StackTop}
}

func (m *fakeMem) MapAnonymous(addr, length uintptr, prot int, fixed bool) (uintptr, error) {
	return m.mapVMA(addr, length, fakeVMA{prot: prot}, fixed)
}

func (m *fakeMem) MapFile(addr, length uintptr, prot int, fixed bool, f File, off int64) (uintptr, error) {
	if f == nil || off < 0 || off%pageSize != 0 {
		return 0, unix.EINVAL
	}
	return m.mapVMA(addr, length, fakeVMA{prot: prot, file: f, off: off}, fixed)
}

func (m *fakeMem) MapStack() (uintptr, error) {
	const size = 8 << 20
	_, err := m.mapVMA(m.top-size, size, fakeVMA{prot: unix.PROT_READ | unix.PROT_WRITE, stack: true}, true)
	return m.top, err
}

func (m *fakeMem) SetBrkStart(addr uintptr) { m.brk, m.brkSet = addr, true }

func (m *fakeMem) mapVMA(addr, length uintptr, v fakeVMA, fixed bool) (uintptr, error) {
	m.nmaps++
	if m.failMaps > 0 && m.nmaps == m.failMaps {
		return 0, unix.ENOMEM
	}
	if length == 0 || addr%pageSize != 0 || length%pageSize != 0 {
		return 0, unix.EINVAL
	}
	if !fixed {
		var ok bool
		if addr, ok = m.findFree(length); !ok {
			return 0, unix.ENOMEM
		}
	}
	limit := uintptr(arch.MaxUserAddress)
	if v.stack {
		limit = 1 << 47 // the native stack top, for TestStackMatchesLinux
	}
	if addr < arch.MinUserAddress || addr > limit || length > limit-addr {
		return 0, unix.EINVAL
	}
	v.start, v.end = addr, addr+length
	m.unmap(v.start, v.end)
	m.vmas = append(m.vmas, v)
	sort.Slice(m.vmas, func(i, j int) bool { return m.vmas[i].start < m.vmas[j].start })
	kind := "anon"
	if v.file != nil {
		kind = fmt.Sprintf("file@%#x", v.off)
	}
	m.log = append(m.log, fmt.Sprintf("%#x-%#x %s %s", v.start, v.end, protString(v.prot), kind))
	return addr, nil
}

// unmap removes [start, end) from the mappings and drops its pages.
func (m *fakeMem) unmap(start, end uintptr) {
	var out []fakeVMA
	for _, v := range m.vmas {
		if v.end <= start || v.start >= end {
			out = append(out, v)
			continue
		}
		if v.start < start {
			l := v
			l.end = start
			out = append(out, l)
		}
		if v.end > end {
			r := v
			if r.file != nil {
				r.off += int64(end - v.start)
			}
			r.start = end
			out = append(out, r)
		}
	}
	m.vmas = out
	for p := range m.pages {
		if p >= start && p < end {
			delete(m.pages, p)
		}
	}
}

// findFree returns the highest free range of length below MmapBase.
func (m *fakeMem) findFree(length uintptr) (uintptr, bool) {
	hi := uintptr(arch.MmapBase)
	for i := len(m.vmas) - 1; i >= -1; i-- {
		lo := uintptr(arch.MinUserAddress)
		if i >= 0 {
			v := m.vmas[i]
			if v.start >= hi {
				continue
			}
			lo = max(v.end, lo)
		}
		if hi >= lo && hi-lo >= length {
			return hi - length, true
		}
		if i >= 0 {
			hi = m.vmas[i].start
		}
	}
	return 0, false
}

func (m *fakeMem) find(addr uintptr) (fakeVMA, bool) {
	i := sort.Search(len(m.vmas), func(i int) bool { return m.vmas[i].end > addr })
	if i < len(m.vmas) && m.vmas[i].start <= addr {
		return m.vmas[i], true
	}
	return fakeVMA{}, false
}

// page returns the current contents of the page at p (page aligned),
// materialising it when create is set.
func (m *fakeMem) page(p uintptr, create bool) (*[pageSize]byte, error) {
	if pg, ok := m.pages[p]; ok {
		return pg, nil
	}
	v, ok := m.find(p)
	if !ok {
		return nil, fmt.Errorf("page %#x not mapped: %w", p, unix.EFAULT)
	}
	pg := new([pageSize]byte)
	if v.file != nil {
		n, err := v.file.ReadAt(pg[:], v.off+int64(p-v.start))
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		clear(pg[n:])
	}
	if create {
		m.pages[p] = pg
	}
	return pg, nil
}

func (m *fakeMem) CopyOut(addr uintptr, b []byte) error {
	for len(b) > 0 {
		v, ok := m.find(addr)
		if !ok || v.prot&unix.PROT_WRITE == 0 {
			return fmt.Errorf("copy out to %#x: %w", addr, unix.EFAULT)
		}
		p := addr &^ (pageSize - 1)
		pg, err := m.page(p, true)
		if err != nil {
			return err
		}
		n := copy(pg[addr-p:], b)
		b = b[n:]
		addr += uintptr(n)
	}
	return nil
}

// read returns n bytes at addr, whatever the protections.
func (m *fakeMem) read(addr uintptr, n int) ([]byte, error) {
	out := make([]byte, 0, n)
	for len(out) < n {
		p := addr &^ (pageSize - 1)
		pg, err := m.page(p, false)
		if err != nil {
			return nil, err
		}
		k := min(n-len(out), int(p+pageSize-addr))
		out = append(out, pg[addr-p:addr-p+uintptr(k)]...)
		addr += uintptr(k)
	}
	return out, nil
}

func (m *fakeMem) readU64(addr uintptr) (uint64, error) {
	b, err := m.read(addr, 8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// readString reads a NUL-terminated string at addr.
func (m *fakeMem) readString(addr uintptr) (string, error) {
	var s []byte
	for {
		b, err := m.read(addr, 1)
		if err != nil {
			return "", err
		}
		if b[0] == 0 {
			return string(s), nil
		}
		s = append(s, b[0])
		addr++
		if len(s) > maxArgStrlen {
			return "", fmt.Errorf("unterminated string")
		}
	}
}

func protString(p int) string {
	b := []byte("---")
	if p&unix.PROT_READ != 0 {
		b[0] = 'r'
	}
	if p&unix.PROT_WRITE != 0 {
		b[1] = 'w'
	}
	if p&unix.PROT_EXEC != 0 {
		b[2] = 'x'
	}
	return string(b)
}

// parsedStack is an initial stack read back from memory.
type parsedStack struct {
	argc       uint64
	argv, envv []string
	argvPtrs   []uint64
	envvPtrs   []uint64
	auxv       []AuxEntry
	end        uintptr // one past AT_NULL
}

// parseStack reads the initial stack at sp the way a C runtime does.
func (m *fakeMem) parseStack(sp uintptr) (*parsedStack, error) {
	var ps parsedStack
	var err error
	if ps.argc, err = m.readU64(sp); err != nil {
		return nil, err
	}
	if ps.argc > 1<<20 {
		return nil, fmt.Errorf("argc %d", ps.argc)
	}
	p := sp + 8
	for i := uint64(0); i < ps.argc; i++ {
		a, err := m.readU64(p)
		if err != nil {
			return nil, err
		}
		s, err := m.readString(uintptr(a))
		if err != nil {
			return nil, err
		}
		ps.argv = append(ps.argv, s)
		ps.argvPtrs = append(ps.argvPtrs, a)
		p += 8
	}
	if z, err := m.readU64(p); err != nil || z != 0 {
		return nil, fmt.Errorf("argv not NULL terminated: %#x %v", z, err)
	}
	p += 8
	for {
		a, err := m.readU64(p)
		if err != nil {
			return nil, err
		}
		p += 8
		if a == 0 {
			break
		}
		s, err := m.readString(uintptr(a))
		if err != nil {
			return nil, err
		}
		ps.envv = append(ps.envv, s)
		ps.envvPtrs = append(ps.envvPtrs, a)
	}
	for {
		k, err := m.readU64(p)
		if err != nil {
			return nil, err
		}
		v, err := m.readU64(p + 8)
		if err != nil {
			return nil, err
		}
		p += 16
		ps.auxv = append(ps.auxv, AuxEntry{k, v})
		if k == AT_NULL {
			break
		}
		if len(ps.auxv) > 100 {
			return nil, fmt.Errorf("auxv not terminated")
		}
	}
	ps.end = p
	return &ps, nil
}

// auxMap turns an auxiliary vector into a map.
func auxMap(aux []AuxEntry) map[uint64]uint64 {
	m := make(map[uint64]uint64)
	for _, a := range aux {
		m[a.Key] = a.Value
	}
	return m
}

// bytesFile is a File over a byte slice.
type bytesFile struct{ r *bytes.Reader }

func newBytesFile(b []byte) *bytesFile { return &bytesFile{bytes.NewReader(b)} }

func (f *bytesFile) ReadAt(p []byte, off int64) (int, error) { return f.r.ReadAt(p, off) }
func (f *bytesFile) Size() (int64, error)                    { return f.r.Size(), nil }

// osFile is a File over a host file (tests only: the Sentry gets its files
// from the gofer).
type osFile struct{ f *os.File }

func (f osFile) ReadAt(p []byte, off int64) (int, error) { return f.f.ReadAt(p, off) }
func (f osFile) Size() (int64, error) {
	st, err := f.f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// mapOpener opens files from a map, falling back to the host.
type mapOpener struct {
	files  map[string]File
	host   bool
	opened []string
	close  []*os.File
}

func (o *mapOpener) Open(path string) (File, error) {
	o.opened = append(o.opened, path)
	if f, ok := o.files[path]; ok {
		return f, nil
	}
	if !o.host {
		return nil, fmt.Errorf("open %q: %w", path, unix.ENOENT)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	o.close = append(o.close, f)
	return osFile{f}, nil
}

func (o *mapOpener) Close() {
	for _, f := range o.close {
		f.Close()
	}
}
