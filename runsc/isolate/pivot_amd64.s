#include "textflag.h"

// func rawDetach(dot, root, empty *byte, flags uintptr, res *[2]int64) (pid, errno uintptr)
//
// rawDetach starts a child that shares the caller's memory (CLONE_VM) but
// has its own copy of everything else, its credentials included, and
// exit signal 0. The child runs only system calls, with no stack use:
//
//	umount2(dot, MNT_DETACH)
//	mount(empty, root, empty, flags, NULL)   // only if umount2 succeeded
//
// It stores the two calls' raw results in res (a negative errno on
// failure) and exits with 0 on success, 1 when umount2 failed and 2 when
// mount failed. The strings and res must stay alive and unmoved until the
// child has exited, and the caller
// must have blocked every signal: the child runs on the caller's stack
// pointer and must never take a signal there.
TEXT ·rawDetach(SB),NOSPLIT,$0-56
	MOVQ dot+0(FP), R12
	MOVQ root+8(FP), R13
	MOVQ empty+16(FP), R14
	MOVQ flags+24(FP), R15
	MOVQ res+32(FP), BX
	MOVQ $56, AX     // SYS_clone
	MOVQ $0x100, DI  // CLONE_VM, exit signal 0
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
	MOVQ $0, pid+40(FP)
	MOVQ AX, errno+48(FP)
	RET
ok:
	MOVQ AX, pid+40(FP)
	MOVQ $0, errno+48(FP)
	RET

child:
	MOVQ $166, AX // SYS_umount2
	MOVQ R12, DI
	MOVQ $2, SI   // MNT_DETACH
	SYSCALL
	MOVQ AX, 0(BX)
	MOVQ $1, DI
	TESTQ AX, AX
	JNE exit
	MOVQ $165, AX // SYS_mount
	MOVQ R14, DI
	MOVQ R13, SI
	MOVQ R14, DX
	MOVQ R15, R10
	XORQ R8, R8
	SYSCALL
	MOVQ AX, 8(BX)
	MOVQ $2, DI
	TESTQ AX, AX
	JNE exit
	XORQ DI, DI
exit:
	MOVQ $231, AX // SYS_exit_group
	SYSCALL
	JMP exit
