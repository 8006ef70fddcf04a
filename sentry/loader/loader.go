package loader

import (
	"errors"
	"fmt"
	"io"

	"golang.org/x/sys/unix"
)

// Memory is the address space being built. Its implementation belongs to
// the memory manager; the loader only asks it for mappings and writes.
type Memory interface {
	// MapAnonymous maps zeroed memory. addr and length are page aligned. If fixed, the mapping
	// is placed exactly at addr, replacing anything there; else addr is a hint (0 = anywhere) and
	// the chosen address is returned.
	MapAnonymous(addr, length uintptr, prot int, fixed bool) (uintptr, error)
	// MapFile maps [off, off+length) of f privately (copy-on-write) at addr with the same
	// fixed/hint rule. off is page aligned. Bytes past the end of the file read as zero.
	// The loader never closes f: an implementation that keeps f beyond the call takes its
	// own reference.
	MapFile(addr, length uintptr, prot int, fixed bool, f File, off int64) (uintptr, error)
	// MapStack creates the main thread's stack (growing down) and returns its top (exclusive).
	// The loader then writes the argument and environment strings and the initial stack
	// frame just below top with CopyOut: up to the argument limit (RLIMIT_STACK/4, at least
	// 128 KiB, at most 6 MiB; see Args.StackLimit) plus a few KiB. Those writes must succeed,
	// whether the stack is mapped that large at once or grows on demand.
	MapStack() (top uintptr, err error)
	// CopyOut writes b at addr (which must be mapped writable).
	CopyOut(addr uintptr, b []byte) error
	// SetBrkStart sets where brk(2) starts (page aligned end of the highest loaded segment of the main executable).
	SetBrkStart(addr uintptr)
}

// File is an open executable file.
type File interface {
	ReadAt(p []byte, off int64) (int, error) // io.ReaderAt semantics
	Size() (int64, error)
}

// Opener opens the files the loader needs: the interpreter (PT_INTERP) and #! interpreters.
//
// The loader never closes what Open returns; the Opener's owner releases the
// files it handed out once Load returns (MapFile keeps its own reference to
// the files it maps).
type Opener interface {
	Open(path string) (File, error) // path resolution, permission checks (ENOENT, EACCES for non-executable) are the caller's
}

// Args describe one execve(2). Its strings were read from C strings and
// hold no NUL byte.
type Args struct {
	Filename   string // path as passed to execve (for AT_EXECFN and #! argv rewriting)
	File       File   // the already-opened executable
	Argv, Envv []string
	Random     [16]byte // AT_RANDOM bytes (caller supplies from getrandom)
	VDSOBase   uintptr  // AT_SYSINFO_EHDR value, 0 = none

	UID, EUID, GID, EGID uint32

	Secure        bool   // AT_SECURE
	HWCap, HWCap2 uint64 // AT_HWCAP / AT_HWCAP2 values
	ClockTicks    uint64 // AT_CLKTCK (100)

	// StackLimit is the soft RLIMIT_STACK in bytes, which bounds the
	// argument and environment strings as in Linux (a quarter of it, at
	// least 128 KiB, at most 6 MiB). 0 means the default 8 MiB.
	StackLimit uint64
	// MinSigStackSize is the AT_MINSIGSTKSZ value (the size of the
	// signal frame the kernel pushes). 0 leaves AT_MINSIGSTKSZ out.
	MinSigStackSize uint64
}

// AuxEntry is one auxiliary vector entry (an AT_* key and its value).
type AuxEntry struct {
	Key, Value uint64
}

