package loader

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"

	"github.com/moat-sandbox/moat/sentry/arch"
	"golang.org/x/sys/unix"
)

// maxInterpAlign is the largest PT_LOAD alignment honoured for the
// interpreter, whose placement reserves span+alignment bytes; larger
// (absurd) alignments fall back to the page size.
const maxInterpAlign = 1 << 30

// loadELF maps the ELF executable f (whose first bytes are hdr) and its
// interpreter into mem and builds the initial stack.
func loadELF(mem Memory, op Opener, f File, hdr []byte, args *Args, argv []string) (Result, error) {
	img, err := parseELF(f, hdr, true)
	if err != nil {
		return Result{}, err
	}

	// Open and check the interpreter before mapping anything.
	var interp *elfImage
	var interpFile File
	if img.HasInterp {
		if interpFile, err = openExec(op, img.Interp); err != nil {
			return Result{}, fmt.Errorf("open interpreter %q: %w", img.Interp, err)
		}
		if interpFile == nil {
			return Result{}, fmt.Errorf("open interpreter %q: no file: %w", img.Interp, unix.ENOENT)
		}
		if interp, err = parseInterp(interpFile); err != nil {
			return Result{}, fmt.Errorf("interpreter %q: %w", img.Interp, err)
		}
	}

	// Place the main executable: ET_EXEC where it says, ET_DYN at the
	// PIE base aligned to its largest segment alignment.
	var bias uint64
	if img.Type == elf.ET_DYN {
		bias = alignDown(arch.PIELoadBase-img.Low, img.Align)
	}
	base := img.Low + bias
	if err := checkPlacement(base, img.Span); err != nil {
		return Result{}, err
	}
	entry := img.Entry + bias
	if entry >= arch.MaxUserAddress {
		return Result{}, fmt.Errorf("entry point %#x outside the user address space: %w", entry, unix.EINVAL)
	}
	if err := mapSegments(mem, f, img, base); err != nil {
		return Result{}, err
	}
	brk := base + img.Span
	mem.SetBrkStart(uintptr(brk))

	res := Result{
		Entry:     uintptr(entry),
		Base:      uintptr(base),
		BrkStart:  uintptr(brk),
		ExecStack: img.ExecStack,
		Argv:      argv,
	}
	if interp != nil {
		ibias, err := placeInterp(mem, interp)
		if err != nil {
			return Result{}, fmt.Errorf("interpreter %q: %w", img.Interp, err)
		}
		ientry := interp.Entry + ibias
		if ientry >= arch.MaxUserAddress {
			return Result{}, fmt.Errorf("interpreter %q: entry point %#x outside the user address space: %w", img.Interp, ientry, unix.EINVAL)
		}
		if err := mapSegments(mem, interpFile, interp, interp.Low+ibias); err != nil {
			return Result{}, fmt.Errorf("interpreter %q: %w", img.Interp, err)
		}
		res.Entry = uintptr(ientry)
		res.Interpreter = img.Interp
		if interp.Type == elf.ET_DYN {
			res.InterpBase = uintptr(ibias)
		}
	}

	top, err := mem.MapStack()
	if err != nil {
		return Result{}, fmt.Errorf("map stack: %w", err)
	}
	st := stackArgs{
		argv:   argv,
		envv:   args.Envv,
		execfn: args.Filename,
		random: args.Random,
	}
	aux := func(a stackAddrs) []AuxEntry {
		v := archAuxv(args)
		v = append(v,
			AuxEntry{AT_HWCAP, args.HWCap},
			AuxEntry{AT_PAGESZ, arch.PageSize},
			AuxEntry{AT_CLKTCK, args.ClockTicks},
			AuxEntry{AT_PHDR, img.PhdrVaddr + bias},
			AuxEntry{AT_PHENT, phdrSize},
			AuxEntry{AT_PHNUM, uint64(img.Phnum)},
			AuxEntry{AT_BASE, uint64(res.InterpBase)},
			AuxEntry{AT_FLAGS, 0},
			AuxEntry{AT_ENTRY, entry},
			AuxEntry{AT_UID, uint64(args.UID)},
			AuxEntry{AT_EUID, uint64(args.EUID)},
			AuxEntry{AT_GID, uint64(args.GID)},
			AuxEntry{AT_EGID, uint64(args.EGID)},
			AuxEntry{AT_SECURE, boolWord(args.Secure)},
			AuxEntry{AT_RANDOM, uint64(a.random)},
			AuxEntry{AT_HWCAP2, args.HWCap2},
			AuxEntry{AT_EXECFN, uint64(a.execfn)},
			AuxEntry{AT_PLATFORM, uint64(a.platform)},
			AuxEntry{AT_NULL, 0},
		)
		return v
	}
	layout, err := buildStack(mem, top, &st, aux)
	if err != nil {
		return Result{}, fmt.Errorf("build stack: %w", err)
	}
	res.Stack = layout.sp
	res.Auxv = layout.auxv
	res.ArgvStart, res.ArgvEnd = layout.argvStart, layout.argvEnd
	res.EnvvStart, res.EnvvEnd = layout.envvStart, layout.envvEnd
	return res, nil
}

