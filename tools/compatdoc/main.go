// Command compatdoc generates docs/compatibility.md: the Sentry's syscall
// table (support level and note of every amd64 system call, as `runsc help
// syscalls --format=json` prints it) joined with the conformance suite
// (which test/syscalls cases exercise each call, and how many of them pass
// natively and in the sandbox).
//
// Which syscalls a case exercises is found statically: the case function
// and the local helpers it calls are scanned for calls of functions named
// like a syscall, SYS_xxx constants, and a short list of C library
// wrappers whose syscall has another name (scan.go). Pass counts come from
// a results file written by the suite's runner:
//
//	MOAT_RESULTS=$PWD/docs/compatibility-results.json go test ./test/syscalls
//	go run ./tools/compatdoc              # rewrite docs/compatibility.md
//	go run ./tools/compatdoc -check       # fail if it is out of date
//
// Run from the repository root. The table comes from the Sentry's own
// table (linked in), or from -table FILE (JSON from runsc help syscalls).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/moat-sandbox/moat/sentry/strace"
	"github.com/moat-sandbox/moat/sentry/syscalls/linux"
)

// Row is one syscall table entry, as `runsc help syscalls --format=json`
// prints it (runsc/cmd.SyscallInfo).
type Row struct {
	Number  uintptr  `json:"number"`
	Name    string   `json:"name"`
	Support string   `json:"support"`
	Note    string   `json:"note,omitempty"`
	Errno   string   `json:"errno,omitempty"`
	Args    []string `json:"args,omitempty"`
}

// linkedTable builds the rows from the Sentry's table the way runsc help
// syscalls does (runsc/cmd/help_syscalls.go), without linking all of runsc.
func linkedTable() []Row {
	var rows []Row
	for n, s := range linux.AMD64().Table {
		r := Row{Number: n, Name: s.Name, Support: s.Support.String(), Note: s.Note}
		if r.Name == "" {
			r.Name = strace.Name(n)
		}
		if s.Fn == nil {
			e := s.Errno
			if e == 0 {
				e = 38 // ENOSYS
			}
			r.Errno = strace.ErrnoString(uint64(e))
		}
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Number < rows[j].Number })
	return rows
}

// Results mirrors the runner's MOAT_RESULTS file (test/syscalls/results.go).
type Results struct {
	Programs []struct {
		Name  string `json:"name"`
		Cases []struct {
			Name    string `json:"name"`
			Native  string `json:"native"`
			Sandbox string `json:"sandbox"`
			Known   bool   `json:"known"`
		} `json:"cases"`
	} `json:"programs"`
}

type caseKey struct{ prog, name string }

type outcome struct{ native, sandbox string }

func main() {
	tableFile := flag.String("table", "", "syscall table JSON (runsc help syscalls --format=json); default: the table linked into this tool")
	resultsFile := flag.String("results", "docs/compatibility-results.json", "results JSON written by the suite with MOAT_RESULTS")
	srcDir := flag.String("src", "test/syscalls", "directory of the conformance programs")
	out := flag.String("o", "docs/compatibility.md", "output file")
	check := flag.Bool("check", false, "do not write: exit 1 if the output file differs from what would be generated")
	flag.Parse()

	doc, err := build(*tableFile, *resultsFile, *srcDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "compatdoc:", err)
		os.Exit(2)
	}
	if *check {
		old, err := os.ReadFile(*out)
		if err != nil || !bytes.Equal(old, doc) {
			fmt.Fprintf(os.Stderr, "compatdoc: %s is out of date: run go run ./tools/compatdoc\n", *out)
			os.Exit(1)
		}
		return
	}
	if err := os.WriteFile(*out, doc, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "compatdoc:", err)
		os.Exit(2)
	}
}

// build loads the inputs and renders the document.
func build(tableFile, resultsFile, srcDir string) ([]byte, error) {
	table := linkedTable()
	if tableFile != "" {
		b, err := os.ReadFile(tableFile)
		if err != nil {
			return nil, err
		}
		table = nil
		if err := json.Unmarshal(b, &table); err != nil {
			return nil, fmt.Errorf("%s: %w", tableFile, err)
		}
	}
	var res Results
	if resultsFile != "" {
		b, err := os.ReadFile(resultsFile)
		if err != nil && !os.IsNotExist(err) {
			return nil, err
		}
		if err == nil {
			if err := json.Unmarshal(b, &res); err != nil {
				return nil, fmt.Errorf("%s: %w", resultsFile, err)
			}
		}
	}
	srcs, err := filepath.Glob(filepath.Join(srcDir, "*.c"))
	if err != nil {
		return nil, err
	}
	sort.Strings(srcs)
	programs := map[string]string{}
	for _, p := range srcs {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		programs[strings.TrimSuffix(filepath.Base(p), ".c")] = string(b)
	}
	return render(table, res, programs), nil
}

