// Package startpages lets a long-lived runsc process (the Sentry, the
// gofer) give back, once its start is over, the page table entries of the
// runsc binary's code and read-only data that only the start used.
//
// A runsc process touches most of the binary's 7 MiB of code and read-only
// data while it starts (package initialisation, flag parsing, confinement,
// building the kernel), and the kernel maps them 64 KiB around each fault,
// so they made up most of an idle sandbox's resident set although the
// idle Sentry and gofer run little of that code again. Release drops the
// entries (MADV_DONTNEED on the read-only segments: the pages stay in the
// page cache, shared by every runsc process); what runs afterwards faults
// its pages back in. ReleaseAfter does it once the process has run for a
// while, so that a short-lived sandbox (runsc do of one command) never
// pays those faults again. Release also ends the heap's huge-page advice
// (hugeheap.Done).
//
// The segments are found when the package is initialised, from the ELF
// program headers of a non-PIE executable (runsc is one), before any
// seccomp filter; anything else and Release does nothing.
package startpages

import (
	"time"

	"github.com/moat-sandbox/moat/runsc/internal/hugeheap"
)

// StartTime is how long after its start a process is taken to be past
// it: a sandbox whose command runs longer is a long-lived one.
const StartTime = time.Second

func init() {
	segments = readOnlySegments()
}

// ReleaseAfter calls Release once d has passed, on a goroutine of its own.
func ReleaseAfter(d time.Duration) {
	time.AfterFunc(d, Release)
}

// Release drops the page table entries of the executable's read-only
// segments (not the pages, which stay in the page cache): what the
// process uses afterwards is faulted back in. The process must be allowed
// madvise. (Returning the start's heap with debug.FreeOSMemory as well
// made the resident set larger, not smaller: the collection it forces
// touches more than it frees.)
func Release() {
	release()
	// The start's heap growth is over too.
	hugeheap.Done()
}
