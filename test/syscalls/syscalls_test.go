// Package syscalls runs Moat's C conformance programs: each *.c file here is
// built once (static), run natively in fresh namespaces with a read-only
// root and run under `runsc do --rootfs /`, and every case it reports must
// pass natively and have the same outcome in both runs, unless
// known_failures.txt lists it.
//
//	go test ./test/syscalls                      # everything
//	go test ./test/syscalls -run 'TestSyscalls/pipe/'   # one program
//	MOAT_NATIVE_ONLY=1 go test ./test/syscalls   # native runs only
//	MOAT_RESULTS=/tmp/r.json go test ./test/syscalls   # also write per-case results as JSON
package syscalls

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/moat-sandbox/moat/test/internal/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }

// slots bounds how many programs run at once (each run is two processes
// trees: the native one, then the sandboxed one).
var slots = make(chan struct{}, min(2, runtime.NumCPU()))

func programs(t *testing.T) []string {
	t.Helper()
	srcs, err := filepath.Glob("*.c")
	if err != nil || len(srcs) == 0 {
		t.Fatalf("no *.c programs found (err %v)", err)
	}
	sort.Strings(srcs)
	return srcs
}

func loadKnown(t *testing.T) *harness.Known {
	t.Helper()
	data, err := os.ReadFile("known_failures.txt")
	if err != nil {
		t.Fatalf("read known_failures.txt: %v", err)
	}
	k, err := harness.ParseKnown(data)
	if err != nil {
		t.Fatalf("known_failures.txt: %v", err)
	}
	return k
}

// build compiles every program, two at a time, and returns name -> binary.
func build(t *testing.T, srcs []string) map[string]string {
	t.Helper()
	lib := []string{"lib/moattest.c"}
	header, err := os.ReadFile("lib/moattest.h")
	if err != nil {
		t.Fatalf("read lib/moattest.h: %v", err)
	}
	// The header is not a compiler input; hash it in through a flag so
	// editing it rebuilds everything.
	hdrKey := fmt.Sprintf("-DMOATTEST_H_LEN=%d", len(header))
	bins := map[string]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	var errs []string
	for _, src := range srcs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			bin, err := harness.BuildC("syscalls", append([]string{src}, lib...), "-Ilib", hdrKey, "-DMOATTEST_H_SUM="+sum(header))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err.Error())
				return
			}
			bins[strings.TrimSuffix(src, ".c")] = bin
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("building test programs failed:\n%s", strings.Join(errs, "\n"))
	}
	return bins
}

func sum(b []byte) string {
	var h uint32 = 2166136261
	for _, c := range b {
		h = (h ^ uint32(c)) * 16777619
	}
	return fmt.Sprintf("%08x", h)
}

func testEnv(t *testing.T) []string {
	t.Helper()
	data, err := filepath.Abs("data")
	if err != nil {
		t.Fatal(err)
	}
	return []string{
		"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
		"HOME=/",
		"LANG=C",
		"MOAT_TEST_DATA=" + data,
	}
}

func TestSyscalls(t *testing.T) {
	srcs := programs(t)
	bins := build(t, srcs)
	known := loadKnown(t)
	env := testEnv(t)

	var runsc string
	var runscErr error
	if !harness.NativeOnly() {
		runsc, runscErr = harness.Runsc()
		if runscErr != nil {
			t.Errorf("runsc is unavailable, so no sandboxed run can happen: %v", runscErr)
		}
	}

	// Runs after every (parallel) program subtest has finished.
	t.Cleanup(func() {
		if path := os.Getenv("MOAT_RESULTS"); path != "" {
			if err := writeResults(path); err != nil {
				t.Errorf("writing MOAT_RESULTS=%s: %v", path, err)
			} else {
				t.Logf("wrote results to %s", path)
			}
		}
		if n := nowPassing.Load(); n > 0 {
			t.Logf("%d case(s) listed in known_failures.txt pass in the sandbox now: delete their lines (go test -v shows which)", n)
		}
		mode := os.Getenv("MOAT_UPDATE_KNOWN")
		if (mode == "1" || mode == "add") && runscErr == nil && !harness.NativeOnly() {
			if err := updateKnown("known_failures.txt", known, mode == "add"); err != nil {
				t.Errorf("updating known_failures.txt: %v", err)
			} else {
				t.Log("rewrote known_failures.txt from this run")
			}
		}
	})

	for _, src := range srcs {
		prog := strings.TrimSuffix(src, ".c")
		bin := bins[prog]
		t.Run(prog, func(t *testing.T) {
			t.Parallel()
			slots <- struct{}{}
			spec := harness.Spec{Argv: []string{bin}, Env: env}
			native := harness.RunNative(spec)
			var sandbox *harness.Result
			if !harness.NativeOnly() && runscErr == nil {
				sandbox = harness.RunSandbox(runsc, spec)
			}
			<-slots
			names, err := caseNames(bin)
			if err != nil {
				t.Fatal(err)
			}
			compare(t, prog, names, known, native, sandbox, runscErr)
		})
	}
}

