#include "textflag.h"

// func rawSyscall(nr, a1, a2, a3 uintptr) (r uintptr)
TEXT ·rawSyscall(SB),NOSPLIT,$0-40
	MOVQ nr+0(FP), AX
	MOVQ a1+8(FP), DI
	MOVQ a2+16(FP), SI
	MOVQ a3+24(FP), DX
	SYSCALL
	MOVQ AX, r+32(FP)
	RET
