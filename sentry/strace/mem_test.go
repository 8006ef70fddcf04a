package strace

import (
	"encoding/binary"
	"sort"

	"golang.org/x/sys/unix"
)

// fakeMem is application memory made of separate regions; reads outside
// them fault with EFAULT after copying what they could.
type fakeMem struct {
	regions []region
	next    uint64
}

type region struct {
	addr uint64
	data []byte
}

func newMem() *fakeMem { return &fakeMem{next: 0x10000} }

func (m *fakeMem) CopyInBytes(addr uintptr, dst []byte) (int, error) {
	a := uint64(addr)
	n := 0
	for n < len(dst) {
		r := m.find(a + uint64(n))
		if r == nil {
			return n, unix.EFAULT
		}
		off := a + uint64(n) - r.addr
		n += copy(dst[n:], r.data[off:])
	}
	return n, nil
}

func (m *fakeMem) find(a uint64) *region {
	i := sort.Search(len(m.regions), func(i int) bool { return m.regions[i].addr+uint64(len(m.regions[i].data)) > a })
	if i < len(m.regions) && m.regions[i].addr <= a {
		return &m.regions[i]
	}
	return nil
}

// put stores data at a fresh address, with an unmapped gap after it.
func (m *fakeMem) put(data []byte) uint64 {
	a := m.next
	m.putAt(a, data)
	m.next = (a + uint64(len(data)) + 0x1000 + 0xfff) &^ 0xfff
	return a
}

// putAt stores data at addr.
func (m *fakeMem) putAt(addr uint64, data []byte) {
	m.regions = append(m.regions, region{addr, append([]byte(nil), data...)})
	sort.Slice(m.regions, func(i, j int) bool { return m.regions[i].addr < m.regions[j].addr })
}

// cstr stores a NUL-terminated string.
func (m *fakeMem) cstr(s string) uint64 { return m.put(append([]byte(s), 0)) }

// u64s stores 64-bit words.
func (m *fakeMem) u64s(v ...uint64) uint64 {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], x)
	}
	return m.put(b)
}

// u32s stores 32-bit words.
func (m *fakeMem) u32s(v ...uint32) uint64 {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	return m.put(b)
}

// strs stores a NULL-terminated array of strings.
func (m *fakeMem) strs(s ...string) uint64 {
	ptrs := make([]uint64, 0, len(s)+1)
	for _, x := range s {
		ptrs = append(ptrs, m.cstr(x))
	}
	return m.u64s(append(ptrs, 0)...)
}

// builder assembles a structure field by field.
type builder struct{ b []byte }

func (b *builder) u8(v uint8) *builder   { b.b = append(b.b, v); return b }
func (b *builder) u16(v uint16) *builder { b.b = binary.LittleEndian.AppendUint16(b.b, v); return b }
func (b *builder) u32(v uint32) *builder { b.b = binary.LittleEndian.AppendUint32(b.b, v); return b }
func (b *builder) u64(v uint64) *builder { b.b = binary.LittleEndian.AppendUint64(b.b, v); return b }
func (b *builder) bytes(v []byte) *builder {
	b.b = append(b.b, v...)
	return b
}

// at pads with zeros up to offset off.
func (b *builder) at(off int) *builder {
	for len(b.b) < off {
		b.b = append(b.b, 0)
	}
	return b
}

func neg(e unix.Errno) uintptr { return uintptr(-int64(e)) }
