package vdso

import (
	_ "unsafe" // for go:linkname
)

// hostNanotime returns the host's CLOCK_MONOTONIC in nanoseconds through
// the Go runtime, which reads it from the host vDSO (no syscall). The
// runtime keeps this linkname working for outside packages.
//
//go:linkname hostNanotime runtime.nanotime
func hostNanotime() int64

// hostNow returns the host's CLOCK_REALTIME (sec, nsec) and then its
// CLOCK_MONOTONIC (ns), both through the host vDSO, read in that order.
//
//go:linkname hostNow time.now
func hostNow() (sec int64, nsec int32, mono int64)
