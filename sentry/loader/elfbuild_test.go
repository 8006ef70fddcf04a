package loader

import (
	"debug/elf"
	"encoding/binary"
)

// testELF describes a synthetic ELF file for tests.
type testELF struct {
	typ       elf.Type
	machine   elf.Machine
	class     elf.Class
	entry     uint64
	phoff     uint64 // 0 means right after the ELF header
	phentsize uint16 // 0 means 56
	phnum     int    // -1 means len(phdrs)
	phdrs     []progHeader
	// data is written at the given offsets.
	data map[uint64][]byte
	size int // minimum file size
}

// newTestELF returns a well-formed static ET_EXEC with one RX segment
// holding the headers and one RW segment with bss.
func newTestELF() *testELF {
	return &testELF{
		typ:     elf.ET_EXEC,
		machine: elf.EM_X86_64,
		class:   elf.ELFCLASS64,
		entry:   0x401000,
		phnum:   -1,
		phdrs: []progHeader{
			{Type: elf.PT_LOAD, Flags: elf.PF_R | elf.PF_X, Off: 0, Vaddr: 0x400000, Filesz: 0x1100, Memsz: 0x1100, Align: 0x1000},
			{Type: elf.PT_LOAD, Flags: elf.PF_R | elf.PF_W, Off: 0x2100, Vaddr: 0x403100, Filesz: 0x200, Memsz: 0x3000, Align: 0x1000},
			{Type: elf.PT_GNU_STACK, Flags: elf.PF_R | elf.PF_W},
		},
		size: 0x3000,
	}
}

// bytes renders the file. Bytes not otherwise set hold a pattern (never
// zero), so tests can tell zeroed bss from file contents.
func (e *testELF) bytes() []byte {
	phoff := e.phoff
	if phoff == 0 {
		phoff = ehdrSize
	}
	phnum := e.phnum
	if phnum < 0 {
		phnum = len(e.phdrs)
	}
	size := max(e.size, int(phoff)+len(e.phdrs)*phdrSize)
	for off, d := range e.data {
		size = max(size, int(off)+len(d))
	}
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(i%251) | 1
	}
	le := binary.LittleEndian
	copy(b, elf.ELFMAG)
	b[elf.EI_CLASS] = byte(e.class)
	b[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	b[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	clear(b[elf.EI_OSABI:16])
	le.PutUint16(b[16:], uint16(e.typ))
	le.PutUint16(b[18:], uint16(e.machine))
	le.PutUint32(b[20:], uint32(elf.EV_CURRENT))
	le.PutUint64(b[24:], e.entry)
	le.PutUint64(b[32:], phoff)
	le.PutUint64(b[40:], 0) // no section headers
	le.PutUint32(b[48:], 0)
	le.PutUint16(b[52:], ehdrSize)
	phentsize := e.phentsize
	if phentsize == 0 {
		phentsize = phdrSize
	}
	le.PutUint16(b[54:], phentsize)
	le.PutUint16(b[56:], uint16(phnum))
	le.PutUint16(b[58:], 64)
	le.PutUint16(b[60:], 0)
	le.PutUint16(b[62:], 0)
	for i, ph := range e.phdrs {
		p := b[int(phoff)+i*phdrSize:]
		le.PutUint32(p[0:], uint32(ph.Type))
		le.PutUint32(p[4:], uint32(ph.Flags))
		le.PutUint64(p[8:], ph.Off)
		le.PutUint64(p[16:], ph.Vaddr)
		le.PutUint64(p[24:], ph.Vaddr)
		le.PutUint64(p[32:], ph.Filesz)
		le.PutUint64(p[40:], ph.Memsz)
		le.PutUint64(p[48:], ph.Align)
	}
	for off, d := range e.data {
		copy(b[off:], d)
	}
	return b
}

// withInterp adds a PT_INTERP header (placed at offset 0x1000) naming path.
func (e *testELF) withInterp(path string) *testELF {
	if e.data == nil {
		e.data = map[uint64][]byte{}
	}
	e.data[0x1000] = append([]byte(path), 0)
	e.phdrs = append([]progHeader{{Type: elf.PT_INTERP, Flags: elf.PF_R, Off: 0x1000, Vaddr: 0x401000 - 0x1000 + 0x1000, Filesz: uint64(len(path) + 1), Memsz: uint64(len(path) + 1), Align: 1}}, e.phdrs...)
	return e
}

// newTestInterp returns a well-formed ET_DYN interpreter with a gap between
// its segments and a bss.
func newTestInterp() *testELF {
	return &testELF{
		typ:     elf.ET_DYN,
		machine: elf.EM_X86_64,
		class:   elf.ELFCLASS64,
		entry:   0x1080,
		phnum:   -1,
		phdrs: []progHeader{
			{Type: elf.PT_LOAD, Flags: elf.PF_R | elf.PF_X, Off: 0, Vaddr: 0, Filesz: 0x1800, Memsz: 0x1800, Align: 0x1000},
			{Type: elf.PT_LOAD, Flags: elf.PF_R | elf.PF_W, Off: 0x1900, Vaddr: 0x5900, Filesz: 0x100, Memsz: 0x2000, Align: 0x1000},
		},
		size: 0x2000,
	}
}