// Result describes the loaded image and the initial thread state.
type Result struct {
	Entry                                  uintptr    // initial RIP: the interpreter's entry if any, else the executable's
	Stack                                  uintptr    // initial RSP
	Auxv                                   []AuxEntry // what was written (for /proc/self/auxv later)
	ArgvStart, ArgvEnd, EnvvStart, EnvvEnd uintptr    // for /proc/self/cmdline and environ
	Interpreter                            string     // PT_INTERP path or "" (also the #! chain is resolved)
	ExeFilename                            string     // the file actually loaded as main executable after #! resolution

	// Argv is the argument vector written to the stack (after #! rewriting).
	Argv []string
	// ExecStack is true when the main executable's PT_GNU_STACK asks for
	// an executable stack (PF_X). Without PT_GNU_STACK it is false, as
	// for 64-bit programs on Linux.
	ExecStack bool
	// Base is where the main executable was loaded (its load bias plus
	// the page of its lowest PT_LOAD segment).
	Base uintptr
	// InterpBase is the interpreter's load bias (AT_BASE), 0 if none.
	InterpBase uintptr
	// BrkStart is the value given to Memory.SetBrkStart.
	BrkStart uintptr
}

// Linux limits on execve(2) arguments (include/uapi/linux/binfmts.h,
// fs/exec.c).
const (
	// binprmBufSize is how much of a file the binary format handlers
	// look at (BINPRM_BUF_SIZE).
	binprmBufSize = 256
	// maxArgStrlen bounds one argument or environment string, NUL
	// included (MAX_ARG_STRLEN, 32 pages).
	maxArgStrlen = 32 * 4096
	// maxArgStrings bounds argc and envc (MAX_ARG_STRINGS).
	maxArgStrings = 0x7fffffff
	// argMax is the smallest argument budget (ARG_MAX, 32 pages).
	argMax = 32 * 4096
	// stkLim is the default stack limit (_STK_LIM).
	stkLim = 8 << 20
	// maxRewrites is how many #! rewrites exec follows: Linux calls the
	// format handlers at depths 0 through 5 and fails with ELOOP when a
	// sixth file would be needed, so five nested scripts work and a
	// sixth fails (fs/exec.c exec_binprm, checked on a 6.x kernel).
	maxRewrites = 5
)

// Load loads args.File (following #! interpreters through op) into mem,
// builds the initial stack and returns where the thread starts.
//
// Errors are wrapped unix.Errno values matching what execve(2) returns on
// Linux for the same input (find them with errors.As). When Load fails
// after it started mapping, mem holds a partial image and must be
// discarded: Load validates both ELF files before mapping anything, so
// that happens only when Memory itself fails.
func Load(mem Memory, op Opener, args Args) (Result, error) {
	if args.File == nil {
		return Result{}, fmt.Errorf("load %q: no file: %w", args.Filename, unix.EINVAL)
	}
	budget, err := argBudget(args.StackLimit, len(args.Argv), len(args.Envv))
	if err != nil {
		return Result{}, err
	}
	// Linux copies the filename, then envp, then argv into the new
	// stack, failing with E2BIG as soon as one string or the total is
	// too large.
	var used uint64
	for _, s := range append([]string{args.Filename}, args.Envv...) {
		if used, err = addArg(used, budget, s); err != nil {
			return Result{}, err
		}
	}
	argv := args.Argv
	if len(argv) == 0 {
		// Since Linux 5.18 an empty argv gets "" as argv[0] so that
		// programs never see argc == 0.
		argv = []string{""}
	}
	for _, s := range argv {
		if used, err = addArg(used, budget, s); err != nil {
			return Result{}, err
		}
	}

	file, name := args.File, args.Filename
	var hdr [binprmBufSize]byte
	for depth := 0; ; depth++ {
		if depth > maxRewrites {
			return Result{}, fmt.Errorf("load %q: too many levels of #! interpreters: %w", args.Filename, unix.ELOOP)
		}
		if err := readHeader(file, hdr[:]); err != nil {
			return Result{}, fmt.Errorf("load %q: read header: %w", name, err)
		}
		if hdr[0] == '#' && hdr[1] == '!' {
			sb, err := parseShebang(hdr[:])
			if err != nil {
				return Result{}, fmt.Errorf("load %q: %w", name, err)
			}
			// argv[0] is dropped, then the interpreter, its
			// argument and the script's path are put in front.
			used -= uint64(len(argv[0]) + 1)
			nargv := make([]string, 0, len(argv)+2)
			nargv = append(nargv, sb.Interp)
			if sb.HasArg {
				nargv = append(nargv, sb.Arg)
			}
			nargv = append(nargv, name)
			for _, s := range nargv {
				if used, err = addArg(used, budget, s); err != nil {
					return Result{}, err
				}
			}
			argv = append(nargv, argv[1:]...)
			f, err := openExec(op, sb.Interp)
			if err != nil {
				return Result{}, fmt.Errorf("load %q: open #! interpreter %q: %w", name, sb.Interp, err)
			}
			if f == nil {
				return Result{}, fmt.Errorf("load %q: open #! interpreter %q: no file: %w", name, sb.Interp, unix.ENOENT)
			}
			file, name = f, sb.Interp
			continue
		}
		res, err := loadELF(mem, op, file, hdr[:], &args, argv)
		if err != nil {
			return Result{}, fmt.Errorf("load %q: %w", name, err)
		}
		res.ExeFilename = name
		return res, nil
	}
}

