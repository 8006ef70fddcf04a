package hugeheap

import (
	"os"
	"runtime"
	"strings"
	"testing"

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

// TestStartRegionIsHuge checks that the 2 MiB of the heap that init
// found the frontier in asks for huge pages and is one.
func TestStartRegionIsHuge(t *testing.T) {
	needTHP(t)
	m := runsctest.MappingOf(t, startRegion)
	if !m.HasFlag("hg") {
		t.Errorf("the heap's mapping %#x-%#x (start region %#x) is not advised MADV_HUGEPAGE: flags %v", m.Start, m.End, startRegion, m.Flags)
	}
	if m.KB["AnonHugePages"] < hugePageSize>>10 {
		t.Errorf("the heap's mapping %#x-%#x (start region %#x) has %d kB of huge pages, want at least %d (collapse errno %d)", m.Start, m.End, startRegion, m.KB["AnonHugePages"], hugePageSize>>10, startErrno)
	}
}

// TestAdviseFollowsTheHeap grows the heap until its frontier is in
// memory without advice (a chunk mapped after init starts without it),
// and checks that Advise's work there advises it and collapses the pages
// touched there so far.
func TestAdviseFollowsTheHeap(t *testing.T) {
	needTHP(t)
	var keep [][]byte
	p := frontier()
	for runsctest.MappingOf(t, p).HasFlag("hg") {
		keep = append(keep, make([]byte, 256<<10))
		if len(keep) > 256 {
			t.Fatalf("64 MiB allocated and the heap's frontier (%#x) is still in advised memory", p)
		}
		p = frontier()
	}
	advise(p)
	m := runsctest.MappingOf(t, p)
	if !m.HasFlag("hg") {
		t.Errorf("after Advise, the mapping %#x-%#x holding the frontier %#x is not advised MADV_HUGEPAGE: flags %v", m.Start, m.End, p, m.Flags)
	}
	if m.KB["AnonHugePages"] == 0 {
		t.Errorf("after Advise, the mapping %#x-%#x holding the frontier %#x has no huge pages", m.Start, m.End, p)
	}
	runtime.KeepAlive(keep)
}
