//go:debug updatemaxprocs=0

// Command runsc is Moat's OCI runtime: it runs containers in a sandbox
// whose system calls are served by the Sentry, a kernel in user space.
// Subcommands live in runsc/cmd; global flags in runsc/config.
//
// The Go runtime must not re-read cgroup files after the sandbox and gofer
// confine themselves (their seccomp filters refuse it), so its periodic
// GOMAXPROCS update is off.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/google/subcommands"
	"github.com/moat-sandbox/moat/runsc/cmd"
	"github.com/moat-sandbox/moat/runsc/config"
	// Initialised first: the heap grows onto huge pages from here on.
	_ "github.com/moat-sandbox/moat/runsc/internal/hugeheap"
)

func main() {
	conf := config.Default()
	conf.RegisterFlags(flag.CommandLine)
	cdr := subcommands.NewCommander(flag.CommandLine, "runsc")
	cmd.HideInternal(cdr)

	cdr.Register(cmd.NewHelp(cdr), "")
	cdr.Register(cdr.FlagsCommand(), "")
	cdr.Register(cdr.CommandsCommand(), "")
	cdr.Register(new(cmd.Do), "")
	cmd.RegisterOCI(cdr)
	cdr.Register(new(cmd.Install), "")
	cdr.Register(new(cmd.Uninstall), "")
	cdr.Register(new(cmd.Gofer), cmd.InternalGroup)
	cdr.Register(new(cmd.Boot), cmd.InternalGroup)
	for _, name := range []string{"root", "log", "log-format", "debug", "debug-log", "strace", "platform", "network"} {
		cdr.ImportantFlag(name)
	}
	flag.CommandLine.Usage = func() { cdr.Explain(cdr.Error) }

	flag.Parse()
	if err := conf.Validate(); err != nil {
		fmt.Fprintf(os.Stderr, "runsc: %v\n", err)
		os.Exit(int(subcommands.ExitUsageError))
	}
	name := flag.Arg(0)
	if name == "" {
		name = "runsc"
	}
	log, closer, err := conf.OpenLog(name, os.Stderr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "runsc: %v\n", err)
		os.Exit(int(subcommands.ExitFailure))
	}
	log.Debug("starting", "args", os.Args)
	if flag.NArg() > 0 && !known(cdr, name) && (conf.LogFile != "" || conf.DebugLog != "") {
		// The usage text goes to stderr; a caller reading only the
		// log (containerd's runc shim) learns what went wrong too.
		log.Error(fmt.Sprintf("runsc: unknown command %q", name))
	}

	status := cdr.Execute(context.Background(), conf, log)
	closer.Close()
	os.Exit(int(status))
}

// known reports whether name is one of cdr's commands.
func known(cdr *subcommands.Commander, name string) bool {
	found := false
	cdr.VisitCommands(func(_ *subcommands.CommandGroup, c subcommands.Command) {
		found = found || c.Name() == name
	})
	return found
}
