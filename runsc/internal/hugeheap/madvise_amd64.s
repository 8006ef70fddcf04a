#include "textflag.h"

// func madvise(addr, n, advice uintptr) (errno uintptr)
TEXT ·madvise(SB),NOSPLIT,$0-32
	MOVQ addr+0(FP), DI
	MOVQ n+8(FP), SI
	MOVQ advice+16(FP), DX
	MOVQ $28, AX // SYS_madvise
	SYSCALL
	NEGQ AX      // -errno, or 0, to errno
	MOVQ AX, errno+24(FP)
	RET
