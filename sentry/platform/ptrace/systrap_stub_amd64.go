package ptrace

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"
)

// The systrap part of the stub page: the code a worker thread starts in,
// its signal handler, and the data they use (see systrap.go for the
// protocol).
//
//	stubNewWorker: mmap(rdi..r9)         // the master injects it: maps
//	              cmp rax, rbx          // the region at rbx, then
//	              jne newWorkerFail
//	              clone(r12, r13, 0, r14, 0)
//	              test rax, rax         // (rbx is the region in the child)
//	              jz workerInit
//	              int3
//	newWorkerFail: r15d = 1; int3       // the mmap failed (rax)
//	workerInit:   sigaltstack(&region.altstack, NULL)
//	              rt_sigaction(sig, &trapAction, NULL, 8) for each trapped sig
//	              prctl(PR_SET_NO_NEW_PRIVS, 1)
//	              seccomp(SECCOMP_SET_MODE_FILTER, 0, &trapProg)
//	              int3                  // the first trap: ready
//	workerFail:   region.initErr = eax; exit(0)
//	trapHandler:  ...                   // below
//	trapRestorer: rt_sigreturn
//
// Registers in the handler: rbx is the region (rsp rounded down to the
// region size, as the alternate stack lies in the region), r13d how long
// to spin before sleeping; nothing else is kept, since rt_sigreturn
// restores every register from the frame.
const (
	stubNewWorkerOff = 0x400
)

// trappedSignals are the signals a worker's handler reports to the Sentry.
var trappedSignals = []unix.Signal{
	unix.SIGSYS, unix.SIGSEGV, unix.SIGBUS, unix.SIGFPE, unix.SIGILL, unix.SIGTRAP, interruptSignal,
}

// Offsets in a worker's region (the comm page; see commPage).
const (
	commState         = 0x00
	commSentryWaiting = 0x04
	commWorkerWaiting = 0x08
	commSigno         = 0x0c
	commInfo          = 0x10
	commUcontext      = 0x18
	commFSFlag        = 0x20
	commFSBase        = 0x28
	commInitErr       = 0x30
	commSpin          = 0x34
	commGSBase        = 0x38
	commAltstack      = 0x40
	// commNoSpin is a byte per system call number below noSpinCalls:
	// non-zero when the Sentry found that serving that call usually
	// takes longer than the worker's spin (it blocks: a read of an
	// empty pipe, a wait), so the handler sleeps at once on it instead
	// of burning a CPU the peer it waits for may need.
	commNoSpin  = 0x800
	noSpinCalls = 512
)

// Values of the state word.
const (
	stateDead    = 0 // the worker exited (CLONE_CHILD_CLEARTID) or never ran
	stateRunning = 1 // the Sentry let the worker go; it runs application code
	stateTrapped = 2 // the worker is in its handler, waiting for the Sentry
	stateExit    = 3 // the Sentry asks the worker to exit
)

// Labels of the instructions right after the handler's system calls: the
// only instruction pointers the worker's filter lets a system call come
// from.
var systrapSyscallSites = map[string]int{
	"trap_futex_wake":    unix.SYS_FUTEX,
	"trap_futex_wait":    unix.SYS_FUTEX,
	"trap_arch_prctl":    unix.SYS_ARCH_PRCTL,
	"trap_arch_prctl_gs": unix.SYS_ARCH_PRCTL,
	"trap_exit":          unix.SYS_EXIT,
	"trap_sigreturn":     unix.SYS_RT_SIGRETURN,
}

