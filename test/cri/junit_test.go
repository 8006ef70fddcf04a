package cri_test

import (
	"strings"
	"testing"
)

const sampleJUnit = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="4">
  <testsuite name="CRI validation" tests="4">
    <testcase name="[It] [k8s.io] A   passes" classname="CRI"></testcase>
    <testcase name="[It] [k8s.io] B fails" classname="CRI">
      <failure message="Expected 137, got 0" type="failed">[FAILED] Expected
    &lt;int&gt;: 0
to equal 137</failure>
    </testcase>
    <testcase name="[It] [k8s.io] C skipped" classname="CRI"><skipped message="skipped"></skipped></testcase>
    <testcase name="[It] [k8s.io] D errs" classname="CRI"><error message="panic">boom</error></testcase>
  </testsuite>
</testsuites>`

func TestParseJUnit(t *testing.T) {
	r, err := parseJUnit([]byte(sampleJUnit))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, status, why string }{
		{"[It] [k8s.io] A passes", "pass", ""},
		{"[It] [k8s.io] B fails", "fail", "Expected 137, got 0"},
		{"[It] [k8s.io] C skipped", "skip", ""},
		{"[It] [k8s.io] D errs", "fail", "panic\nboom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := r.status[tc.name]; got != tc.status {
				t.Errorf("status %q, want %q", got, tc.status)
			}
			if !strings.Contains(r.why[tc.name], tc.why) {
				t.Errorf("why %q, want it to contain %q", r.why[tc.name], tc.why)
			}
		})
	}
	if _, err := parseJUnit([]byte("<testsuites><testsuite>")); err == nil {
		t.Error("a truncated report parsed")
	}
}

func TestLostSpecs(t *testing.T) {
	moat := &critestResult{
		status: map[string]string{"A": "pass", "B": "fail", "C": "skip"},
		why:    map[string]string{"B": "Expected 137, got 0"},
	}
	runc := &critestResult{status: map[string]string{"A": "pass", "B": "pass", "C": "pass", "D": "pass"}}
	baseline := []byte("# comment\nA\n\nB\n  C  \nD\n")
	lost := lostSpecs(baseline, moat, runc)
	want := []struct{ spec, moat, runc, why string }{
		{"B", "fail", "pass", "    Expected 137, got 0"},
		{"C", "skip", "pass", ""},
		{"D", "not run", "pass", ""},
	}
	if len(lost) != len(want) {
		t.Fatalf("lostSpecs = %q, want %d messages", lost, len(want))
	}
	for i, w := range want {
		msg := lost[i]
		for _, part := range []string{`"` + w.spec + `"`, "runtime handler runsc", "(Moat): " + w.moat, "with runc: " + w.runc, w.why} {
			if !strings.Contains(msg, part) {
				t.Errorf("message %q lacks %q", msg, part)
			}
		}
	}
}

func FuzzParseJUnit(f *testing.F) {
	f.Add([]byte(sampleJUnit))
	f.Add([]byte("<testsuites/>"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := parseJUnit(data)
		if err != nil {
			return
		}
		for name, st := range r.status {
			if st != "pass" && st != "fail" && st != "skip" {
				t.Errorf("spec %q has status %q", name, st)
			}
		}
	})
}
