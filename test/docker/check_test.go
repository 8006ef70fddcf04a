package docker

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat/test/internal/harness"
)

// check collects one case's failures, so that a case listed in
// known_failures.txt can be skipped when it fails instead of failing.
type check struct {
	t    *testing.T
	errs []string
}

// stopCase is panicked by Fatalf and recovered by runCase.
type stopCase struct{}

// Errorf records a failure and goes on.
func (c *check) Errorf(format string, args ...any) {
	c.t.Helper()
	c.errs = append(c.errs, fmt.Sprintf(format, args...))
}

// Fatalf records a failure and ends the case.
func (c *check) Fatalf(format string, args ...any) {
	c.t.Helper()
	c.Errorf(format, args...)
	panic(stopCase{})
}

// Helper implements the helper marking of testing.TB for docker().
func (c *check) Helper() { c.t.Helper() }

// Logf logs on the case's test.
func (c *check) Logf(format string, args ...any) {
	c.t.Helper()
	c.t.Logf(format, args...)
}

// loadKnown reads known_failures.txt beside the test.
func loadKnown(t *testing.T) *harness.Known {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("known_failures.txt"))
	if err != nil {
		t.Fatalf("known failures: %v", err)
	}
	k, err := harness.ParseKnown(b)
	if err != nil {
		t.Fatalf("known_failures.txt: %v", err)
	}
	return k
}

// deadlineMargin is the time a case needs: one not started this long
// before the test binary's -timeout fails instead, so that the daemons
// still stop and their files go.
const deadlineMargin = 3 * time.Minute

// runCase runs fn as parallel subtest name. Its failures fail the test,
// unless the case is listed as docker:<name> in known, which makes them a
// skip.
func runCase(t *testing.T, known *harness.Known, name string, fn func(c *check)) {
	t.Run(name, func(t *testing.T) {
		t.Parallel()
		if dl, ok := t.Deadline(); ok && time.Until(dl) < deadlineMargin {
			t.Fatalf("not run: less than %v left before the test's -timeout (run with -timeout 30m on a busy machine)", deadlineMargin)
		}
		c := &check{t: t}
		func() {
			defer func() {
				if r := recover(); r != nil {
					if _, ok := r.(stopCase); !ok {
						panic(r)
					}
				}
			}()
			fn(c)
		}()
		reason, isKnown := known.Reason("docker", name)
		switch {
		case len(c.errs) > 0 && isKnown:
			t.Skipf("known failure (%s):\n%s", reason, strings.Join(c.errs, "\n"))
		case len(c.errs) > 0:
			for _, e := range c.errs {
				t.Error(e)
			}
		case isKnown && os.Getenv("MOAT_STRICT_KNOWN") == "1":
			t.Errorf("listed in known_failures.txt but passes: remove docker:%s", name)
		case isKnown:
			t.Logf("listed in known_failures.txt but passes: remove docker:%s", name)
		}
	})
}
