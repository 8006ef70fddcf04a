package container

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// ocivalBaseline lists, one per line as "program<TAB>description", every
// TAP assertion of the OCI runtime-tools validation suite that runsc passes.
// An assertion listed here that no longer passes fails TestOCIValidation;
// one that passes and is not listed is reported, to be added with
// MOAT_OCIVAL_UPDATE=1 (which rewrites the file as the union of the old
// baseline and today's passes, so it only grows).
const ocivalBaseline = "testdata/oci-validation-baseline.txt"

// ocivalUnavailable skips t because something it needs is missing here, or
// fails it under MOAT_REQUIRE_ALL=1 (as test/internal/harness.Unavailable).
func ocivalUnavailable(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("MOAT_REQUIRE_ALL") == "1" {
		t.Fatalf("cannot run (MOAT_REQUIRE_ALL=1): "+format, args...)
	}
	t.Skipf(format, args...)
}

// tapOK matches a passing TAP line: "ok 12 - description".
var tapOK = regexp.MustCompile(`^ok [0-9]+(?: -)? ?(.*)$`)

// tapSkip matches a TAP SKIP or TODO directive, which is not a pass.
var tapSkip = regexp.MustCompile(`(?i)(^|\s)#\s*(skip|todo)\b`)

// parseTAPPasses returns the descriptions of the passing assertions in a TAP
// stream, in order (a description may repeat).
func parseTAPPasses(tap string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(tap))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := tapOK.FindStringSubmatch(sc.Text())
		if m == nil || tapSkip.MatchString(m[1]) {
			continue
		}
		out = append(out, strings.TrimSpace(m[1]))
	}
	return out
}

// ocivalKey is one baseline line: program, tab, assertion description.
func ocivalKey(prog, desc string) string {
	return prog + "\t" + strings.ReplaceAll(desc, "\t", " ")
}

// readBaseline reads the baseline as a multiset of lines.
func readBaseline(path string) (map[string]int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := make(map[string]int)
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m[line]++
	}
	return m, nil
}