// openExec opens an interpreter named by a #! line or PT_INTERP. Linux
// resolves an empty path to the current directory, which it refuses to
// execute with EACCES.
func openExec(op Opener, path string) (File, error) {
	if path == "" {
		return nil, fmt.Errorf("empty path: %w", unix.EACCES)
	}
	return op.Open(path)
}

// argBudget returns how many bytes of strings execve accepts for argc
// arguments and envc environment strings (fs/exec.c bprm_stack_limits).
func argBudget(stackLimit uint64, argc, envc int) (uint64, error) {
	if argc > maxArgStrings || envc > maxArgStrings {
		return 0, fmt.Errorf("%d arguments and %d environment strings: %w", argc, envc, unix.E2BIG)
	}
	if stackLimit == 0 {
		stackLimit = stkLim
	}
	limit := uint64(stkLim / 4 * 3)
	limit = min(limit, stackLimit/4)
	limit = max(limit, argMax)
	ptrs := uint64(max(argc, 1)+envc) * 8
	if limit <= ptrs {
		return 0, fmt.Errorf("%d arguments and %d environment strings: %w", argc, envc, unix.E2BIG)
	}
	return limit - ptrs, nil
}

// addArg accounts for one string copied to the new stack.
func addArg(used, budget uint64, s string) (uint64, error) {
	n := uint64(len(s)) + 1
	if n > maxArgStrlen {
		return used, fmt.Errorf("argument of %d bytes: %w", len(s), unix.E2BIG)
	}
	if used+n > budget {
		return used, fmt.Errorf("arguments and environment exceed %d bytes: %w", budget, unix.E2BIG)
	}
	return used + n, nil
}

// readHeader reads the first len(buf) bytes of f, zero-filling what lies
// past its end (as Linux fills bprm->buf).
func readHeader(f File, buf []byte) error {
	clear(buf)
	_, err := readAtFull(f, buf, 0)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return err
	}
	return nil
}

// readAtFull reads len(buf) bytes at off. It returns io.EOF (or
// io.ErrUnexpectedEOF) when the file is shorter, and other read errors as
// unix.Errno values (EIO unless the file gave an Errno).
func readAtFull(f File, buf []byte, off int64) (int, error) {
	total := 0
	for total < len(buf) {
		n, err := f.ReadAt(buf[total:], off+int64(total))
		if n < 0 || n > len(buf)-total {
			return total, fmt.Errorf("read returned %d bytes: %w", n, unix.EIO)
		}
		total += n
		if err != nil {
			if errors.Is(err, io.EOF) {
				if total == len(buf) {
					return total, nil
				}
				if total == 0 {
					return 0, io.EOF
				}
				return total, io.ErrUnexpectedEOF
			}
			var errno unix.Errno
			if errors.As(err, &errno) {
				return total, err
			}
			return total, fmt.Errorf("%v: %w", err, unix.EIO)
		}
		if n == 0 {
			// A reader that returns nothing without an error would
			// loop forever; treat it as the end of the file.
			if total == 0 {
				return 0, io.EOF
			}
			return total, io.ErrUnexpectedEOF
		}
	}
	return total, nil
}
