package syscalls

import (
	"encoding/json"
	"os"
	"sort"
	"sync"

	"github.com/moat-sandbox/moat/test/internal/harness"
)

// Results is the machine-readable record of one run of the suite, written
// to $MOAT_RESULTS when that is set. tools/compatdoc joins it with the
// syscall table into docs/compatibility.md.
type Results struct {
	Programs []ProgramResult `json:"programs"`
}

// ProgramResult is one program's cases, in the order the program runs them.
type ProgramResult struct {
	Name  string       `json:"name"`
	Cases []CaseResult `json:"cases"`
}

// CaseResult is one case's outcome in each world: "pass", "fail", "skip",
// "missing", or "" when that run did not happen (sandboxed runs are not
// compared for a case that does not pass natively). Known is true when
// known_failures.txt lists the case.
type CaseResult struct {
	Name    string `json:"name"`
	Native  string `json:"native"`
	Sandbox string `json:"sandbox,omitempty"`
	Known   bool   `json:"known,omitempty"`
}

var (
	resultsMu sync.Mutex
	results   = map[string]map[string]CaseResult{} // program -> case -> result
	order     = map[string][]string{}              // program -> case names in run order
)

func statusWord(s harness.Status) string {
	switch s {
	case harness.Pass:
		return "pass"
	case harness.Fail:
		return "fail"
	case harness.Skip:
		return "skip"
	}
	return "missing"
}

// noteResult records one case for $MOAT_RESULTS. sandbox is nil when there
// was no sandboxed run to look at.
func noteResult(prog, name string, native harness.Status, sandbox *harness.Status, known bool) {
	r := CaseResult{Name: name, Native: statusWord(native), Known: known}
	if sandbox != nil {
		r.Sandbox = statusWord(*sandbox)
	}
	resultsMu.Lock()
	defer resultsMu.Unlock()
	if results[prog] == nil {
		results[prog] = map[string]CaseResult{}
	}
	if _, ok := results[prog][name]; !ok {
		order[prog] = append(order[prog], name)
	}
	results[prog][name] = r
}

// writeResults writes the recorded cases to path as JSON, programs sorted
// by name.
func writeResults(path string) error {
	resultsMu.Lock()
	var out Results
	for prog, cases := range results {
		pr := ProgramResult{Name: prog}
		for _, name := range order[prog] {
			pr.Cases = append(pr.Cases, cases[name])
		}
		out.Programs = append(out.Programs, pr)
	}
	resultsMu.Unlock()
	sort.Slice(out.Programs, func(i, j int) bool { return out.Programs[i].Name < out.Programs[j].Name })
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
