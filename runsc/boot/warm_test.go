package boot

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel"
)

// openForReading lists the host files this process has open for reading
// (not O_PATH), by path, with how many fds each.
func openForReading(t *testing.T) map[string]int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err != nil {
			continue
		}
		info, err := os.ReadFile(filepath.Join("/proc/self/fdinfo", e.Name()))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(info), "\n") {
			if f, ok := strings.CutPrefix(line, "flags:"); ok {
				flags, _ := strconv.ParseUint(strings.TrimSpace(f), 8, 64)
				if flags&unix.O_PATH == 0 {
					out[target]++
				}
			}
		}
	}
	return out
}

// TestWarmInit checks that warmInit leaves init's files looked up and
// open in the Sentry's gofer file system (a kept donated descriptor
// each): the executable, its ELF interpreter, glibc's library cache for
// a dynamic executable (not for a static one), and /etc/passwd when HOME
// is to be looked up.
func TestWarmInit(t *testing.T) {
	exe, err := filepath.EvalSymlinks("/bin/true")
	if err != nil {
		t.Skip(err)
	}
	interp, err := filepath.EvalSymlinks("/lib64/ld-linux-x86-64.so.2")
	if err != nil {
		t.Skip(err)
	}
	// busybox-static, which setup-deps.sh installs.
	static, err := filepath.EvalSymlinks("/bin/busybox")
	if err != nil {
		t.Skip(err)
	}
	if f, err := elf.Open(static); err != nil {
		t.Skip(err)
	} else {
		isStatic := true
		for _, p := range f.Progs {
			isStatic = isStatic && p.Type != elf.PT_INTERP
		}
		f.Close()
		if !isStatic {
			t.Skipf("%s is not static", static)
		}
	}
	const cache = "/etc/ld.so.cache"
	root := goferRoot(t, "/")
	// A FIFO as the command, or as a script's interpreter: opening it must
	// not wait for a writer (the Sentry serves named pipes itself).
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "script")
	if err := os.WriteFile(script, []byte("#!"+fifo+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cfg  Config
		want []string // files kept open afterwards
		not  []string
		// nothing: no file is opened for reading at all.
		nothing bool
	}{
		// First, while nothing is kept open: a command that is not
		// there opens nothing.
		{"missing command", Config{Argv: []string{"/nonexistent"}, Env: []string{"HOME=/x"}}, nil, nil, true},
		{"missing command on the path", Config{Argv: []string{"nonexistent"}, Env: []string{"PATH=/bin:/usr/bin", "HOME=/x"}}, nil, nil, true},
		{"static executable", Config{Argv: []string{static}, Env: []string{"HOME=/x"}}, []string{static}, []string{cache, "/etc/passwd"}, false},
		{"HOME given", Config{Argv: []string{"/bin/true"}, Env: []string{"HOME=/x"}}, []string{exe, interp, cache}, []string{"/etc/passwd"}, false},
		{"path lookup and HOME", Config{Argv: []string{"true"}, Env: []string{"PATH=/bin"}}, []string{exe, interp, cache, "/etc/passwd"}, nil, false},
		{"FIFO command", Config{Argv: []string{fifo}, Env: []string{"HOME=/x"}}, nil, []string{fifo}, false},
		{"FIFO interpreter", Config{Argv: []string{script}, Env: []string{"HOME=/x"}}, []string{script}, []string{fifo}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := openForReading(t)
			returned := make(chan struct{})
			go func() {
				warmInit(kernel.Background(), root, tt.cfg)
				close(returned)
			}()
			select {
			case <-returned:
			case <-time.After(30 * time.Second):
				t.Fatal("warmInit did not return within 30 s")
			}
			after := openForReading(t)
			for _, p := range tt.want {
				// A file warmed by an earlier case stays kept.
				if after[p] == 0 {
					t.Errorf("%s not kept open (open: %v)", p, fmt.Sprint(after))
				}
			}
			for _, p := range tt.not {
				if after[p] > before[p] {
					t.Errorf("%s opened", p)
				}
			}
			if tt.nothing {
				for p, n := range after {
					if n > before[p] {
						t.Errorf("%s opened", p)
					}
				}
			}
		})
	}
}
