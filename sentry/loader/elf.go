package loader

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/moat-sandbox/moat/sentry/arch"
	"golang.org/x/sys/unix"
)

// ELF64 sizes.
const (
	ehdrSize = 64 // sizeof(Elf64_Ehdr)
	phdrSize = 56 // sizeof(Elf64_Phdr)
	// maxPhdrBytes bounds the program header table as Linux does
	// (ELF_MIN_ALIGN: one page, so at most 73 headers).
	maxPhdrBytes = arch.PageSize
	// pathMax bounds the PT_INTERP path, NUL included (PATH_MAX).
	pathMax = 4096
)

// progHeader is one Elf64_Phdr.
type progHeader struct {
	Type   elf.ProgType
	Flags  elf.ProgFlag
	Off    uint64
	Vaddr  uint64
	Filesz uint64
	Memsz  uint64
	Align  uint64
}

// elfImage is a validated ELF executable: what the loader needs to map it.
type elfImage struct {
	Type  elf.Type
	Entry uint64 // e_entry, before relocation
	Phoff uint64
	Phnum int
	Phdrs []progHeader
	// Loads are the PT_LOAD headers in file order, which validation
	// guarantees is ascending and non-overlapping in memory.
	Loads []progHeader
	// HasInterp is set when there is a PT_INTERP header; Interp is its
	// path up to the first NUL.
	HasInterp bool
	Interp    string
	// ExecStack is set when PT_GNU_STACK has PF_X.
	ExecStack bool
	// PhdrVaddr is the unrelocated address of the program headers in
	// memory (from PT_PHDR, else from the PT_LOAD that contains
	// e_phoff, else 0 as Linux reports).
	PhdrVaddr uint64
	// Low is the page-aligned unrelocated start of the first PT_LOAD;
	// Span the page-aligned size from Low to the end of the last.
	Low, Span uint64
	// Align is the largest power-of-two p_align of the PT_LOAD
	// segments, at least a page.
	Align uint64
}

// parseELF validates the ELF header in hdr (the first binprmBufSize bytes of
// f, zero padded) and reads and validates f's program headers and
// PT_INTERP path. It reads at most one page of headers and PATH_MAX bytes
// of path whatever the input. When withInterp is false (for an
// interpreter, whose own PT_INTERP Linux ignores) PT_INTERP is skipped.
//
// Errors follow Linux's load_elf_binary: ENOEXEC for what is not an x86-64
// ELF executable or has a broken program header table, EINVAL for
// segments that cannot be mapped (p_filesz > p_memsz, offset and address
// not congruent modulo the page size, addresses or offsets that overflow
// or leave the user address space), EIO when PT_INTERP cannot be read.
// Segments out of order or overlapping are ENOEXEC (Linux maps them in
// order and lets later ones win; the ELF specification forbids them).
func parseELF(f File, hdr []byte, withInterp bool) (*elfImage, error) {
	if len(hdr) < ehdrSize {
		return nil, fmt.Errorf("short ELF header: %w", unix.ENOEXEC)
	}
	if !bytes.Equal(hdr[:4], []byte(elf.ELFMAG)) {
		return nil, fmt.Errorf("not an ELF file: %w", unix.ENOEXEC)
	}
	if elf.Class(hdr[elf.EI_CLASS]) != elf.ELFCLASS64 {
		return nil, fmt.Errorf("ELF class %v is not ELFCLASS64: %w", elf.Class(hdr[elf.EI_CLASS]), unix.ENOEXEC)
	}
	if elf.Data(hdr[elf.EI_DATA]) != elf.ELFDATA2LSB {
		return nil, fmt.Errorf("ELF data encoding %v is not little endian: %w", elf.Data(hdr[elf.EI_DATA]), unix.ENOEXEC)
	}
	le := binary.LittleEndian
	img := &elfImage{
		Type:  elf.Type(le.Uint16(hdr[16:])),
		Entry: le.Uint64(hdr[24:]),
		Phoff: le.Uint64(hdr[32:]),
	}
	machine := elf.Machine(le.Uint16(hdr[18:]))
	phentsize := le.Uint16(hdr[54:])
	phnum := le.Uint16(hdr[56:])
	if img.Type != elf.ET_EXEC && img.Type != elf.ET_DYN {
		return nil, fmt.Errorf("ELF type %v is not executable: %w", img.Type, unix.ENOEXEC)
	}
	if machine != elfMachine {
		return nil, fmt.Errorf("ELF machine %v is not %v: %w", machine, elfMachine, unix.ENOEXEC)
	}
	if phentsize != phdrSize {
		return nil, fmt.Errorf("program header size %d, want %d: %w", phentsize, phdrSize, unix.ENOEXEC)
	}
	size := int(phnum) * phdrSize
	if size == 0 || size > maxPhdrBytes {
		return nil, fmt.Errorf("%d program headers: %w", phnum, unix.ENOEXEC)
	}
	if img.Phoff > math.MaxInt64-uint64(size) {
		return nil, fmt.Errorf("program header offset %#x: %w", img.Phoff, unix.ENOEXEC)
	}
	img.Phnum = int(phnum)
	raw := make([]byte, size)
	if _, err := readAtFull(f, raw, int64(img.Phoff)); err != nil {
		// Linux fails a short or failed read of the table with ENOEXEC.
		return nil, fmt.Errorf("read program headers: %v: %w", err, unix.ENOEXEC)
	}
	img.Phdrs = make([]progHeader, img.Phnum)
	for i := range img.Phdrs {
		b := raw[i*phdrSize:]
		img.Phdrs[i] = progHeader{
			Type:   elf.ProgType(le.Uint32(b[0:])),
			Flags:  elf.ProgFlag(le.Uint32(b[4:])),
			Off:    le.Uint64(b[8:]),
			Vaddr:  le.Uint64(b[16:]),
			Filesz: le.Uint64(b[32:]),
			Memsz:  le.Uint64(b[40:]),
			Align:  le.Uint64(b[48:]),
		}
	}

	havePhdr := false
	for _, ph := range img.Phdrs {
		switch ph.Type {
		case elf.PT_INTERP:
			if img.HasInterp || !withInterp {
				continue // Linux uses the first one.
			}
			path, err := readInterp(f, ph)
			if err != nil {
				return nil, err
			}
			img.HasInterp, img.Interp = true, path
		case elf.PT_GNU_STACK:
			img.ExecStack = ph.Flags&elf.PF_X != 0
		case elf.PT_PHDR:
			if !havePhdr {
				havePhdr = true
				img.PhdrVaddr = ph.Vaddr
			}
		case elf.PT_LOAD:
			img.Loads = append(img.Loads, ph)
		}
	}
	if err := img.checkLoads(); err != nil {
		return nil, err
	}
	if !havePhdr {
		for _, ph := range img.Loads {
			if ph.Off <= img.Phoff && img.Phoff-ph.Off < ph.Filesz {
				img.PhdrVaddr = img.Phoff - ph.Off + ph.Vaddr
				break
			}
		}
	}
	return img, nil
}