// emitSystrap appends the systrap code and data to the stub.
func emitSystrap(a *asm) error {
	if len(a.b) > stubNewWorkerOff {
		return fmt.Errorf("stub: ptrace part overlaps the systrap part (%#x bytes)", len(a.b))
	}
	a.padTo(stubNewWorkerOff)
	// A worker in one injected call: mmap of its region with the
	// arguments in rdi, rsi, rdx, r10, r8, r9 (rbx = the address), then
	// clone(r12, r13, 0, r14, 0) with the state word as clear_child_tid.
	a.label("new_worker")
	a.movEAX(unix.SYS_MMAP)
	a.syscallInsn()
	a.emit(0x48, 0x39, 0xd8) // cmp rax, rbx
	a.emit(0x75)             // jne new_worker_fail
	a.rel("new_worker_fail", 1, 0)
	a.emit(0x4c, 0x89, 0xe7) // mov rdi, r12
	a.emit(0x4c, 0x89, 0xee) // mov rsi, r13
	a.xorEDX()
	a.emit(0x4d, 0x89, 0xf2) // mov r10, r14
	a.emit(0x45, 0x31, 0xc0) // xor r8d, r8d
	a.movEAX(unix.SYS_CLONE)
	a.label("worker")
	a.syscallInsn()
	a.emit(0x48, 0x85, 0xc0) // test rax, rax
	a.emit(0x74)             // jz worker_init
	a.rel("worker_init", 1, 0)
	a.emit(0xcc) // int3
	a.label("new_worker_fail")
	a.emit(0x41, 0xbf, 1, 0, 0, 0) // mov r15d, 1
	a.emit(0xcc)                   // int3

	a.label("worker_init")
	failIfNonzero := func() {
		a.emit(0x48, 0x85, 0xc0) // test rax, rax
		a.emit(0x0f, 0x85)       // jnz worker_fail
		a.rel("worker_fail", 4, 0)
	}
	// sigaltstack(rbx+commAltstack, NULL)
	a.emit(0x48, 0x8d, 0x7b, commAltstack) // lea rdi, [rbx+commAltstack]
	a.emit(0x31, 0xf6)                     // xor esi, esi
	a.movEAX(unix.SYS_SIGALTSTACK)
	a.syscallInsn()
	failIfNonzero()
	for _, sig := range trappedSignals {
		a.movEDI(uint32(sig))
		a.leaRSI("trap_action")
		a.xorEDX()
		a.movR10D(8)
		a.movEAX(unix.SYS_RT_SIGACTION)
		a.syscallInsn()
		failIfNonzero()
	}
	// prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
	a.movEDI(unix.PR_SET_NO_NEW_PRIVS)
	a.movESI(1)
	a.xorEDX()
	a.emit(0x45, 0x31, 0xd2) // xor r10d, r10d
	a.emit(0x45, 0x31, 0xc0) // xor r8d, r8d
	a.movEAX(unix.SYS_PRCTL)
	a.syscallInsn()
	failIfNonzero()
	// seccomp(SECCOMP_SET_MODE_FILTER, 0, &trap_prog): this thread only.
	a.movEDI(unix.SECCOMP_SET_MODE_FILTER)
	a.emit(0x31, 0xf6)       // xor esi, esi
	a.emit(0x48, 0x8d, 0x15) // lea rdx, [rip+trap_prog]
	a.rel("trap_prog", 4, 0)
	a.movEAX(unix.SYS_SECCOMP)
	a.syscallInsn()
	failIfNonzero()
	a.emit(0xcc)       // int3: the first trap
	a.emit(0x0f, 0x0b) // ud2: never reached
	a.label("worker_fail")
	a.emit(0x89, 0x43, commInitErr) // mov [rbx+commInitErr], eax
	a.movEAX(unix.SYS_EXIT)
	a.emit(0x31, 0xff) // xor edi, edi
	a.syscallInsn()
	a.emit(0xeb, 0xfe) // jmp $

	// The handler: rdi = signo, rsi = &siginfo, rdx = &ucontext, all on
	// the alternate stack in the region.
	a.label("trap_handler")
	a.emit(0x48, 0x89, 0xe3)                         // mov rbx, rsp
	a.emit(0x48, 0x81, 0xe3, 0x00, 0x00, 0xff, 0xff) // and rbx, -0x10000 (regionSize)
	a.emit(0x89, 0x7b, commSigno)                    // mov [rbx+commSigno], edi
	a.emit(0x48, 0x89, 0x73, commInfo)               // mov [rbx+commInfo], rsi
	a.emit(0x48, 0x89, 0x53, commUcontext)           // mov [rbx+commUcontext], rdx
	// r13d = how long to spin: commSpin, or 0 for a system call the
	// Sentry marked in commNoSpin.
	a.emit(0x44, 0x8b, 0x6b, commSpin)    // mov r13d, [rbx+commSpin]
	a.emit(0x83, 0xff, byte(unix.SIGSYS)) // cmp edi, SIGSYS
	a.emit(0x75)                          // jne trap_publish
	a.rel("trap_publish", 1, 0)
	a.emit(0x8b, 0x46, 24) // mov eax, [rsi+24] (si_syscall)
	a.emit(0x3d)           // cmp eax, noSpinCalls
	a.imm32(noSpinCalls)
	a.emit(0x73) // jae trap_publish
	a.rel("trap_publish", 1, 0)
	a.emit(0x80, 0xbc, 0x03) // cmp byte [rbx+rax+commNoSpin], 0
	a.imm32(commNoSpin)
	a.emit(0x00)
	a.emit(0x74) // je trap_publish
	a.rel("trap_publish", 1, 0)
	a.emit(0x45, 0x31, 0xed) // xor r13d, r13d
	a.label("trap_publish")
	a.movEAX(stateTrapped)
	a.emit(0x87, 0x03)                         // xchg [rbx], eax (a full barrier)
	a.emit(0x83, 0x7b, commSentryWaiting, 0x0) // cmp dword [rbx+commSentryWaiting], 0
	a.emit(0x74)                               // je trap_spin
	a.rel("trap_spin", 1, 0)
	// futex(&state, FUTEX_WAKE, 1)
	a.emit(0x48, 0x89, 0xdf) // mov rdi, rbx
	a.movESI(futexWake)
	a.emit(0xba, 1, 0, 0, 0) // mov edx, 1
	a.movEAX(unix.SYS_FUTEX)
	a.syscallInsn()
	a.label("trap_futex_wake")
	a.label("trap_spin")
	a.emit(0x44, 0x89, 0xe9) // mov ecx, r13d
	a.label("trap_spinloop")
	a.emit(0x8b, 0x03)               // mov eax, [rbx]
	a.emit(0x83, 0xf8, stateTrapped) // cmp eax, stateTrapped
	a.emit(0x75)                     // jne trap_go
	a.rel("trap_go", 1, 0)
	a.emit(0x83, 0xe9, 0x01) // sub ecx, 1
	a.emit(0x72)             // jb trap_sleep (ecx was 0)
	a.rel("trap_sleep", 1, 0)
	a.emit(0xf3, 0x90) // pause
	a.emit(0xeb)       // jmp trap_spinloop
	a.rel("trap_spinloop", 1, 0)
	a.label("trap_sleep")
	// Sleep: workerWaiting = 1, then look at the state once more before
	// futex(&state, FUTEX_WAIT, stateTrapped, NULL).
	a.movEAX(1)
	a.emit(0x87, 0x43, commWorkerWaiting) // xchg [rbx+commWorkerWaiting], eax
	a.emit(0x83, 0x3b, stateTrapped)      // cmp dword [rbx], stateTrapped
	a.emit(0x75)                          // jne trap_woke
	a.rel("trap_woke", 1, 0)
	a.emit(0x48, 0x89, 0xdf) // mov rdi, rbx
	a.emit(0x31, 0xf6)       // xor esi, esi (FUTEX_WAIT)
	a.emit(0xba, stateTrapped, 0, 0, 0)
	a.emit(0x45, 0x31, 0xd2) // xor r10d, r10d
	a.movEAX(unix.SYS_FUTEX)
	a.syscallInsn()
	a.label("trap_futex_wait")
	a.label("trap_woke")
	a.emit(0xc7, 0x43, commWorkerWaiting, 0, 0, 0, 0) // mov dword [rbx+commWorkerWaiting], 0
	a.emit(0xeb)                                      // jmp trap_spin
	a.rel("trap_spin", 1, 0)
	a.label("trap_go")
	a.emit(0x83, 0xf8, stateRunning) // cmp eax, stateRunning
	a.emit(0x75)                     // jne trap_quit
	a.rel("trap_quit", 1, 0)
	// Segment bases the Sentry changed: commFSFlag bit 0 for fs, bit 1
	// for gs.
	a.emit(0x44, 0x8b, 0x63, commFSFlag) // mov r12d, [rbx+commFSFlag]
	a.emit(0x45, 0x85, 0xe4)             // test r12d, r12d
	a.emit(0x74)                         // je trap_return
	a.rel("trap_return", 1, 0)
	a.emit(0xc7, 0x43, commFSFlag, 0, 0, 0, 0) // mov dword [rbx+commFSFlag], 0
	a.emit(0x41, 0xf6, 0xc4, 0x01)             // test r12b, 1
	a.emit(0x74)                               // je trap_gs
	a.rel("trap_gs", 1, 0)
	a.movEDI(archSetFS)
	a.emit(0x48, 0x8b, 0x73, commFSBase) // mov rsi, [rbx+commFSBase]
	a.movEAX(unix.SYS_ARCH_PRCTL)
	a.syscallInsn()
	a.label("trap_arch_prctl")
	a.label("trap_gs")
	a.emit(0x41, 0xf6, 0xc4, 0x02) // test r12b, 2
	a.emit(0x74)                   // je trap_return
	a.rel("trap_return", 1, 0)
	a.movEDI(archSetGS)
	a.emit(0x48, 0x8b, 0x73, commGSBase) // mov rsi, [rbx+commGSBase]
	a.movEAX(unix.SYS_ARCH_PRCTL)
	a.syscallInsn()
	a.label("trap_arch_prctl_gs")
	a.label("trap_return")
	a.emit(0xc3) // ret: to trap_restorer, the frame's return address
	a.label("trap_quit")
	a.movEAX(unix.SYS_EXIT)
	a.emit(0x31, 0xff) // xor edi, edi
	a.syscallInsn()
	a.label("trap_exit")
	a.emit(0xeb) // jmp trap_quit
	a.rel("trap_quit", 1, 0)
	a.label("trap_restorer")
	a.movEAX(unix.SYS_RT_SIGRETURN)
	a.syscallInsn()
	a.label("trap_sigreturn")
	a.emit(0x0f, 0x0b) // ud2

	// struct sigaction for the trapped signals.
	for len(a.b)%8 != 0 {
		a.emit(0xcc)
	}
	a.label("trap_action")
	a.imm64(stubAddr + uint64(a.labels["trap_handler"]))
	a.imm64(saSiginfo | saOnstack | saRestorer)
	a.imm64(stubAddr + uint64(a.labels["trap_restorer"]))
	a.imm64(^uint64(0)) // block everything in the handler
	// struct sock_fprog, then the filter.
	filter := systrapFilter(a.labels)
	a.label("trap_prog")
	a.b = binary.LittleEndian.AppendUint16(a.b, uint16(len(filter)))
	a.emit(0, 0, 0, 0, 0, 0)
	a.imm64(stubAddr + uint64(len(a.b)+8))
	for _, f := range filter {
		a.b = binary.LittleEndian.AppendUint16(a.b, f.Code)
		a.emit(f.Jt, f.Jf)
		a.imm32(f.K)
	}
	return nil
}