// parseInterp reads and validates the interpreter's headers. Linux fails
// a short ELF header with EIO and a bad magic, machine or program header
// table with ELIBBAD.
func parseInterp(f File) (*elfImage, error) {
	var hdr [ehdrSize]byte
	if _, err := readAtFull(f, hdr[:], 0); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("short ELF header: %w", unix.EIO)
		}
		return nil, err
	}
	img, err := parseELF(f, hdr[:], false)
	if errors.Is(err, unix.ENOEXEC) {
		return nil, fmt.Errorf("%v: %w", err, unix.ELIBBAD)
	}
	return img, err
}

// placeInterp chooses the interpreter's load bias. An ET_DYN interpreter
// gets one PROT_NONE reservation of its whole span wherever Memory puts it
// (plus slack to honour its alignment); its segments are then mapped
// fixed inside, so they stay contiguous and the gaps between them stay
// reserved. An ET_EXEC interpreter goes where it says.
func placeInterp(mem Memory, img *elfImage) (uint64, error) {
	if img.Type != elf.ET_DYN {
		return 0, checkPlacement(img.Low, img.Span)
	}
	align := img.Align
	if align > maxInterpAlign {
		align = arch.PageSize
	}
	length := img.Span + align - arch.PageSize
	if length > arch.MaxUserAddress {
		return 0, fmt.Errorf("span of %#x bytes: %w", img.Span, unix.ENOMEM)
	}
	r, err := mem.MapAnonymous(0, uintptr(length), unix.PROT_NONE, false)
	if err != nil {
		return 0, fmt.Errorf("reserve %#x bytes: %w", length, err)
	}
	// The lowest address at or above r congruent to Low modulo align.
	base := uint64(r) + (img.Low-uint64(r))%align
	if err := checkPlacement(base, img.Span); err != nil {
		return 0, err
	}
	return base - img.Low, nil
}

// checkPlacement checks that [base, base+span) lies in the user address
// space. Linux fails mappings below mmap_min_addr with EPERM and segments
// past TASK_SIZE with EINVAL.
func checkPlacement(base, span uint64) error {
	if base < arch.MinUserAddress {
		return fmt.Errorf("image at %#x below the lowest mappable address: %w", base, unix.EPERM)
	}
	if base > arch.MaxUserAddress || span > arch.MaxUserAddress-base {
		return fmt.Errorf("image at [%#x, +%#x) outside the user address space: %w", base, span, unix.EINVAL)
	}
	return nil
}

// mapSegments maps img's PT_LOAD segments from f so that the page of the
// first one starts at base, after checkPlacement accepted base.
//
// Each segment's file bytes are mapped copy-on-write from the page holding
// p_vaddr to the page holding p_vaddr+p_filesz; when p_memsz > p_filesz
// the rest of that last file page is zeroed (if the segment is writable:
// Linux ignores the failure otherwise) and whole pages up to
// p_vaddr+p_memsz are mapped anonymous. Protections come from p_flags.
// Later segments replace pages they share with earlier ones, as in Linux.
func mapSegments(mem Memory, f File, img *elfImage, base uint64) error {
	for i, ph := range img.Loads {
		addr := base + (ph.Vaddr - img.Low)
		fileEnd := addr + ph.Filesz
		memEnd := addr + ph.Memsz
		prot := protOf(ph.Flags)
		anonStart := pageDown(addr)
		if ph.Filesz > 0 {
			start := pageDown(addr)
			length := pageUp(fileEnd) - start
			off := ph.Off - (addr - start)
			if _, err := mem.MapFile(uintptr(start), uintptr(length), prot, true, f, int64(off)); err != nil {
				return fmt.Errorf("map segment %d at %#x: %w", i, start, err)
			}
			anonStart = pageUp(fileEnd)
			if memEnd > fileEnd && fileEnd < anonStart && prot&unix.PROT_WRITE != 0 {
				if err := mem.CopyOut(uintptr(fileEnd), make([]byte, anonStart-fileEnd)); err != nil {
					return fmt.Errorf("zero bss of segment %d at %#x: %w", i, fileEnd, err)
				}
			}
		}
		if end := pageUp(memEnd); ph.Memsz > ph.Filesz && end > anonStart {
			if _, err := mem.MapAnonymous(uintptr(anonStart), uintptr(end-anonStart), prot, true); err != nil {
				return fmt.Errorf("map bss of segment %d at %#x: %w", i, anonStart, err)
			}
		}
	}
	return nil
}

// alignDown rounds x down to a multiple of align, a power of two.
func alignDown(x, align uint64) uint64 { return x &^ (align - 1) }

func boolWord(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
