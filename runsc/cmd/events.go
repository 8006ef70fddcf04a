package cmd

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"time"

	"github.com/google/subcommands"
	"github.com/moat-sandbox/moat/runsc/container"
)

// Events is `runsc events`: a container's resource figures, once or as a
// stream.
type Events struct {
	stats    bool
	interval time.Duration
}

// Name implements subcommands.Command.
func (*Events) Name() string { return "events" }

// Synopsis implements subcommands.Command.
func (*Events) Synopsis() string { return "print a container's resource statistics" }

// Usage implements subcommands.Command.
func (*Events) Usage() string {
	return `events [--stats] [--interval D] ID

Prints events of container ID as JSON lines in runc's shape,
{"type":"stats","id":ID,"data":{...}}: with --stats one and exits,
otherwise one every --interval (default 5s) until the container stops.
pids.current and cpu.usage user and kernel (nanoseconds) are the Sentry's
own figures; memory.usage (usage, limit), cpu.usage.total and pids.limit
come from the container's cgroup when it has one (the host's figures for
the sandbox and gofer), otherwise from the Sentry's memory file and CPU
time.

`
}

// SetFlags implements subcommands.Command.
func (e *Events) SetFlags(f *flag.FlagSet) {
	f.BoolVar(&e.stats, "stats", false, "print the statistics once and exit")
	f.DurationVar(&e.interval, "interval", 5*time.Second, "time between two statistics events")
}

// statsEvent is runc's event shape, with the parts Moat fills.
type statsEvent struct {
	Type string    `json:"type"`
	ID   string    `json:"id"`
	Data statsData `json:"data"`
}

type statsData struct {
	CPU struct {
		Usage struct {
			Total  uint64 `json:"total"`
			User   uint64 `json:"user"`
			Kernel uint64 `json:"kernel"`
		} `json:"usage"`
	} `json:"cpu"`
	Memory struct {
		Usage struct {
			Usage uint64 `json:"usage"`
			Limit uint64 `json:"limit"`
		} `json:"usage"`
	} `json:"memory"`
	Pids struct {
		Current uint64 `json:"current"`
		Limit   uint64 `json:"limit,omitempty"`
	} `json:"pids"`
}

// newStatsEvent fills an event: processes and user/kernel CPU time as the
// Sentry counts them; memory and total CPU from the container's cgroup
// when it has one (the host's figures, Sentry and gofer included), else
// the Sentry's memory file and CPU time.
func newStatsEvent(id string, st *container.Stats) *statsEvent {
	s := &st.Sentry
	ev := &statsEvent{Type: "stats", ID: id}
	ev.Data.CPU.Usage.User = s.UserNS
	ev.Data.CPU.Usage.Kernel = s.SystemNS
	ev.Data.CPU.Usage.Total = s.UserNS + s.SystemNS
	ev.Data.Memory.Usage.Usage = s.MemoryUsage
	ev.Data.Memory.Usage.Limit = s.MemoryLimit
	ev.Data.Pids.Current = uint64(s.PIDs)
	if cg := st.Cgroup; cg != nil {
		if cg.CPUUsageNS != 0 {
			ev.Data.CPU.Usage.Total = cg.CPUUsageNS
		}
		if cg.MemoryUsage != 0 {
			ev.Data.Memory.Usage.Usage = cg.MemoryUsage
		}
		if cg.MemoryLimit != 0 {
			ev.Data.Memory.Usage.Limit = cg.MemoryLimit
		}
		ev.Data.Pids.Limit = cg.PidsLimit
	}
	return ev
}

// Execute implements subcommands.Command.
func (e *Events) Execute(ctx context.Context, f *flag.FlagSet, args ...any) subcommands.ExitStatus {
	conf, log := Globals(args)
	id, ok := oneID(f, "events")
	if !ok {
		return exitError
	}
	c, err := container.Load(conf.RootDir, id)
	if err != nil {
		return ociFail(conf, log, "events", err)
	}
	enc := json.NewEncoder(os.Stdout)
	for {
		st, err := c.Stats()
		if err != nil {
			if e.stats {
				return ociFail(conf, log, "events", err)
			}
			return subcommands.ExitSuccess // the container stopped
		}
		if err := enc.Encode(newStatsEvent(id, st)); err != nil {
			return ociFail(conf, log, "events", err)
		}
		if e.stats {
			return subcommands.ExitSuccess
		}
		select {
		case <-ctx.Done():
			return subcommands.ExitSuccess
		case <-time.After(e.interval):
		}
	}
}
