package hugeheap

import "unsafe"

// probe keeps frontier's allocation on the heap.
var probe *[8192]byte

// frontier returns the address of a fresh page-sized heap allocation: the
// runtime takes the span for it from the lowest free pages, so it lies at
// the heap's frontier (or in a hole below it, where pages were freed).
func frontier() uintptr {
	probe = new([8192]byte)
	p := uintptr(unsafe.Pointer(probe))
	probe = nil
	return p
}
