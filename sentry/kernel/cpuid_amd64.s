#include "textflag.h"

// func cpuidEDX1() uint32
TEXT ·cpuidEDX1(SB),NOSPLIT,$0-4
	MOVL $1, AX
	XORL CX, CX
	CPUID
	MOVL DX, ret+0(FP)
	RET

// func cpuidCount(leaf, sub uint32) (eax, ebx, ecx, edx uint32)
TEXT ·cpuidCount(SB),NOSPLIT,$0-24
	MOVL leaf+0(FP), AX
	MOVL sub+4(FP), CX
	CPUID
	MOVL AX, eax+8(FP)
	MOVL BX, ebx+12(FP)
	MOVL CX, ecx+16(FP)
	MOVL DX, edx+20(FP)
	RET
