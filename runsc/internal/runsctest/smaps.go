package runsctest

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Mapping is what /proc/self/smaps says of one mapping of the test
// process.
type Mapping struct {
	Start, End uintptr
	// KB holds the mapping's sizes in kB by smaps field: "Rss",
	// "AnonHugePages", ...
	KB map[string]int
	// Flags are its VmFlags: "rd", "wr", "hg" (MADV_HUGEPAGE), ...
	Flags []string
}

// HasFlag reports whether VmFlags holds flag.
func (m Mapping) HasFlag(flag string) bool { return slices.Contains(m.Flags, flag) }

// MappingOf returns the mapping of /proc/self/smaps that holds addr.
func MappingOf(t *testing.T, addr uintptr) Mapping {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var m Mapping
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x", &lo, &hi); n == 2 && strings.Contains(line, " ") {
			if in {
				return m
			}
			m, in = Mapping{Start: lo, End: hi, KB: map[string]int{}}, addr >= lo && addr < hi
			continue
		}
		if !in {
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		if name == "VmFlags" {
			m.Flags = strings.Fields(value)
			continue
		}
		if v, ok := strings.CutSuffix(strings.TrimSpace(value), " kB"); ok {
			kb, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("smaps line %q: %v", line, err)
			}
			m.KB[name] = kb
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if !in {
		t.Fatalf("no mapping holds %#x", addr)
	}
	return m
}
