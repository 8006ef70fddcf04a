package cmd

import (
	"flag"
	"fmt"
	"log/slog"
	"os"

	"github.com/google/subcommands"
	"github.com/moat-sandbox/moat/runsc/config"
)

// This file holds what the OCI lifecycle commands (create, start, run,
// state, list, kill, delete, wait, ps, spec, features) share.

// exitError is the status of a lifecycle command that fails, as runc's.
const exitError subcommands.ExitStatus = 1

// ociFail reports err from lifecycle command name on stderr (and the log
// file, if any) and returns runc's failure status.
func ociFail(conf *config.Config, log *slog.Logger, name string, err error) subcommands.ExitStatus {
	fail(conf, log, name, err)
	return exitError
}

// oneID returns the single container id argument of f, or reports the
// usage error as runc does.
func oneID(f *flag.FlagSet, name string) (string, bool) {
	if f.NArg() != 1 {
		fmt.Fprintf(os.Stderr, "runsc %s: %q requires exactly 1 argument (the container id), got %d\n", name, name, f.NArg())
		f.Usage()
		return "", false
	}
	return f.Arg(0), true
}

// OCIGroup is the command group of the OCI lifecycle commands.
const OCIGroup = "oci"

// RegisterOCI registers the OCI lifecycle commands on cdr.
func RegisterOCI(cdr *subcommands.Commander) {
	for _, c := range []subcommands.Command{
		new(Create), new(Start), new(Run), new(State), new(List), new(Kill),
		new(Delete), new(Wait), new(Ps), new(Events), new(Spec), new(Features),
	} {
		cdr.Register(c, OCIGroup)
	}
}
