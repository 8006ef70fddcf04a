//go:build cgo && race

package rseq

/*
#include <stddef.h>
extern ptrdiff_t __rseq_offset __attribute__((weak));
extern unsigned int __rseq_size __attribute__((weak));

static unsigned long moat_rseq_area(void) {
	if (&__rseq_size == NULL || __rseq_size == 0)
		return 0;
	return (unsigned long)__builtin_thread_pointer() + __rseq_offset;
}
static unsigned int moat_rseq_len(void) {
	if (&__rseq_size == NULL)
		return 0;
	return __rseq_size < 32 ? 32 : __rseq_size;
}
*/
import "C"

// ThreadArea returns the calling thread's rseq area as libc registered it:
// a cgo build (such as -race) runs on glibc, which registers one per
// thread. A forked stub must unregister it before unmapping the memory it
// lives in, or the kernel's next update of it kills the stub.
func ThreadArea() (area, length uintptr) {
	return uintptr(C.moat_rseq_area()), uintptr(C.moat_rseq_len())
}