// readInterp reads the PT_INTERP path.
func readInterp(f File, ph progHeader) (string, error) {
	if ph.Filesz > pathMax || ph.Filesz < 2 {
		return "", fmt.Errorf("PT_INTERP of %d bytes: %w", ph.Filesz, unix.ENOEXEC)
	}
	if ph.Off > math.MaxInt64-ph.Filesz {
		return "", fmt.Errorf("PT_INTERP offset %#x: %w", ph.Off, unix.EINVAL)
	}
	buf := make([]byte, ph.Filesz)
	if _, err := readAtFull(f, buf, int64(ph.Off)); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("PT_INTERP past end of file: %w", unix.EIO)
		}
		return "", fmt.Errorf("read PT_INTERP: %w", err)
	}
	if buf[len(buf)-1] != 0 {
		return "", fmt.Errorf("PT_INTERP path not NUL terminated: %w", unix.ENOEXEC)
	}
	return string(buf[:bytes.IndexByte(buf, 0)]), nil
}

// checkLoads validates the PT_LOAD segments independently of where they
// will be placed, and computes Low, Span and Align.
func (img *elfImage) checkLoads() error {
	if len(img.Loads) == 0 {
		return fmt.Errorf("no PT_LOAD segment: %w", unix.EINVAL)
	}
	const page = arch.PageSize
	var prevEnd uint64
	img.Align = page
	for i, ph := range img.Loads {
		if ph.Filesz > ph.Memsz {
			return fmt.Errorf("segment %d: p_filesz %#x > p_memsz %#x: %w", i, ph.Filesz, ph.Memsz, unix.EINVAL)
		}
		if ph.Memsz > arch.MaxUserAddress || ph.Vaddr > arch.MaxUserAddress-ph.Memsz {
			return fmt.Errorf("segment %d: [%#x, +%#x) outside the user address space: %w", i, ph.Vaddr, ph.Memsz, unix.EINVAL)
		}
		if (ph.Off-ph.Vaddr)%page != 0 {
			return fmt.Errorf("segment %d: offset %#x and address %#x differ modulo the page size: %w", i, ph.Off, ph.Vaddr, unix.EINVAL)
		}
		if ph.Off > math.MaxInt64-ph.Filesz-page {
			return fmt.Errorf("segment %d: offset %#x + size %#x overflows: %w", i, ph.Off, ph.Filesz, unix.EINVAL)
		}
		if i > 0 && ph.Vaddr < prevEnd {
			return fmt.Errorf("segment %d at %#x overlaps or precedes the previous one (ending at %#x): %w", i, ph.Vaddr, prevEnd, unix.ENOEXEC)
		}
		prevEnd = ph.Vaddr + ph.Memsz
		if a := ph.Align; a > img.Align && a&(a-1) == 0 {
			img.Align = a
		}
	}
	img.Low = pageDown(img.Loads[0].Vaddr)
	img.Span = pageUp(prevEnd) - img.Low
	return nil
}

// protOf converts segment flags to mmap protections.
func protOf(f elf.ProgFlag) int {
	prot := unix.PROT_NONE
	if f&elf.PF_R != 0 {
		prot |= unix.PROT_READ
	}
	if f&elf.PF_W != 0 {
		prot |= unix.PROT_WRITE
	}
	if f&elf.PF_X != 0 {
		prot |= unix.PROT_EXEC
	}
	return prot
}

func pageDown(x uint64) uint64 { return x &^ (arch.PageSize - 1) }

// pageUp rounds up to a page; callers keep x at most MaxUserAddress, so it
// cannot overflow.
func pageUp(x uint64) uint64 { return (x + arch.PageSize - 1) &^ (arch.PageSize - 1) }
