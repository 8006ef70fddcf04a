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
//     after the runtime). It collapses those 2 MiB into one huge page
//     (MADV_COLLAPSE), which is most of the heap a short runsc command or
//     the gofer ever uses.
//   - Advise asks for huge pages over the whole chunk that holds the
//     frontier, so that each 2 MiB of it the heap has not touched yet
//     becomes one huge page when first touched, and collapses the 2 MiB
//     around the frontier. The processes whose heaps grow by megabytes
//     while they start call it: the sandbox, at each milestone of its
//     boot, and runsc do. It acts only when the frontier is in a chunk it
//     has not advised yet.
//   - Done withdraws the advice once the start is over (startpages'
//     release, a second in), so that khugepaged does not go on to fill
//     the rest of each advised chunk.
//
// The cost is memory: a huge page is resident whole, so an idle sandbox's
// sandbox and gofer processes hold 2-4 MiB more than the pages their heaps
// use. The calls are raw system calls: a collapse holds its goroutine's P
// for 0.2-0.5 ms here, longer when the kernel must compact memory for the
// huge page. Nothing is done where transparent huge pages are "never"
// (read from sysfs at init) or the heap refuses them (GODEBUG=disablethp
// or prctl(PR_SET_THP_DISABLE) make the collapse fail with EINVAL, as do
// kernels before 6.1, which lack MADV_COLLAPSE): the advice would override
// those choices.
package hugeheap

import "sync/atomic"

const (
	madvHugepage   = 14 // MADV_HUGEPAGE
	madvNoHugepage = 15 // MADV_NOHUGEPAGE
	madvCollapse   = 25 // MADV_COLLAPSE
	eagain         = 11 // EAGAIN

	// chunkSize is how much address space the Go runtime maps for its
	// heap at a time, aligned to it (its pallocChunkBytes).
	chunkSize = 4 << 20
	// hugePageSize is the size of an amd64 transparent huge page.
	hugePageSize = 2 << 20
	// maxChunks is how many advised chunks Done can withdraw the advice
	// from; a start that grows the heap further advises no more.
	maxChunks = 8
)

var (
	// off is set when huge pages are not to be asked for.
	off atomic.Bool
	// startRegion is the 2 MiB of the heap that init collapsed, and
	// startErrno the collapse's errno (0 when it worked).
	startRegion, startErrno uintptr
	// chunks holds the first nchunks chunks Advise advised.
	chunks  [maxChunks]atomic.Uintptr
	nchunks atomic.Int32
)

func init() {
	if thpNever() {
		off.Store(true)
		return
	}
	startRegion = frontier() &^ (hugePageSize - 1)
	startErrno = collapse(startRegion)
	if startErrno != 0 && startErrno != eagain {
		off.Store(true)
	}
}

// Advise asks for huge pages over the heap's current chunk and collapses
// the 2 MiB around the heap's frontier, unless it did both for this chunk
// already. It makes a few system calls (madvise), which the Sentry's and
// the gofer's seccomp filters allow. Its callers call it one at a time.
func Advise() {
	advise(frontier())
}

// advise is Advise for the heap address p; it returns the collapse's
// errno, or 0.
func advise(p uintptr) (errno uintptr) {
	chunk := p &^ (chunkSize - 1)
	n := nchunks.Load()
	if off.Load() || n >= maxChunks {
		return 0
	}
	for i := range n {
		if chunks[i].Load() == chunk {
			return 0
		}
	}
	chunks[n].Store(chunk)
	nchunks.Store(n + 1)
	madvise(chunk, chunkSize, madvHugepage)
	return collapse(p &^ (hugePageSize - 1))
}

// Done withdraws the advice Advise gave (MADV_NOHUGEPAGE): the huge pages
// the heap has stay, but no more are made for it, by faults or by
// khugepaged. Advise does nothing afterwards.
func Done() {
	if off.Swap(true) {
		return
	}
	for i := range nchunks.Load() {
		madvise(chunks[i].Load(), chunkSize, madvNoHugepage)
	}
}

// collapse makes the 2 MiB at region one huge page (MADV_COLLAPSE),
// trying again, up to three times, while the kernel finds a page busy
// (EAGAIN: on another CPU's list of new pages, or in use by another
// thread), and returns the last errno, or 0.
func collapse(region uintptr) (errno uintptr) {
	for range 3 {
		if errno = madvise(region, hugePageSize, madvCollapse); errno != eagain {
			break
		}
	}
	return errno
}