// writeBaseline writes the multiset m sorted, under a header.
func writeBaseline(path string, m map[string]int) error {
	var lines []string
	for k, n := range m {
		for i := 0; i < n; i++ {
			lines = append(lines, k)
		}
	}
	sort.Strings(lines)
	var b strings.Builder
	b.WriteString("# OCI runtime-tools v0.9.0 validation assertions runsc passes: program<TAB>description.\n")
	b.WriteString("# Checked by TestOCIValidation (runsc/container/ocival_test.go); MOAT_OCIVAL_UPDATE=1 adds new passes.\n")
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func TestParseTAPPasses(t *testing.T) {
	for _, tc := range []struct {
		name string
		tap  string
		want []string
	}{
		{"empty", "", nil},
		{"mixed", "TAP version 13\nok 1 - a b\n  ---\n  {}\n  ...\nnot ok 2 - c\nok 3 - a b\n1..3\n", []string{"a b", "a b"}},
		{"skip", "ok 1 # SKIP no cgroups\nok 2 - real\nok 3 - x # todo later\n", []string{"real"}},
		{"no dash", "ok 7 plain\n", []string{"plain"}},
		{"indented ok is yaml", "  ok 1 - nested\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := parseTAPPasses(tc.tap)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("parseTAPPasses = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestOCIValidation runs the OCI runtime-tools validation suite
// (testdata/oci-validation.sh) against a fresh runsc, logs each program's
// TAP counts, and fails when an assertion recorded in the baseline no longer
// passes. MOAT_OCIVAL_OUT=DIR checks the TAP files of an earlier run
// (`OUT=DIR oci-validation.sh`) instead of running the suite. A program
// whose baseline assertions fail is run once more on its own (on a loaded
// machine, cgroup programs fail now and then): only an assertion failing
// twice fails the test.
func TestOCIValidation(t *testing.T) {
	outDir := os.Getenv("MOAT_OCIVAL_OUT")
	var rerun func([]string) string
	if outDir == "" {
		outDir, rerun = runOCIValidation(t)
	}
	checkOCIValidation(t, outDir, rerun)
}

// runOCIValidation runs the suite against runsc (MOAT_RUNSC or a fresh
// build) and returns the directory holding its TAP files and a function
// that runs the given programs again into a new directory.
func runOCIValidation(t *testing.T) (string, func([]string) string) {
	if testing.Short() {
		t.Skip("the OCI validation suite takes minutes; skipped with -short")
	}
	if os.Getuid() != 0 {
		ocivalUnavailable(t, "the OCI validation suite needs root (runsc creates namespaces and cgroups)")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cache := os.Getenv("MOAT_CACHE")
	if cache == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			ocivalUnavailable(t, "no cache directory for the validation suite: %v", err)
		}
		cache = filepath.Join(c, "moat")
	}
	if _, err := os.Stat(filepath.Join(cache, "runtime-tools", "runtimetest")); err != nil {
		// The script fetches runtime-tools through the module proxy; if the
		// proxy cannot be reached, this machine cannot run the suite.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		out, err := exec.CommandContext(ctx, "go", "mod", "download", "-json", "github.com/opencontainers/runtime-tools@v0.9.0").CombinedOutput()
		cancel()
		if err != nil {
			ocivalUnavailable(t, "cannot fetch github.com/opencontainers/runtime-tools@v0.9.0 from the module proxy: %v\n%s", err, out)
		}
	}

	tmp := t.TempDir()
	runsc := os.Getenv("MOAT_RUNSC")
	if runsc == "" {
		runsc = filepath.Join(tmp, "runsc")
		build := exec.Command("go", "build", "-o", runsc, "./runsc")
		build.Dir = root
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("building runsc: %v\n%s", err, out)
		}
	}
	n := 0
	run := func(programs []string) string {
		n++
		outDir := filepath.Join(tmp, fmt.Sprintf("out%d", n))
		start := time.Now()
		cmd := exec.Command("bash", append([]string{filepath.Join(root, "runsc/container/testdata/oci-validation.sh"), runsc}, programs...)...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "OUT="+outDir, "MOAT_CACHE="+cache)
		out, err := cmd.CombinedOutput()
		t.Logf("oci-validation.sh %s (%v):\n%s", strings.Join(programs, " "), time.Since(start).Round(time.Second), out)
		if err != nil {
			t.Fatalf("oci-validation.sh: %v", err)
		}
		return outDir
	}
	return run(nil), run
}

// readTAPPasses reads the passes of each program's TAP file in dir as a
// multiset of baseline lines.
func readTAPPasses(t *testing.T, dir string) map[string]int {
	taps, err := filepath.Glob(filepath.Join(dir, "*.tap"))
	if err != nil {
		t.Fatal(err)
	}
	if len(taps) == 0 {
		t.Fatalf("oci-validation.sh wrote no TAP files to %s", dir)
	}
	now := make(map[string]int)
	for _, f := range taps {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		prog := strings.TrimSuffix(filepath.Base(f), ".tap")
		for _, d := range parseTAPPasses(string(data)) {
			now[ocivalKey(prog, d)]++
		}
		if os.Getenv("MOAT_OCIVAL_TAP") == "1" {
			t.Logf("%s.tap:\n%s", prog, data)
		}
	}
	return now
}

// lostFrom returns the baseline lines that now does not pass, sorted.
func lostFrom(base, now map[string]int) []string {
	var lost []string
	for k, n := range base {
		if now[k] < n {
			lost = append(lost, k)
		}
	}
	sort.Strings(lost)
	return lost
}

// checkOCIValidation compares the TAP files in outDir with the baseline;
// rerun, if not nil, runs programs again (see TestOCIValidation).
func checkOCIValidation(t *testing.T, outDir string, rerun func([]string) string) {
	now := readTAPPasses(t, outDir)

	base, err := readBaseline(ocivalBaseline)
	if os.IsNotExist(err) && os.Getenv("MOAT_OCIVAL_UPDATE") == "1" {
		base, err = map[string]int{}, nil
	}
	if err != nil {
		t.Fatalf("reading the baseline: %v", err)
	}
	lost := lostFrom(base, now)
	if len(lost) > 0 && rerun != nil {
		var progs []string
		seen := make(map[string]bool)
		for _, k := range lost {
			prog, _, _ := strings.Cut(k, "\t")
			if !seen[prog] {
				seen[prog] = true
				progs = append(progs, prog)
			}
		}
		outDir = rerun(progs)
		again := readTAPPasses(t, outDir)
		// An assertion passes if it passed in either run.
		for k, n := range now {
			if again[k] < n {
				again[k] = n
			}
		}
		if still := lostFrom(base, again); len(still) < len(lost) {
			t.Logf("%d baseline assertions failed once and passed when rerun", len(lost)-len(still))
		}
		now = again
		lost = lostFrom(base, now)
	}
	var gained []string
	for k, n := range now {
		if base[k] < n {
			gained = append(gained, k)
		}
	}
	sort.Strings(gained)
	if len(gained) > 0 {
		t.Logf("%d assertions pass that the baseline does not list (MOAT_OCIVAL_UPDATE=1 adds them):\n%s", len(gained), strings.Join(gained, "\n"))
	}
	if os.Getenv("MOAT_OCIVAL_UPDATE") == "1" {
		for k, n := range now {
			if base[k] < n {
				base[k] = n
			}
		}
		if err := writeBaseline(ocivalBaseline, base); err != nil {
			t.Fatal(err)
		}
	}
	if len(lost) > 0 {
		logged := make(map[string]bool)
		for _, k := range lost {
			prog, _, _ := strings.Cut(k, "\t")
			if logged[prog] || os.Getenv("MOAT_OCIVAL_TAP") == "1" {
				continue
			}
			logged[prog] = true
			data, err := os.ReadFile(filepath.Join(outDir, prog+".tap"))
			t.Logf("%s.tap (err %v):\n%s", prog, err, data)
		}
		t.Errorf("%d assertions of the baseline no longer pass (their programs' TAP is logged above; MOAT_OCIVAL_TAP=1 logs all):\n%s", len(lost), strings.Join(lost, "\n"))
	}
}
