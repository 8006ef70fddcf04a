#include "textflag.h"

// func procRDTSC() uint64
TEXT ·procRDTSC(SB), NOSPLIT|NOFRAME, $0-8
	LFENCE
	RDTSC
	LFENCE
	SHLQ	$32, DX
	ORQ	DX, AX
	MOVQ	AX, ret+0(FP)
	RET
