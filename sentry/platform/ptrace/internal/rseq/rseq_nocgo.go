//go:build !(cgo && race)

package rseq

// ThreadArea returns 0: without cgo nothing registers rseq for the Sentry's
// threads.
func ThreadArea() (area, length uintptr) { return 0, 0 }
