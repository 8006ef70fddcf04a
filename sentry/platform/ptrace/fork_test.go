package ptrace

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/platform/ptrace/internal/rseq"
)

// vmaFlags returns the VmFlags of the mapping holding addr, from
// /proc/self/smaps.
func vmaFlags(t *testing.T, addr uintptr) []string {
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
		if fields := strings.Fields(line); len(fields) > 1 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			lo, hi, _ := strings.Cut(fields[0], "-")
			l, err1 := strconv.ParseUint(lo, 16, 64)
			h, err2 := strconv.ParseUint(hi, 16, 64)
			in = err1 == nil && err2 == nil && uint64(addr) >= l && uint64(addr) < h
			continue
		}
		if flags, ok := strings.CutPrefix(line, "VmFlags:"); ok && in {
			return strings.Fields(flags)
		}
	}
	t.Fatalf("no mapping holds %#x", addr)
	return nil
}

func hasFlag(flags []string, f string) bool {
	for _, x := range flags {
		if x == f {
			return true
		}
	}
	return false
}

// TestDontForkExcept checks what forkStub relies on: every mapping but
// the kept range is marked not to be copied by fork ("dc"), heap-like
// anonymous memory included, and the kept code is not.
func TestDontForkExcept(t *testing.T) {
	if area, _ := rseq.ThreadArea(); area != 0 {
		t.Skip("a cgo build forks the whole Sentry (forkStub)")
	}
	const size = 3 * pageSize
	anon, _, errno := unix.Syscall6(unix.SYS_MMAP, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS, ^uintptr(0), 0)
	if errno != 0 {
		t.Fatalf("mmap: %v", errno)
	}
	defer unix.Syscall(unix.SYS_MUNMAP, anon, size, 0)
	code := rawForkStubPC() &^ (pageSize - 1)
	dontForkExcept([][2]uintptr{{code, code + forkCodeSpan}})
	for _, tc := range []struct {
		name string
		addr uintptr
		want bool
	}{
		{"anonymous mapping", anon + pageSize, true},
		{"code before the kept range", code - pageSize, true},
		{"rawForkStub's code", rawForkStubPC(), false},
		{"end of the kept range", code + forkCodeSpan - 1, false},
		{"code after the kept range", code + forkCodeSpan, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := hasFlag(vmaFlags(t, tc.addr), "dc"); got != tc.want {
				t.Errorf("mapping at %#x marked dc: %v, want %v", tc.addr, got, tc.want)
			}
		})
	}
}
