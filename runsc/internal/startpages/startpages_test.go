package startpages

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// rssOf returns the resident kB of the mapping of /proc/self/smaps that
// contains addr.
func rssOf(t *testing.T, addr uintptr) int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x", &lo, &hi); n == 2 && strings.Contains(line, " ") {
			in = addr >= lo && addr < hi
			continue
		}
		if v, ok := strings.CutPrefix(line, "Rss:"); ok && in {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				t.Fatalf("smaps line %q: %v", line, err)
			}
			return kb
		}
	}
	t.Fatalf("no mapping holds %#x", addr)
	return 0
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
