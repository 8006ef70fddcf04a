// Package hugeheap puts the Go heap of a runsc process on transparent huge
// pages, so that starting a sandbox takes a few page faults where it took
// hundreds.
//
// On the VMs Moat is measured on, a page fault costs 16-20 us and the
// first touch of a page the kernel has just mapped about 5 more (the
// hypervisor shadows the guest's page tables 4 KiB at a time). The heap of
// each runsc process grew by 200 to 400 pages while it started, and
// `runsc do` starts three runsc processes: a third of the CPU time of
// `runsc do /bin/true` went to those faults. A 2 MiB huge page costs one
// fault and one shadow entry. With transparent huge pages in "madvise"
// mode, the default of most distributions, anonymous memory gets them
// only where madvise(MADV_HUGEPAGE) asked, and the Go runtime does not
// ask.
//
// The Go runtime maps its heap 4 MiB at a time (4 MiB-aligned chunks,
// with mmap(MAP_FIXED), which starts each chunk without advice) and
// allocates pages upwards from a random offset in the first chunk. The
// 2 MiB around the heap's frontier already hold, in 4 KiB pages, what the
// runtime touched before any package was initialised.
//
//   - This package's init runs before any other package of runsc's (it
//     imports nothing that needs initialising, so Go initialises it right
//     after the runtime). It advises those 2 MiB and collapses them into
//     one huge page (MADV_COLLAPSE), which is most of the heap a short
//     runsc command or the gofer ever uses.
//   - Advise asks for huge pages over the whole chunk that holds the
//     frontier, so that each 2 MiB of it the heap has not touched yet
//     becomes one huge page when first touched, and collapses the 2 MiB
//     around the frontier. The processes whose heaps grow by megabytes
//     while they start call it: the sandbox, at each milestone of its
//     boot, and runsc do. It acts only when the frontier is in a chunk it
//     has not advised yet.
//
// The cost is memory: a huge page is resident whole, so an idle sandbox's
// sandbox and gofer processes hold 2-4 MiB more than the pages their heaps
// use. Where transparent huge pages are off or MADV_COLLAPSE is unknown
// (before Linux 6.1), the calls fail and nothing changes.
package hugeheap

import "sync/atomic"

const (
	madvHugepage = 14 // MADV_HUGEPAGE
	madvCollapse = 25 // MADV_COLLAPSE
	eagain       = 11 // EAGAIN

	// chunkSize is how much address space the Go runtime maps for its
	// heap at a time, aligned to it (its pallocChunkBytes).
	chunkSize = 4 << 20
	// hugePageSize is the size of an amd64 transparent huge page.
	hugePageSize = 2 << 20
)

// startRegion is the 2 MiB of the heap that init collapsed.
var startRegion, startErrno uintptr

// advised is the start of the chunk Advise last advised.
var advised atomic.Uintptr

func init() {
	startRegion = frontier() &^ (hugePageSize - 1)
	madvise(startRegion, hugePageSize, madvHugepage)
	startErrno = collapse(startRegion)
}

// Advise asks for huge pages over the heap's current chunk and collapses
// the 2 MiB around the heap's frontier, unless it did both for this chunk
// already. It makes two system calls (madvise), which the Sentry's and the
// gofer's seccomp filters allow.
func Advise() {
	advise(frontier())
}

// advise is Advise for the heap address p.
func advise(p uintptr) {
	chunk := p &^ (chunkSize - 1)
	if advised.Swap(chunk) == chunk {
		return
	}
	madvise(chunk, chunkSize, madvHugepage)
	collapse(p &^ (hugePageSize - 1))
}

// collapse makes the 2 MiB at region one huge page (MADV_COLLAPSE),
// trying again while the kernel finds a page busy (EAGAIN: on another
// CPU's list of new pages, or in use by another thread), and returns the
// last errno, or 0.
func collapse(region uintptr) (errno uintptr) {
	for range 8 {
		if errno = madvise(region, hugePageSize, madvCollapse); errno != eagain {
			break
		}
	}
	return errno
}
