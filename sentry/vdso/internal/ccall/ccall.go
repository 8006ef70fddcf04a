// Package ccall calls a C-ABI (System V AMD64) function by address from Go,
// for tests that execute machine code the Sentry maps, such as the vDSO.
// It owns no state and takes no locks.
//
// The function runs on the calling goroutine's stack, inside a 2 KiB frame
// that Call reserves, so it must be small and leaf-like (the vDSO's
// functions use a few dozen bytes). It must not block, unwind or call back
// into Go; pointers it receives should point at memory Go does not move
// (mmapped memory), since the goroutine stack may move around the call.
package ccall

// Call calls fn(a0, a1, a2) with the C calling convention and returns what
// it returns in RAX.
func Call(fn, a0, a1, a2 uintptr) uintptr
