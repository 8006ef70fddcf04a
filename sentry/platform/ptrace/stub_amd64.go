package ptrace

import (
	"encoding/binary"
	"fmt"
)

// The stub page is mapped read-only and executable at stubAddr in every stub
// process. Its layout:
//
//	stubSyscall:  syscall            // injected system calls start here
//	              int3               // the injecting tracer regains control
//	stubLoop:     mov eax, SYS_pause // park until a tracer seizes us
//	              syscall
//	              jmp stubLoop
//	stubClone:    syscall            // injected clone and fork start here
//	              test rax, rax
//	              jz stubLoop        // the new thread or process (rax == 0)
//	              int3
//	stubInit:     ...                // run once in the template process
//	stubMapFD:    ...                // maps a Sentry descriptor (below)
//	stubClonePark: ...               // clone a thread that parks with
//	                                 // every signal blocked (below)
//
// stubInit resets every signal handler to the default, ignores SIGCHLD (so
// stub processes the template forks are reaped without it waiting), unblocks
// all signals, makes a process group of its own (setpgid), closes every
// descriptor but the memory file (and systrap's regions file), unmaps
// everything but the stub page (the Sentry's image the
// fork copied), stops itself with SIGSTOP for its tracer, then parks.
const (
	stubAddr = 0x7fff_fffe_0000
	stubSize = 0x1000

	// userTop is one past the highest user address (TASK_SIZE).
	userTop = 0x7fff_ffff_f000

	stubSyscallOff = 0
	stubLoopOff    = 8
	stubCloneOff   = 0x18
	stubInitOff    = 0x40
	stubMapFDOff   = 0x140
	stubParkOff    = 0x1c0
	stubDataOff    = 0x200
)

// asm is a minimal x86-64 code emitter with labels for the few relative
// jumps and RIP-relative addresses the stub needs.
type asm struct {
	b      []byte
	labels map[string]int
	fixups []fixup
}

type fixup struct {
	at    int // offset of the displacement
	size  int // 1 or 4
	end   int // offset the displacement is relative to
	label string
}

func (a *asm) emit(b ...byte)    { a.b = append(a.b, b...) }
func (a *asm) label(name string) { a.labels[name] = len(a.b) }
func (a *asm) padTo(off int) {
	for len(a.b) < off {
		a.emit(0xcc)
	}
}
func (a *asm) imm32(v uint32) { a.b = binary.LittleEndian.AppendUint32(a.b, v) }
func (a *asm) imm64(v uint64) { a.b = binary.LittleEndian.AppendUint64(a.b, v) }

// rel emits a displacement of size bytes to label, relative to the end of
// the instruction, which ends after the displacement plus trail bytes.
func (a *asm) rel(label string, size, trail int) {
	at := len(a.b)
	a.emit(make([]byte, size)...)
	a.fixups = append(a.fixups, fixup{at: at, size: size, end: at + size + trail, label: label})
}

func (a *asm) syscallInsn()      { a.emit(0x0f, 0x05) }
func (a *asm) movEAX(v uint32)   { a.emit(0xb8); a.imm32(v) }
func (a *asm) movEDI(v uint32)   { a.emit(0xbf); a.imm32(v) }
func (a *asm) movESI(v uint32)   { a.emit(0xbe); a.imm32(v) }
func (a *asm) movR10D(v uint32)  { a.emit(0x41, 0xba); a.imm32(v) }
func (a *asm) movRDI64(v uint64) { a.emit(0x48, 0xbf); a.imm64(v) }
func (a *asm) movRSI64(v uint64) { a.emit(0x48, 0xbe); a.imm64(v) }
func (a *asm) xorEDX()           { a.emit(0x31, 0xd2) }
func (a *asm) leaRSI(label string) {
	a.emit(0x48, 0x8d, 0x35) // lea rsi, [rip+disp32]
	a.rel(label, 4, 0)
}

func (a *asm) finish() ([]byte, error) {
	for _, f := range a.fixups {
		target, ok := a.labels[f.label]
		if !ok {
			return nil, fmt.Errorf("stub: undefined label %q", f.label)
		}
		d := target - f.end
		switch f.size {
		case 1:
			if d < -128 || d > 127 {
				return nil, fmt.Errorf("stub: jump to %q out of range", f.label)
			}
			a.b[f.at] = byte(int8(d))
		case 4:
			binary.LittleEndian.PutUint32(a.b[f.at:], uint32(int32(d)))
		}
	}
	return a.b, nil
}

// stubCode returns the contents of the stub page. memfd is the memory file,
// the one descriptor stub processes keep.
func stubCode(memfd int) ([]byte, error) {
	code, _, err := buildStub(memfd, -1)
	return code, err
}

