package cmd

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/google/subcommands"
	"github.com/moat-sandbox/moat/runsc/container"
)

// Ps is `runsc ps`: the processes of a container, as its Sentry sees them.
type Ps struct {
	format string
	sentry bool
}

// Name implements subcommands.Command.
func (*Ps) Name() string { return "ps" }

// Synopsis implements subcommands.Command.
func (*Ps) Synopsis() string { return "list a container's processes" }

// Usage implements subcommands.Command.
func (*Ps) Usage() string {
	return `ps [--format table|json] ID

Lists the processes running in container ID, with the pids the container
sees. --format json prints a JSON array of pids, as runc's does: the host
pids of the processes that run the container (the sandbox and its stub
processes, which is what docker top looks up in the host's ps), or, with
--sentry, the pids the container sees (as the runsc shim wants them).
runc's trailing ps(1) options are refused: there is no host ps to pass
them to.

`
}

// SetFlags implements subcommands.Command.
func (p *Ps) SetFlags(f *flag.FlagSet) {
	f.StringVar(&p.format, "format", "table", "output format: table or json")
	f.StringVar(&p.format, "f", "table", "short for --format")
	f.BoolVar(&p.sentry, "sentry", false, "with --format json, the pids the container sees instead of host pids")
}

// Execute implements subcommands.Command.
func (p *Ps) Execute(_ context.Context, f *flag.FlagSet, args ...any) subcommands.ExitStatus {
	conf, log := Globals(args)
	if f.NArg() > 1 {
		// runc passes these to the host's ps(1); the sandbox's
		// processes are not the host's.
		return ociFail(conf, log, "ps", fmt.Errorf("ps options (%q) are not supported: the processes are the Sentry's, not the host's", f.Args()[1:]))
	}
	id, ok := oneID(f, "ps")
	if !ok {
		return exitError
	}
	if p.format != "table" && p.format != "json" {
		return ociFail(conf, log, "ps", fmt.Errorf("invalid format %q: want table or json", p.format))
	}
	c, err := container.Load(conf.RootDir, id)
	if err != nil {
		return ociFail(conf, log, "ps", err)
	}
	if p.format == "json" && !p.sentry {
		pids, err := c.HostPIDs()
		if err != nil {
			return ociFail(conf, log, "ps", err)
		}
		if pids == nil {
			pids = []int{}
		}
		b, _ := json.Marshal(pids)
		os.Stdout.Write(append(b, '\n'))
		return subcommands.ExitSuccess
	}
	procs, err := c.Processes()
	if err != nil {
		return ociFail(conf, log, "ps", err)
	}
	if p.format == "json" {
		pids := make([]int32, 0, len(procs))
		for _, pr := range procs {
			pids = append(pids, pr.PID)
		}
		b, _ := json.Marshal(pids)
		os.Stdout.Write(append(b, '\n'))
		return subcommands.ExitSuccess
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 1, 1, ' ', 0)
	fmt.Fprint(w, "UID\tPID\tPPID\tSTIME\tTIME\tCMD\n")
	for _, pr := range procs {
		t := time.Duration(pr.CPU * float64(time.Second)).Truncate(time.Second)
		fmt.Fprintf(w, "%s\t%d\t%d\t%s\t%s\t%s\n", strconv.Itoa(int(pr.UID)), pr.PID, pr.PPID,
			pr.Start.Format("15:04"), fmtCPU(t), pr.Cmdline)
	}
	w.Flush()
	return subcommands.ExitSuccess
}

// fmtCPU prints a duration as ps's TIME column: [DD-]HH:MM:SS.
func fmtCPU(d time.Duration) string {
	s := int(d.Seconds())
	days, s := s/86400, s%86400
	out := fmt.Sprintf("%02d:%02d:%02d", s/3600, s/60%60, s%60)
	if days > 0 {
		out = fmt.Sprintf("%d-%s", days, out)
	}
	return out
}