// ABI constants x/sys/unix does not name on amd64.
const (
	saSiginfo  = 0x4        // SA_SIGINFO
	saOnstack  = 0x08000000 // SA_ONSTACK
	saRestorer = 0x04000000 // SA_RESTORER
	futexWait  = 0          // FUTEX_WAIT (shared: the Sentry is another process)
	futexWake  = 1          // FUTEX_WAKE
	archSetFS  = 0x1002     // ARCH_SET_FS
	archSetGS  = 0x1001     // ARCH_SET_GS
	sysSeccomp = 1          // SYS_SECCOMP, si_code of a seccomp SIGSYS
)

// Seccomp return values.
const (
	seccompRetKillProcess = 0x80000000
	seccompRetTrap        = 0x00030000
	seccompRetAllow       = 0x7fff0000
)

// systrapFilter returns the worker's seccomp filter, given the stub's
// labels. A system call from anywhere but the stub page traps (SIGSYS, to
// the handler); from the stub page, only the handler's own calls are
// allowed, each at its own site and with the arguments the handler uses,
// and anything else kills the stub process: application code can jump to
// any instruction of the stub with any registers, so a system call there
// is either the handler's or an attack; one of a foreign architecture
// (int 0x80) in the stub page kills too.
func systrapFilter(labels map[string]int) []unix.SockFilter {
	const (
		ldAbs = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge   = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		ret   = unix.BPF_RET | unix.BPF_K

		offNr     = 0
		offArch   = 4
		offIPLow  = 8
		offIPHigh = 12
		offArg0   = 16
		offArg1   = 24
	)
	type site struct {
		ip   uint32
		nr   int
		arg  uint32 // offset of the argument checked, or 0
		vals []uint32
	}
	var sites []site
	for _, name := range []string{"trap_futex_wake", "trap_futex_wait", "trap_arch_prctl", "trap_arch_prctl_gs", "trap_exit", "trap_sigreturn"} {
		s := site{ip: uint32((stubAddr + uint64(labels[name])) & 0xffffffff), nr: systrapSyscallSites[name]}
		switch s.nr {
		case unix.SYS_FUTEX:
			s.arg, s.vals = offArg1, []uint32{futexWait, futexWake}
		case unix.SYS_ARCH_PRCTL:
			s.arg, s.vals = offArg0, []uint32{archSetFS}
			if name == "trap_arch_prctl_gs" {
				s.vals = []uint32{archSetGS}
			}
		}
		sites = append(sites, s)
	}
	// Build back to front so that jumps are known: prog is reversed at
	// the end. Labels are indexes from the end.
	var rev []unix.SockFilter
	add := func(f unix.SockFilter) int { rev = append(rev, f); return len(rev) - 1 }
	jumpTo := func(target int) uint8 {
		// From the instruction about to be added (index len(rev) from
		// the end) to target (an index from the end): pc+1+j.
		return uint8(len(rev) - 1 - target)
	}
	kill := add(unix.SockFilter{Code: ret, K: seccompRetKillProcess})
	allow := add(unix.SockFilter{Code: ret, K: seccompRetAllow})
	trap := add(unix.SockFilter{Code: ret, K: seccompRetTrap})
	// Per site: ld nr; jeq nr; (ld arg; jeq v...) ; allow.
	siteStart := make([]int, len(sites))
	for i := len(sites) - 1; i >= 0; i-- {
		s := sites[i]
		if s.arg != 0 {
			// The last value falls through to kill.
			add(unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JA, K: uint32(jumpTo(kill))})
			for j := len(s.vals) - 1; j >= 0; j-- {
				add(unix.SockFilter{Code: jeq, K: s.vals[j], Jt: jumpTo(allow)})
			}
			add(unix.SockFilter{Code: ldAbs, K: s.arg})
			next := len(rev) - 1
			add(unix.SockFilter{Code: jeq, K: uint32(s.nr), Jt: jumpTo(next), Jf: jumpTo(kill)})
		} else {
			add(unix.SockFilter{Code: jeq, K: uint32(s.nr), Jt: jumpTo(allow), Jf: jumpTo(kill)})
		}
		siteStart[i] = add(unix.SockFilter{Code: ldAbs, K: offNr})
	}
	// In the stub page: an x86-64 call at a site goes on to the site's
	// checks, anything else kills.
	add(unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JA, K: uint32(jumpTo(kill))})
	for i := len(sites) - 1; i >= 0; i-- {
		add(unix.SockFilter{Code: jeq, K: sites[i].ip, Jt: jumpTo(siteStart[i])})
	}
	add(unix.SockFilter{Code: ldAbs, K: offIPLow})
	add(unix.SockFilter{Code: jeq, K: unix.AUDIT_ARCH_X86_64, Jf: jumpTo(kill)})
	inStub := add(unix.SockFilter{Code: ldAbs, K: offArch})
	// Outside the stub page: trap, whatever the architecture (an int
	// 0x80 reaches the Sentry as under ptrace).
	lo := uint32(stubAddr & 0xffffffff)
	add(unix.SockFilter{Code: jge, K: lo + stubSize, Jt: jumpTo(trap), Jf: jumpTo(inStub)})
	add(unix.SockFilter{Code: jge, K: lo, Jf: jumpTo(trap)})
	add(unix.SockFilter{Code: ldAbs, K: offIPLow})
	add(unix.SockFilter{Code: jeq, K: uint32(stubAddr >> 32), Jf: jumpTo(trap)})
	add(unix.SockFilter{Code: ldAbs, K: offIPHigh})
	prog := make([]unix.SockFilter, len(rev))
	for i, f := range rev {
		prog[len(rev)-1-i] = f
	}
	return prog
}