// compare reports one program's two runs, case by case.
func compare(t *testing.T, prog string, names []string, known *harness.Known, native, sandbox *harness.Result, runscErr error) {
	t.Helper()
	ntap, err := harness.ParseTAP(native.Stdout)
	if err != nil {
		t.Fatalf("native output unreadable: %v\n%s", err, native.Stdout)
	}
	if ntap.Planned <= 0 || len(ntap.Cases) != ntap.Planned || native.ExitCode != 0 || native.Err != nil {
		t.Errorf("native run: planned %d, reported %d cases, %s\nstdout tail:\n%s",
			ntap.Planned, len(ntap.Cases), native, tail(native.Stdout, 2000))
	}
	var stap *harness.TAP
	switch {
	case harness.NativeOnly():
	case runscErr != nil:
		// Reported once by TestSyscalls; every case fails below.
	default:
		stap, err = harness.ParseTAP(sandbox.Stdout)
		if err != nil {
			t.Errorf("sandboxed output unreadable: %v\n%s", err, sandbox.Stdout)
			stap = &harness.TAP{}
		}
		if len(stap.Cases) != ntap.Planned || sandbox.Err != nil || sandbox.ExitCode != 0 {
			// Shown with the failing cases (or with -v); each case
			// decides on its own whether the difference is known.
			t.Logf("sandboxed run: planned %d, reported %d of %d cases, %s\nstdout tail:\n%s",
				stap.Planned, len(stap.Cases), ntap.Planned, sandbox, tail(sandbox.Stdout, 2000))
		}
	}
	for _, name := range names {
		nc := ntap.Lookup(name)
		t.Run(name, func(t *testing.T) {
			_, isKnown := known.Reason(prog, nc.Name)
			if stap != nil && nc.Status == harness.Pass {
				s := stap.Lookup(nc.Name).Status
				noteResult(prog, nc.Name, nc.Status, &s, isKnown)
			} else {
				noteResult(prog, nc.Name, nc.Status, nil, isKnown)
			}
			switch nc.Status {
			case harness.Missing:
				t.Fatalf("not reported by the native run (crash or hang in this or an earlier case)")
			case harness.Fail:
				t.Fatalf("fails natively: %s", nc.Note)
			case harness.Skip:
				t.Skipf("skipped natively: %s", nc.Note)
			}
			if stap == nil {
				if harness.NativeOnly() {
					t.Skip("MOAT_NATIVE_ONLY=1: passed natively, sandboxed run skipped")
				}
				t.Fatal("passed natively; no sandboxed run: runsc is unavailable (see TestSyscalls)")
			}
			sc := stap.Lookup(nc.Name)
			reason, isKnown := known.Reason(prog, nc.Name)
			record(prog, nc.Name, sc)
			if sc.Status == harness.Pass {
				if known.Exact(prog, nc.Name) {
					msg := fmt.Sprintf("passes in the sandbox now: delete %s:%s from known_failures.txt", prog, nc.Name)
					if os.Getenv("MOAT_STRICT_KNOWN") == "1" {
						t.Fatal(msg)
					}
					t.Log(msg)
					nowPassing.Add(1)
				}
				return
			}
			what := fmt.Sprintf("sandbox %s", sc.Status)
			if sc.Note != "" {
				what += ": " + sc.Note
			}
			if sc.Status == harness.Missing {
				what += fmt.Sprintf(" (the sandboxed run ended early: exit %d)", sandbox.ExitCode)
			}
			if isKnown {
				t.Skipf("known difference (%s): %s", reason, what)
			}
			t.Errorf("passes natively, %s", what)
		})
	}
}

// caseNames asks a program for its case names (`prog --list`).
func caseNames(bin string) ([]string, error) {
	out, err := exec.Command(bin, "--list").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --list: %v", bin, err)
	}
	return strings.Fields(string(out)), nil
}

func tail(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return "..." + string(b[len(b)-n:])
}

// TestKnownFailuresNameRealCases keeps known_failures.txt honest: every
// line names a program and case that exist.
func TestKnownFailuresNameRealCases(t *testing.T) {
	known := loadKnown(t)
	srcs := programs(t)
	have := map[string]bool{}
	for _, src := range srcs {
		have[strings.TrimSuffix(src, ".c")] = true
	}
	for _, key := range known.Keys() {
		prog, name, _ := strings.Cut(key, ":")
		if !have[prog] {
			t.Errorf("known_failures.txt: %s: no program %s.c", key, prog)
			continue
		}
		if name == "*" {
			continue
		}
		src, err := os.ReadFile(prog + ".c")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(src), "MT_CASE("+name+")") {
			t.Errorf("known_failures.txt: %s: %s.c has no case %s", key, prog, name)
		}
	}
}
