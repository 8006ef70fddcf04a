#include "textflag.h"

// func cpuidEDX1() uint32
TEXT ·cpuidEDX1(SB),NOSPLIT,$0-4
	MOVL $1, AX
	XORL CX, CX
	CPUID
	MOVL DX, ret+0(FP)
	RET