// render produces the Markdown document. It depends only on its inputs, so
// the committed file can be checked for being current.
func render(table []Row, res Results, sources map[string]string) []byte {
	names := map[string]bool{}
	for _, r := range table {
		names[r.Name] = true
	}
	isSyscall := func(s string) bool { return names[s] }

	outcomes := map[caseKey]outcome{}
	known := map[caseKey]bool{}
	for _, p := range res.Programs {
		for _, c := range p.Cases {
			k := caseKey{p.Name, c.Name}
			outcomes[k] = outcome{c.Native, c.Sandbox}
			known[k] = c.Known
		}
	}

	var progNames []string
	for n := range sources {
		progNames = append(progNames, n)
	}
	sort.Strings(progNames)

	type tally struct {
		cases, native, sandbox, known, notRun int
		progs                                 map[string]bool
	}
	per := map[string]*tally{}
	totalCases, totalNative, totalSandbox, totalKnown, totalNotRun := 0, 0, 0, 0, 0
	for _, pn := range progNames {
		p := scanProgram(pn, sources[pn], isSyscall)
		for _, c := range p.cases {
			k := caseKey{pn, c}
			o, ran := outcomes[k]
			totalCases++
			switch {
			case !ran:
				totalNotRun++
			default:
				if o.native == "pass" {
					totalNative++
				}
				if o.sandbox == "pass" {
					totalSandbox++
				}
				if known[k] {
					totalKnown++
				}
			}
			for _, s := range p.calls[c] {
				t := per[s]
				if t == nil {
					t = &tally{progs: map[string]bool{}}
					per[s] = t
				}
				t.cases++
				t.progs[pn] = true
				if !ran {
					t.notRun++
					continue
				}
				if o.native == "pass" {
					t.native++
				}
				if o.sandbox == "pass" {
					t.sandbox++
				}
				if known[k] {
					t.known++
				}
			}
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "<!-- Generated by tools/compatdoc; DO NOT EDIT. Regenerate: MOAT_RESULTS=$PWD/docs/compatibility-results.json go test ./test/syscalls && go run ./tools/compatdoc -->\n\n")
	b.WriteString("# Syscall compatibility\n\n")
	b.WriteString("Every amd64 system call, with the support level and note of the Sentry's\n")
	b.WriteString("syscall table (`runsc help syscalls`), joined with the conformance suite in\n")
	b.WriteString("`test/syscalls`: which programs have cases that call it, how many such cases\n")
	b.WriteString("there are, and how many of them passed natively and under `runsc do` in the\n")
	b.WriteString("recorded run (`docs/compatibility-results.json`). A case counts for every\n")
	b.WriteString("syscall its function (and the helpers it calls) names, found by scanning the\n")
	b.WriteString("C source, so the figures say what is exercised, not what is exhaustively\n")
	b.WriteString("tested. \"Known\" counts cases listed in `test/syscalls/known_failures.txt`;\n")
	b.WriteString("\"not run\" counts cases added since the recorded run.\n\n")

	counts := map[string]int{}
	for _, r := range table {
		counts[r.Support]++
	}
	var untested []string
	for _, r := range table {
		if r.Support != "unimplemented" && per[r.Name] == nil {
			untested = append(untested, r.Name)
		}
	}
	b.WriteString("## Summary\n\n")
	fmt.Fprintf(&b, "- %d syscalls: %d full, %d partial, %d unimplemented.\n", len(table), counts["full"], counts["partial"], counts["unimplemented"])
	fmt.Fprintf(&b, "- %d conformance programs with %d cases; in the recorded run %d passed natively and %d in the sandbox (%d known differences, %d not run).\n",
		len(progNames), totalCases, totalNative, totalSandbox, totalKnown, totalNotRun)
	fmt.Fprintf(&b, "- %d of %d supported or partial syscalls are exercised by at least one case.\n",
		counts["full"]+counts["partial"]-len(untested), counts["full"]+counts["partial"])
	if len(untested) > 0 {
		fmt.Fprintf(&b, "- Supported or partial but exercised by no case: %s.\n", strings.Join(untested, ", "))
	}
	b.WriteString("\n## Table\n\n")
	b.WriteString("| NR | Syscall | Support | Note | Cases | Native pass | Sandbox pass | Known | Programs |\n")
	b.WriteString("| --: | --- | --- | --- | --: | --: | --: | --: | --- |\n")
	for _, r := range table {
		note := r.Note
		if r.Errno != "" {
			if note != "" {
				note = r.Errno + "; " + note
			} else {
				note = r.Errno
			}
		}
		note = strings.ReplaceAll(note, "|", "\\|")
		t := per[r.Name]
		if t == nil {
			fmt.Fprintf(&b, "| %d | %s | %s | %s | 0 | | | | |\n", r.Number, r.Name, r.Support, note)
			continue
		}
		var ps []string
		for p := range t.progs {
			ps = append(ps, p)
		}
		sort.Strings(ps)
		cases := fmt.Sprint(t.cases)
		if t.notRun > 0 {
			cases += fmt.Sprintf(" (%d not run)", t.notRun)
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %d | %d | %d | %s |\n",
			r.Number, r.Name, r.Support, note, cases, t.native, t.sandbox, t.known, strings.Join(ps, ", "))
	}
	return []byte(b.String())
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
