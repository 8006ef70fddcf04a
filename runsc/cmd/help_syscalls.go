package cmd

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"text/tabwriter"

	"github.com/google/subcommands"

	"github.com/moat-sandbox/moat/sentry/strace"
	"github.com/moat-sandbox/moat/sentry/syscalls/linux"
)

func init() { RegisterHelpTopic(&helpSyscalls{}) }

// helpSyscalls is `runsc help syscalls [--format=table|json]`: the syscall
// table with each entry's support level and note, printed from the table
// the Sentry runs, so the list never drifts.
type helpSyscalls struct {
	format string
}

func (*helpSyscalls) Name() string { return "syscalls" }
func (*helpSyscalls) Synopsis() string {
	return "list the system calls and how much of each Moat implements"
}
func (*helpSyscalls) Usage() string {
	return "help syscalls [--format=table|json]\n\nPrints every amd64 system call with its support level (full, partial,\nunimplemented) and a note.\n\n"
}

func (h *helpSyscalls) SetFlags(f *flag.FlagSet) {
	f.StringVar(&h.format, "format", "table", "output format: table or json")
}

// SyscallInfo is one row of `runsc help syscalls --format=json`.
type SyscallInfo struct {
	Number  uintptr  `json:"number"`
	Name    string   `json:"name"`
	Support string   `json:"support"`
	Note    string   `json:"note,omitempty"`
	Errno   string   `json:"errno,omitempty"`
	Args    []string `json:"args,omitempty"`
}

// SyscallTable returns the rows of the table, by number.
func SyscallTable() []SyscallInfo {
	var rows []SyscallInfo
	for n, s := range linux.AMD64().Table {
		r := SyscallInfo{Number: n, Name: s.Name, Support: s.Support.String(), Note: s.Note}
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
		if _, kinds := strace.Signature(n); kinds != nil {
			for _, k := range kinds {
				r.Args = append(r.Args, k.String())
			}
		}
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Number < rows[j].Number })
	return rows
}

func (h *helpSyscalls) Execute(_ context.Context, f *flag.FlagSet, _ ...any) subcommands.ExitStatus {
	rows := SyscallTable()
	switch h.format {
	case "json":
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rows); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return subcommands.ExitFailure
		}
	case "table":
		w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "NR\tNAME\tSUPPORT\tNOTE")
		counts := map[string]int{}
		for _, r := range rows {
			note := r.Note
			if r.Errno != "" {
				if note != "" {
					note = r.Errno + "; " + note
				} else {
					note = r.Errno
				}
			}
			fmt.Fprintf(w, "%d\t%s\t%s\t%s\n", r.Number, r.Name, r.Support, note)
			counts[r.Support]++
		}
		w.Flush()
		fmt.Printf("\n%d syscalls: %d full, %d partial, %d unimplemented\n", len(rows), counts["full"], counts["partial"], counts["unimplemented"])
	default:
		fmt.Fprintf(os.Stderr, "runsc help syscalls: unknown format %q (want table or json)\n", h.format)
		return subcommands.ExitUsageError
	}
	return subcommands.ExitSuccess
}
