package syscalls

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/moat-sandbox/moat/test/internal/harness"
)

// The sandboxed outcome of every case that passed natively in this run,
// for MOAT_UPDATE_KNOWN=1, which rewrites known_failures.txt to match.
var (
	outcomesMu sync.Mutex
	outcomes   = map[string]harness.CaseResult{} // "program:case" -> sandboxed result
	nowPassing atomic.Int64
)

func record(prog, name string, sandboxed harness.CaseResult) {
	outcomesMu.Lock()
	defer outcomesMu.Unlock()
	outcomes[prog+":"+name] = sandboxed
}

// updateKnown rewrites path: header comments and "program:*" lines are
// kept, exact lines of cases that now pass are dropped (unless addOnly),
// and cases that fail in the sandbox without a line get one (reason from
// the failure, no issue yet). Existing reasons are kept. addOnly is for
// repeated runs that collect flaky failures.
func updateKnown(path string, known *harness.Known, addOnly bool) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var header, wild []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "" || strings.HasPrefix(trimmed, "#"):
			header = append(header, line)
		case strings.Contains(strings.Fields(trimmed)[0], ":*"):
			wild = append(wild, line)
		}
	}
	outcomesMu.Lock()
	defer outcomesMu.Unlock()
	var lines []string
	seen := map[string]bool{}
	for key, r := range outcomes {
		prog, name, _ := strings.Cut(key, ":")
		if r.Status == harness.Pass && !(addOnly && known.Exact(prog, name)) {
			continue
		}
		seen[key] = true
		if _, ok := known.Reason(prog, "*"); ok && !known.Exact(prog, name) {
			continue
		}
		reason, ok := known.Reason(prog, name)
		if !ok || !known.Exact(prog, name) {
			note := r.Note
			if note == "" {
				note = "no result (the sandboxed run ended early)"
			}
			if i := strings.Index(note, ": "); i > 0 && strings.Contains(note[:i], ".c:") {
				note = note[i+2:] // drop file:line, it moves
			}
			if len(note) > 110 {
				note = note[:110] + "..."
			}
			reason = fmt.Sprintf("sandbox %s: %s  (no issue yet)", r.Status, note)
		}
		lines = append(lines, key+"\t"+reason)
	}
	if addOnly {
		// Keep lines of cases this run did not report on at all.
		for _, key := range known.Keys() {
			if prog, name, _ := strings.Cut(key, ":"); name != "*" && !seen[key] {
				reason, _ := known.Reason(prog, name)
				lines = append(lines, key+"\t"+reason)
			}
		}
	}
	sort.Strings(lines)
	var out bytes.Buffer
	for _, h := range header {
		out.WriteString(h + "\n")
	}
	for _, w := range wild {
		out.WriteString(w + "\n")
	}
	for _, l := range lines {
		out.WriteString(l + "\n")
	}
	return os.WriteFile(path, out.Bytes(), 0o644)
}
