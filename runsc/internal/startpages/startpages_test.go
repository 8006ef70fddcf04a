package startpages

import (
	"testing"

	"github.com/moat-sandbox/moat/runsc/internal/runsctest"
)

// rssOf returns the resident kB of the mapping that holds addr.
func rssOf(t *testing.T, addr uintptr) int {
	t.Helper()
	return runsctest.MappingOf(t, addr).KB["Rss"]
}

func TestSegmentsHoldCode(t *testing.T) {
	if len(segments) == 0 {
		t.Skip("not a non-PIE executable")
	}
	pc := funcPC()
	found := false
	for _, s := range segments {
		if s.start%pageSize != 0 || s.end%pageSize != 0 || s.end <= s.start {
			t.Errorf("segment %#x-%#x is not page-aligned and non-empty", s.start, s.end)
		}
		found = found || (pc >= s.start && pc < s.end)
	}
	if !found {
		t.Errorf("no segment of %v holds this package's code at %#x", segments, pc)
	}
}

// TestReleaseDropsMappedPages checks that Release unmaps the code's pages
// from the page tables and that code keeps running (faulting them back).
func TestReleaseDropsMappedPages(t *testing.T) {
	if len(segments) == 0 {
		t.Skip("not a non-PIE executable")
	}
	pc := funcPC()
	before := rssOf(t, pc)
	Release()
	after := rssOf(t, pc)
	if after >= before {
		t.Errorf("code mapping resident %d kB before Release, %d kB after: want less", before, after)
	}
	// Still running: rssOf's code was faulted back in.
	if again := rssOf(t, pc); again <= 0 {
		t.Errorf("resident %d kB after running more code", again)
	}
}
