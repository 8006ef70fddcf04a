#include "textflag.h"

// func spinPause()
//
// spinPause executes one PAUSE: the polite way to wait in a spin loop.
TEXT ·spinPause(SB),NOSPLIT,$0-0
	PAUSE
	RET
