#include "textflag.h"

// func rawForkStub(memfd, addr, size, entry, rseqArea, rseqLen uintptr) (pid, errno uintptr)
//
// rawForkStub forks the calling thread into a new process. The child never
// returns to Go: it asks to be traced by the calling thread, asks to be
// killed when that thread dies, maps the stub page from the memory file and
// jumps to entry (stubInit), all with raw system calls and no stack use
// beyond what fork copied. If rseqArea is not 0, the child first
// unregisters the rseq area libc registered for the thread, whose memory it
// is about to unmap. The caller must have blocked all signals.
TEXT ·rawForkStub(SB),NOSPLIT,$0-64
	MOVQ memfd+0(FP), R12
	MOVQ addr+8(FP), R13
	MOVQ size+16(FP), R14
	MOVQ entry+24(FP), R15
	MOVQ rseqArea+32(FP), BX
	MOVQ rseqLen+40(FP), R9
	MOVQ $56, AX // SYS_clone
	MOVQ $17, DI // SIGCHLD
	XORQ SI, SI
	XORQ DX, DX
	XORQ R10, R10
	XORQ R8, R8
	SYSCALL
	CMPQ AX, $0
	JEQ child
	CMPQ AX, $0xfffffffffffff001
	JLS ok
	NEGQ AX
	MOVQ $0, pid+48(FP)
	MOVQ AX, errno+56(FP)
	RET
ok:
	MOVQ AX, pid+48(FP)
	MOVQ $0, errno+56(FP)
	RET

child:
	// rseq(area, len, RSEQ_FLAG_UNREGISTER, RSEQ_SIG)
	TESTQ BX, BX
	JEQ norseq
	MOVQ $334, AX
	MOVQ BX, DI
	MOVQ R9, SI
	MOVQ $1, DX
	MOVQ $0x53053053, R10
	SYSCALL
norseq:
	// ptrace(PTRACE_TRACEME, 0, 0, 0)
	MOVQ $101, AX
	XORQ DI, DI
	XORQ SI, SI
	XORQ DX, DX
	XORQ R10, R10
	SYSCALL
	TESTQ AX, AX
	JNE die
	// prctl(PR_SET_PDEATHSIG, SIGKILL)
	MOVQ $157, AX
	MOVQ $1, DI
	MOVQ $9, SI
	SYSCALL
	// mmap(addr, size, PROT_READ|PROT_EXEC, MAP_SHARED|MAP_FIXED, memfd, 0)
	MOVQ R13, DI
	MOVQ R14, SI
	MOVQ $5, DX
	MOVQ $0x11, R10
	MOVQ R12, R8
	XORQ R9, R9
	MOVQ $9, AX
	SYSCALL
	CMPQ AX, R13
	JNE die
	JMP R15

die:
	MOVQ $231, AX // exit_group(111)
	MOVQ $111, DI
	SYSCALL
	JMP die

// func rawForkStubPC() uintptr
TEXT ·rawForkStubPC(SB),NOSPLIT,$0-8
	LEAQ ·rawForkStub(SB), AX
	MOVQ AX, ret+0(FP)
	RET
