package hugeheap

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/moat-sandbox/moat/runsc/internal/runsctest"
)

// needTHP skips the test where the kernel gives no transparent huge pages
// to memory that asks for them.
func needTHP(t *testing.T) {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(b), "[never]") {
		t.Skipf("transparent huge pages are off (%q, %v)", b, err)
	}
}

// needCollapse skips the test where init's collapse could not be made
// (a kernel before 6.1, or THP refused to the heap).
func needCollapse(t *testing.T) {
	if off.Load() {
		t.Skipf("no huge pages for the heap here (init's collapse: errno %d)", startErrno)
	}
}

// TestStartRegionIsHuge checks that the 2 MiB of the heap that init
// found the frontier in is one huge page.
func TestStartRegionIsHuge(t *testing.T) {
	needTHP(t)
	needCollapse(t)
	m := runsctest.MappingOf(t, startRegion)
	if m.KB["AnonHugePages"] < hugePageSize>>10 {
		t.Errorf("the heap's mapping %#x-%#x (start region %#x) has %d kB of huge pages, want at least %d (collapse errno %d)", m.Start, m.End, startRegion, m.KB["AnonHugePages"], hugePageSize>>10, startErrno)
	}
}

// TestAdviseFollowsTheHeap grows the heap until it reaches memory without
// advice (a chunk mapped after init starts without it), and checks
// that Advise's work there advises it; then that Done withdraws the
// advice.
func TestAdviseFollowsTheHeap(t *testing.T) {
	needTHP(t)
	needCollapse(t)
	var keep [][]byte
	var p uintptr
	for {
		b := make([]byte, 256<<10)
		b[0] = 1 // a page there is present, for the collapse to work on
		keep = append(keep, b)
		p = uintptr(unsafe.Pointer(&b[0]))
		// Memory never advised (nor advised against by an earlier
		// run's Done), outside the region init made huge.
		if m := runsctest.MappingOf(t, p); !m.HasFlag("hg") && !m.HasFlag("nh") && p&^(hugePageSize-1) != startRegion {
			break
		}
		if len(keep) > 256 {
			t.Fatalf("64 MiB allocated and the heap's frontier (%#x) is still in advised memory", p)
		}
	}
	before := runsctest.MappingOf(t, p)
	errno := advise(p)
	after := runsctest.MappingOf(t, p)
	if !after.HasFlag("hg") {
		t.Errorf("after Advise, the mapping %#x-%#x holding %#x is not advised MADV_HUGEPAGE: flags %v", after.Start, after.End, p, after.Flags)
	}
	// Whether the collapse made a huge page is the kernel's to say: on
	// a machine whose two CPUs were both busy it sometimes reported
	// success and made none. TestStartRegionIsHuge checks collapses.
	if got := after.KB["AnonHugePages"] - before.KB["AnonHugePages"]; got < hugePageSize>>10 {
		t.Logf("Advise's collapse at %#x (errno %d) added %d kB of huge pages to %#x-%#x", p, errno, got, after.Start, after.End)
	}
	Done()
	t.Cleanup(func() { off.Store(false) })
	if done := runsctest.MappingOf(t, p); !done.HasFlag("nh") || done.HasFlag("hg") {
		t.Errorf("after Done, the mapping %#x-%#x holding %#x is still advised: flags %v", done.Start, done.End, p, done.Flags)
	}
	runtime.KeepAlive(keep)
}