// buildStub returns the contents of the stub page and the offsets of its
// labels. The stub processes keep memfd and, if it is not -1, commfd (the
// systrap platform's file of per-thread regions) open.
func buildStub(memfd, commfd int) ([]byte, map[string]int, error) {
	a := &asm{labels: map[string]int{}}
	a.label("syscall")
	a.syscallInsn()
	a.emit(0xcc) // int3
	a.padTo(stubLoopOff)
	a.label("loop")
	a.movEAX(34) // SYS_pause
	a.syscallInsn()
	a.emit(0xeb) // jmp loop
	a.rel("loop", 1, 0)

	a.padTo(stubCloneOff)
	a.label("clone")
	a.syscallInsn()
	a.emit(0x48, 0x85, 0xc0) // test rax, rax
	a.emit(0x74)             // jz loop
	a.rel("loop", 1, 0)
	a.emit(0xcc) // int3

	a.padTo(stubInitOff)
	a.label("init")
	// for r12d = 1; r12d != 65; r12d++ { rt_sigaction(r12d, &dfl, NULL, 8) }
	a.emit(0x41, 0xbc, 1, 0, 0, 0) // mov r12d, 1
	a.label("sigloop")
	a.emit(0x44, 0x89, 0xe7) // mov edi, r12d
	a.leaRSI("dfl")
	a.xorEDX()
	a.movR10D(8)
	a.movEAX(13) // SYS_rt_sigaction
	a.syscallInsn()
	a.emit(0x41, 0xff, 0xc4)       // inc r12d
	a.emit(0x41, 0x83, 0xfc, 0x41) // cmp r12d, 65
	a.emit(0x75)                   // jne sigloop
	a.rel("sigloop", 1, 0)
	// rt_sigaction(SIGCHLD, &ign, NULL, 8)
	a.movEDI(17)
	a.leaRSI("ign")
	a.xorEDX()
	a.movR10D(8)
	a.movEAX(13)
	a.syscallInsn()
	// rt_sigprocmask(SIG_SETMASK, &zero, NULL, 8)
	a.movEDI(2)
	a.leaRSI("dfl")
	a.xorEDX()
	a.movR10D(8)
	a.movEAX(14)
	a.syscallInsn()
	// setpgid(0, 0): a process group of its own, never the terminal's
	// foreground one, so that no host terminal's signals (^C, SIGWINCH)
	// reach the stubs, whose tracers would have to drop them; every stub
	// process is forked from this one. Not setsid: with the scheduler's
	// autogroups (sched_autogroup_enabled) a session of its own puts each
	// stub in a scheduling group apart from its tracer's, which tripled
	// the cost of a pipe round trip between two sandboxed processes.
	a.emit(0x31, 0xff) // xor edi, edi
	a.emit(0x31, 0xf6) // xor esi, esi
	a.movEAX(109)      // SYS_setpgid
	a.syscallInsn()
	// close_range(0, memfd-1, 0); close_range(memfd+1, ~0, 0), with a
	// hole for commfd too when there is one.
	keep := []int{memfd}
	if commfd >= 0 {
		keep = append(keep, commfd)
		if commfd < memfd {
			keep[0], keep[1] = commfd, memfd
		}
	}
	lo := 0
	for _, fd := range keep {
		if fd > lo {
			a.movEDI(uint32(lo))
			a.movESI(uint32(fd - 1))
			a.xorEDX()
			a.movEAX(436)
			a.syscallInsn()
		}
		lo = fd + 1
	}
	a.movEDI(uint32(lo))
	a.movESI(0xffffffff)
	a.xorEDX()
	a.movEAX(436)
	a.syscallInsn()
	// munmap(0, stubAddr)
	a.emit(0x31, 0xff) // xor edi, edi
	a.movRSI64(stubAddr)
	a.movEAX(11)
	a.syscallInsn()
	// munmap(stubAddr+stubSize, userTop-(stubAddr+stubSize))
	a.movRDI64(stubAddr + stubSize)
	a.movRSI64(userTop - (stubAddr + stubSize))
	a.movEAX(11)
	a.syscallInsn()
	// kill(getpid(), SIGSTOP)
	a.movEAX(39)
	a.syscallInsn()
	a.emit(0x89, 0xc7) // mov edi, eax
	a.movESI(19)
	a.movEAX(62)
	a.syscallInsn()
	a.emit(0xe9) // jmp loop
	a.rel("loop", 4, 0)

	// stubMapFD maps a descriptor of the Sentry into the stub, for
	// MapHostFD: with rdi the Sentry's pid, r10 its descriptor, r9, r13,
	// r14, r15 and rbp mmap's address, length, prot, flags and offset,
	// and rbx and r8 set to -1 by the tracer, it does
	//	rbx = pidfd_open(rdi, 0)            // rax < 0: out, rbx stays -1
	//	r8 = pidfd_getfd(rbx, r10, 0)       // rax < 0: r8 stays -1
	//	r12 = mmap(r9, r13, r14, r15, r8, rbp)
	//	close(r8); close(rbx); rax = r12
	// and stops at int3 with rax the mmap's result or the first error.
	// The descriptors live only for the call.
	a.padTo(stubMapFDOff)
	a.label("mapfd")
	a.emit(0x31, 0xf6) // xor esi, esi
	a.movEAX(434)      // SYS_pidfd_open
	a.syscallInsn()
	a.emit(0x48, 0x85, 0xc0) // test rax, rax
	a.emit(0x78)             // js out
	a.rel("mapfd_out", 1, 0)
	a.emit(0x48, 0x89, 0xc3) // mov rbx, rax
	a.emit(0x48, 0x89, 0xdf) // mov rdi, rbx
	a.emit(0x4c, 0x89, 0xd6) // mov rsi, r10
	a.xorEDX()
	a.movEAX(438) // SYS_pidfd_getfd
	a.syscallInsn()
	a.emit(0x49, 0x89, 0xc4) // mov r12, rax
	a.emit(0x48, 0x85, 0xc0) // test rax, rax
	a.emit(0x78)             // js closepid
	a.rel("mapfd_closepid", 1, 0)
	a.emit(0x49, 0x89, 0xc0) // mov r8, rax
	a.emit(0x4c, 0x89, 0xcf) // mov rdi, r9
	a.emit(0x4c, 0x89, 0xee) // mov rsi, r13
	a.emit(0x4c, 0x89, 0xf2) // mov rdx, r14
	a.emit(0x4d, 0x89, 0xfa) // mov r10, r15
	a.emit(0x49, 0x89, 0xe9) // mov r9, rbp
	a.movEAX(9)              // SYS_mmap
	a.syscallInsn()
	a.emit(0x49, 0x89, 0xc4) // mov r12, rax
	a.emit(0x4c, 0x89, 0xc7) // mov rdi, r8
	a.movEAX(3)              // SYS_close
	a.syscallInsn()
	a.label("mapfd_closepid")
	a.emit(0x48, 0x89, 0xdf) // mov rdi, rbx
	a.movEAX(3)              // SYS_close
	a.syscallInsn()
	a.emit(0x4c, 0x89, 0xe0) // mov rax, r12
	a.label("mapfd_out")
	a.emit(0xcc) // int3

	// stubClonePark is stubClone for a thread cloned ahead of need: the
	// child blocks every signal before it parks, so no signal sent to
	// the whole stub process picks it (and kills the process, untraced
	// as it is) before a tracer seizes it and unblocks them.
	a.padTo(stubParkOff)
	a.label("park")
	a.syscallInsn()
	a.emit(0x48, 0x85, 0xc0) // test rax, rax
	a.emit(0x75)             // jnz park_parent
	a.rel("park_parent", 1, 0)
	// rt_sigprocmask(SIG_SETMASK, &allsigs, NULL, 8)
	a.movEDI(2)
	a.leaRSI("allsigs")
	a.xorEDX()
	a.movR10D(8)
	a.movEAX(14)
	a.syscallInsn()
	a.emit(0xe9) // jmp loop
	a.rel("loop", 4, 0)
	a.label("park_parent")
	a.emit(0xcc) // int3

	a.padTo(stubDataOff)
	a.label("dfl") // struct sigaction {SIG_DFL, 0, 0, 0}; also a zero sigset
	a.emit(make([]byte, 32)...)
	a.label("ign") // struct sigaction {SIG_IGN, 0, 0, 0}
	a.imm64(1)
	a.emit(make([]byte, 24)...)
	a.label("allsigs") // a full sigset
	a.imm64(^uint64(0))

	if err := emitSystrap(a); err != nil {
		return nil, nil, err
	}
	code, err := a.finish()
	if err != nil {
		return nil, nil, err
	}
	if a.labels["loop"] != stubLoopOff || a.labels["init"] != stubInitOff || a.labels["clone"] != stubCloneOff || a.labels["mapfd"] != stubMapFDOff || a.labels["park"] != stubParkOff {
		return nil, nil, fmt.Errorf("stub: layout drifted: loop at %#x, init at %#x", a.labels["loop"], a.labels["init"])
	}
	if len(code) > stubSize {
		return nil, nil, fmt.Errorf("stub: %d bytes do not fit its page", len(code))
	}
	page := make([]byte, stubSize)
	copy(page, code)
	return page, a.labels, nil
}
