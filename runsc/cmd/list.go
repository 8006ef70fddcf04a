package cmd

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/google/subcommands"
	"github.com/moat-sandbox/moat/runsc/container"
)

// List is `runsc list`: the containers under --root.
type List struct {
	format string
	quiet  bool
}

// Name implements subcommands.Command.
func (*List) Name() string { return "list" }

// Synopsis implements subcommands.Command.
func (*List) Synopsis() string { return "list containers" }

// Usage implements subcommands.Command.
func (*List) Usage() string {
	return "list [--format table|json] [--quiet]\n\nLists the containers whose state is under --root.\n\n"
}

// SetFlags implements subcommands.Command.
func (l *List) SetFlags(f *flag.FlagSet) {
	f.StringVar(&l.format, "format", "table", "output format: table or json")
	f.StringVar(&l.format, "f", "table", "short for --format")
	f.BoolVar(&l.quiet, "quiet", false, "print the ids only")
	f.BoolVar(&l.quiet, "q", false, "short for --quiet")
}

// Execute implements subcommands.Command.
func (l *List) Execute(_ context.Context, f *flag.FlagSet, args ...any) subcommands.ExitStatus {
	conf, log := Globals(args)
	if f.NArg() != 0 {
		f.Usage()
		return exitError
	}
	cs, err := container.List(conf.RootDir)
	if err != nil {
		return ociFail(conf, log, "list", err)
	}
	if l.quiet {
		for _, c := range cs {
			fmt.Println(c.ID())
		}
		return subcommands.ExitSuccess
	}
	switch l.format {
	case "table":
		w := tabwriter.NewWriter(os.Stdout, 12, 1, 3, ' ', 0)
		fmt.Fprint(w, "ID\tPID\tSTATUS\tBUNDLE\tCREATED\tOWNER\n")
		for _, c := range cs {
			fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\t%s\n", c.ID(), c.Pid(), c.Status(), c.Bundle(),
				c.Created().Format(time.RFC3339Nano), c.Owner())
		}
		w.Flush()
	case "json":
		out := make([]container.State, 0, len(cs))
		for _, c := range cs {
			out = append(out, c.State())
		}
		b, err := json.Marshal(out)
		if err != nil {
			return ociFail(conf, log, "list", err)
		}
		os.Stdout.Write(append(b, '\n'))
	default:
		return ociFail(conf, log, "list", fmt.Errorf("invalid format %q: want table or json", l.format))
	}
	return subcommands.ExitSuccess
}
