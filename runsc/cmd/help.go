package cmd

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"sync"

	"github.com/google/subcommands"
)

// Help topics are extra `runsc help TOPIC [flags]` pages, each a command
// of its own (`runsc help syscalls --format=json`). A file of this
// package adds one with RegisterHelpTopic from an init function.
var (
	topicsMu sync.Mutex
	topics   = map[string]subcommands.Command{}
)

// RegisterHelpTopic makes `runsc help NAME` run c, where NAME is c.Name().
func RegisterHelpTopic(c subcommands.Command) {
	topicsMu.Lock()
	defer topicsMu.Unlock()
	topics[c.Name()] = c
}

func topic(name string) (subcommands.Command, bool) {
	topicsMu.Lock()
	defer topicsMu.Unlock()
	c, ok := topics[name]
	return c, ok
}

// Help is `runsc help [COMMAND | TOPIC [flags]]`.
type Help struct {
	cdr *subcommands.Commander
}

// NewHelp returns the help command of cdr.
func NewHelp(cdr *subcommands.Commander) *Help { return &Help{cdr: cdr} }

// Name implements subcommands.Command.
func (*Help) Name() string { return "help" }

// Synopsis implements subcommands.Command.
func (*Help) Synopsis() string { return "describe subcommands and help topics" }

// Usage implements subcommands.Command.
func (*Help) Usage() string {
	return "help [COMMAND | TOPIC [flags]]\n\nWith no argument, lists the commands. With a command, describes it.\n" +
		"Topics: " + topicNames() + "\n\n"
}

func topicNames() string {
	topicsMu.Lock()
	defer topicsMu.Unlock()
	if len(topics) == 0 {
		return "none"
	}
	var names []string
	for n := range topics {
		names = append(names, n)
	}
	sort.Strings(names)
	return fmt.Sprint(names)
}

// SetFlags implements subcommands.Command.
func (*Help) SetFlags(*flag.FlagSet) {}

// Execute implements subcommands.Command.
func (h *Help) Execute(ctx context.Context, f *flag.FlagSet, args ...any) subcommands.ExitStatus {
	if f.NArg() >= 1 {
		if t, ok := topic(f.Arg(0)); ok {
			tf := flag.NewFlagSet(t.Name(), flag.ContinueOnError)
			tf.SetOutput(h.cdr.Error)
			tf.Usage = func() { h.cdr.ExplainCommand(h.cdr.Error, t) }
			t.SetFlags(tf)
			if err := tf.Parse(f.Args()[1:]); err != nil {
				return subcommands.ExitUsageError
			}
			return t.Execute(ctx, tf, args...)
		}
	}
	return h.cdr.HelpCommand().Execute(ctx, f, args...)
}

// HideInternal makes cdr's command list leave out InternalGroup.
func HideInternal(cdr *subcommands.Commander) {
	explain := cdr.ExplainGroup
	cdr.ExplainGroup = func(w io.Writer, g *subcommands.CommandGroup) {
		if g.Name() == InternalGroup {
			return
		}
		explain(w, g)
	}
}
