// Package loader implements execve(2)'s loading step: it turns an open
// executable into a process image in a fresh address space and builds the
// initial stack, with Linux's semantics on amd64.
//
// It owns the binary formats (ELF64 x86-64 executables of type ET_EXEC and
// ET_DYN, with or without a PT_INTERP interpreter, and "#!" scripts), the
// argument limits of execve and the layout of the initial stack and
// auxiliary vector. It owns no address space: it asks a Memory (provided
// by the memory manager) for mappings and writes, and an Opener for the
// interpreter files. It has no locks and keeps no state between calls.
//
// # Flow
//
// Load checks the argument and environment sizes (E2BIG), then looks at
// the first 256 bytes of the file. A "#!" line rewrites argv to
// [interpreter, optional argument, script path, argv[1:]...] and starts
// over with the interpreter (at most five nested scripts, then ELOOP). An
// ELF file is validated completely, and its interpreter opened and
// validated, before anything is mapped. Then:
//
//   - the main executable's PT_LOAD segments are mapped: ET_EXEC at their
//     addresses, ET_DYN at arch.PIELoadBase (rounded down to the largest
//     segment alignment); brk starts at the page after the last segment;
//   - an ET_DYN interpreter gets one PROT_NONE reservation of its whole
//     span wherever Memory chooses, and its segments are mapped fixed
//     inside it;
//   - each segment's file pages are mapped copy-on-write, the tail of
//     the last file page past p_filesz is zeroed when p_memsz > p_filesz,
//     and anonymous pages cover the rest of p_memsz;
//   - the stack is mapped and filled in, and execution starts at the
//     interpreter's entry point, or the executable's when there is none.
//
// # Initial stack
//
// As Linux builds it (fs/exec.c, fs/binfmt_elf.c create_elf_tables), from
// the top of the stack mapping down, addresses decreasing:
//
//	top      -> +----------------------------------+
//	            | 8 zero bytes                     |
//	            | execfn string (AT_EXECFN)        |  the path given to execve
//	            | envp strings, envp[envc-1] last  |
//	            | argv strings, argv[0] first      |  <- ArgvStart; EnvvStart = ArgvEnd
//	            | 0-15 bytes to align to 16        |
//	            | "x86_64\0" (AT_PLATFORM)         |
//	            | 16 random bytes (AT_RANDOM)      |
//	            | padding so that sp is 16-aligned |
//	            | AT_NULL, 0                       |
//	            | ... auxv (key, value) pairs      |
//	            | NULL                             |
//	            | envp[0..envc-1] pointers         |
//	            | NULL                             |
//	            | argv[0..argc-1] pointers         |
//	sp       -> | argc                             |  16-byte aligned
//	            +----------------------------------+
//
// Strings are stored in order: argv[0] at the lowest address, each string
// followed by its NUL, envp strings right after the argv strings and the
// execfn string right after those (so EnvvEnd is the AT_EXECFN address).
// Linux moves everything from the platform string down by a random
// amount below 8 KiB; this loader does not.
//
// The auxiliary vector, in Linux's order: AT_SYSINFO_EHDR (when there is a
// vDSO), AT_MINSIGSTKSZ (when given), AT_HWCAP, AT_PAGESZ, AT_CLKTCK,
// AT_PHDR, AT_PHENT, AT_PHNUM, AT_BASE, AT_FLAGS, AT_ENTRY, AT_UID, AT_EUID,
// AT_GID, AT_EGID, AT_SECURE, AT_RANDOM, AT_HWCAP2, AT_EXECFN, AT_PLATFORM,
// AT_NULL. AT_PHDR, AT_PHENT, AT_PHNUM and AT_ENTRY describe the main
// executable; AT_BASE is the interpreter's load bias (0 without one).
//
// # Errors
//
// Errors wrap unix.Errno values that match Linux's for the same file:
// ENOEXEC for unknown formats and broken ELF headers, EINVAL for segments
// that cannot be mapped, EPERM for segments below the lowest mappable
// address, ELIBBAD for a broken interpreter, EIO for truncated PT_INTERP
// data, E2BIG for arguments, ELOOP for nested scripts. Nothing in the
// input can make the loader panic or allocate more than a few pages
// beyond the argument strings: at most one page of program headers and
// PATH_MAX bytes of interpreter path are read.
package loader
