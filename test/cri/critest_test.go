package cri_test

import (
	"context"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat/test/internal/harness"
)

// critestBaseline lists the critest specs that pass with Moat; a run must
// pass every one of them (the list only grows). MOAT_UPDATE_CRITEST=1
// rewrites it from the run.
const critestBaseline = "testdata/critest-baseline.txt"

// junitSuites is the part of a JUnit report critest writes that we read.
type junitSuites struct {
	Suites []struct {
		Cases []struct {
			Name    string        `xml:"name,attr"`
			Failure *junitFailure `xml:"failure"`
			Error   *junitFailure `xml:"error"`
			Skipped *struct{}     `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// junitFailure is a failed spec's message and details.
type junitFailure struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// critestResult is a run's outcome per spec: "pass", "fail" or "skip",
// and why the failed ones failed.
type critestResult struct {
	status map[string]string
	why    map[string]string
}

// runCritest runs the CRI validation suite against handler; on failure it
// reports an error and returns nil.
func runCritest(t *testing.T, e *env, bin, handler string) *critestResult {
	report := filepath.Join(t.TempDir(), "junit.xml")
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin,
		"-runtime-endpoint", "unix://"+e.sock,
		"-image-endpoint", "unix://"+e.sock,
		"-runtime-handler", handler,
		"-ginkgo.no-color",
		"-ginkgo.timeout", "40m",
		"-ginkgo.junit-report", report,
	)
	cmd.Dir = t.TempDir()
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("critest with %s: %v in %v", handler, err, time.Since(start).Round(time.Second))
	if ctx.Err() != nil {
		t.Errorf("critest with %s timed out; its output's end:\n%s", handler, harness.TailLines(string(out), 60))
		return nil
	}
	data, rerr := os.ReadFile(report)
	if rerr != nil {
		t.Errorf("critest with %s wrote no report (%v): %v\n%s", handler, err, rerr, harness.TailLines(string(out), 60))
		return nil
	}
	r, err := parseJUnit(data)
	if err != nil {
		t.Errorf("critest's report: %v", err)
		return nil
	}
	if len(r.status) == 0 {
		t.Errorf("critest with %s ran no specs:\n%s", handler, harness.TailLines(string(out), 60))
		return nil
	}
	return r
}

// parseJUnit reads the outcome of each spec from critest's JUnit report.
func parseJUnit(data []byte) (*critestResult, error) {
	var js junitSuites
	if err := xml.Unmarshal(data, &js); err != nil {
		return nil, err
	}
	r := &critestResult{status: map[string]string{}, why: map[string]string{}}
	for _, s := range js.Suites {
		for _, c := range s.Cases {
			name := strings.Join(strings.Fields(c.Name), " ")
			switch {
			case c.Skipped != nil:
				r.status[name] = "skip"
			case c.Failure != nil || c.Error != nil:
				r.status[name] = "fail"
				f := c.Failure
				if f == nil {
					f = c.Error
				}
				r.why[name] = harness.TailLines(strings.TrimSpace(f.Message+"\n"+f.Text), 12)
			default:
				r.status[name] = "pass"
			}
		}
	}
	return r, nil
}

// lostSpecs returns, for each spec of the baseline that did not pass with
// Moat, a message naming it, the runtime, runc's result and why it failed.
func lostSpecs(baseline []byte, moat, runc *critestResult) []string {
	var lost []string
	for _, line := range strings.Split(string(baseline), "\n") {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		st := moat.status[line]
		if st == "pass" {
			continue
		}
		if st == "" {
			st = "not run"
		}
		rst := runc.status[line]
		if rst == "" {
			rst = "not run"
		}
		msg := "critest spec " + strconv.Quote(line) + " (in " + critestBaseline + ") no longer passes with runtime handler runsc (Moat): " + st + "; with runc: " + rst
		if why := moat.why[line]; why != "" {
			msg += "\n" + indent(why)
		}
		lost = append(lost, msg)
	}
	return lost
}

func (r *critestResult) with(status string) []string {
	var names []string
	for n, s := range r.status {
		if s == status {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// TestCritest runs critest (sigs.k8s.io/cri-tools' CRI validation suite)
// with runc and then with Moat in the same containerd, prints both results and
// what runc passes that Moat does not, and fails if Moat loses a spec of
// the baseline.
func TestCritest(t *testing.T) {
	if os.Getenv("MOAT_CRITEST") != "1" {
		// About 5 minutes on a quiet 2-core machine, over 20 under load:
		// scripts/test.sh runs it as a step of its own, after the other
		// tests, rather than beside them in `go test ./test/...`.
		t.Skip("set MOAT_CRITEST=1 to run critest against runc and Moat")
	}
	e := startEnv(t, debianContainerd)
	bin, err := buildCriTool(t, "critest")
	if err != nil {
		t.Fatal(err)
	}
	// One run after the other: critest's image specs pull and remove
	// shared images, so two runs side by side break each other's.
	runc := runCritest(t, e, bin, "runc")
	moat := runCritest(t, e, bin, "runsc")
	if runc == nil || moat == nil {
		t.FailNow()
	}
	t.Logf("critest: runc passes %d of %d specs, Moat %d (skipped: %d, %d)",
		len(runc.with("pass")), len(runc.status), len(moat.with("pass")), len(runc.with("skip")), len(moat.with("skip")))
	var missing []string
	for _, n := range runc.with("pass") {
		if moat.status[n] != "pass" {
			missing = append(missing, n)
		}
	}
	t.Logf("passing with runc but not with Moat (%d):\n  %s", len(missing), strings.Join(missing, "\n  "))
	var extra []string
	for _, n := range moat.with("pass") {
		if runc.status[n] != "pass" {
			extra = append(extra, n)
		}
	}
	if len(extra) > 0 {
		t.Logf("passing with Moat but not with runc (%d):\n  %s", len(extra), strings.Join(extra, "\n  "))
	}

	if os.Getenv("MOAT_UPDATE_CRITEST") == "1" {
		body := "# critest specs that pass with Moat (test/cri TestCritest); the list only grows.\n" + strings.Join(moat.with("pass"), "\n") + "\n"
		if err := os.WriteFile(critestBaseline, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", critestBaseline)
	}
	data, err := os.ReadFile(critestBaseline)
	if err != nil {
		t.Fatalf("%v (MOAT_UPDATE_CRITEST=1 writes it)", err)
	}
	lost := lostSpecs(data, moat, runc)
	for _, msg := range lost {
		t.Error(msg)
	}
	if len(lost) > 0 {
		t.Errorf("%d specs of %s no longer pass with Moat", len(lost), critestBaseline)
	}
}

// indent indents each line of s by four spaces.
func indent(s string) string {
	if s == "" {
		return ""
	}
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}
