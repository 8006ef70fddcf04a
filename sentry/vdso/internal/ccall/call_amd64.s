#include "textflag.h"
#include "funcdata.h"

// func Call(fn, a0, a1, a2 uintptr) uintptr
//
// The 2 KiB frame is the C function's stack: SP moves to its top (16-byte
// aligned, as the System V ABI wants at a call) and back afterwards. R12 is
// callee-saved in C, so it keeps Go's SP across the call.
TEXT ·Call(SB), 0, $2048-40
	NO_LOCAL_POINTERS
	MOVQ	fn+0(FP), AX
	MOVQ	a0+8(FP), DI
	MOVQ	a1+16(FP), SI
	MOVQ	a2+24(FP), DX
	MOVQ	SP, R12
	LEAQ	2048(SP), BX
	ANDQ	$~15, BX
	MOVQ	BX, SP
	CALL	AX
	MOVQ	R12, SP
	MOVQ	AX, ret+32(FP)
	RET
