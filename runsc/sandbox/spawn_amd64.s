#include "textflag.h"

// func rawSpawn(args *cloneArgs, size uintptr, steps *spawnStep, n uintptr, res *[2]int64) (pid, errno uintptr)
//
// rawSpawn calls clone3(args, size), where args's flags hold
// CLONE_VM|CLONE_VFORK and no stack is given: the child shares the
// caller's memory and runs on its stack pointer, and the caller is
// suspended until the child has called execve or exited. The child runs
// the n steps, each a system call (spawnStep), with no stack use, and
// exits with status 127 after storing in res the raw result of the first
// step that failed (a negative errno, or -ESRCH for a result other than
// the one a spawnWantA5 step wants) and its index, unless the step says
// its failure is to be ignored. The last step is normally an execve,
// after which the child is gone from the caller's memory. The caller must
// have blocked every signal (the child inherits the mask, and must never
// take a signal on the caller's stack), and keep args, steps, res and
// everything they point to alive until rawSpawn returns.
TEXT ·rawSpawn(SB),NOSPLIT,$0-56
	MOVQ args+0(FP), DI
	MOVQ size+8(FP), SI
	MOVQ steps+16(FP), R12
	MOVQ n+24(FP), R15
	MOVQ res+32(FP), BX
	MOVQ $435, AX // SYS_clone3
	SYSCALL
	CMPQ AX, $0
	JEQ child
	CMPQ AX, $0xfffffffffffff001
	JLS ok
	NEGQ AX
	MOVQ $0, pid+40(FP)
	MOVQ AX, errno+48(FP)
	RET
ok:
	MOVQ AX, pid+40(FP)
	MOVQ $0, errno+48(FP)
	RET

child:
	XORQ R13, R13 // the previous step's result
	XORQ BP, BP   // the step's index
loop:
	CMPQ BP, R15
	JEQ done
	MOVQ 0(R12), AX
	MOVQ 8(R12), DI
	MOVQ 16(R12), SI
	MOVQ 24(R12), DX
	MOVQ 32(R12), R10
	MOVQ 40(R12), R8
	MOVQ 48(R12), R9
	MOVQ 56(R12), R14 // flags
	TESTQ $1, R14     // spawnPrevArg0: the previous result is the first argument
	JEQ call
	MOVQ R13, DI
call:
	SYSCALL
	MOVQ AX, R13
	TESTQ $4, R14 // spawnWantA5: the result must be the sixth argument
	JEQ checked
	CMPQ AX, R9   // R9 still holds it: SYSCALL clobbers only AX, CX and R11
	JEQ checked
	MOVQ $-3, AX  // -ESRCH
	JMP fail
checked:
	TESTQ $2, R14 // spawnIgnoreFailure
	JNE next
	CMPQ AX, $0xfffffffffffff001
	JAE fail
next:
	ADDQ $64, R12
	INCQ BP
	JMP loop
fail:
	MOVQ AX, 0(BX)
	MOVQ BP, 8(BX)
	MOVQ $127, DI
	MOVQ $231, AX // SYS_exit_group
	SYSCALL
done:
	MOVQ $0, 0(BX) // ran out of steps without an execve
	MOVQ BP, 8(BX)
	MOVQ $127, DI
	MOVQ $231, AX
	SYSCALL
	JMP done
