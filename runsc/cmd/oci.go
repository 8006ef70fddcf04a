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
// state, list, kill, delete, wait, ps, spec, features, exec, pause,
// resume, update) share.

// exitError is the status of a lifecycle command that fails, as runc's.
const exitError subcommands.ExitStatus = 1

// ociFail reports err from lifecycle command name on stderr (and the log
// file, if any) and returns runc's failure status.
func ociFail(conf *config.Config, log *slog.Logger, name string, err error) subcommands.ExitStatus {
	fail(conf, log, name, err)
	return exitError
}

// runcCompat are flags runc's create and run take that mean nothing for a
// sandbox, accepted so that callers passing them (containerd's shim may)
// work, plus --preserve-fds, refused unless 0.
type runcCompat struct {
	noPivot, noNewKeyring, noSubreaper bool
	preserveFDs                        int
}

func (r *runcCompat) setFlags(f *flag.FlagSet, run bool) {
	f.BoolVar(&r.noPivot, "no-pivot", false, "accepted for runc compatibility: the Sentry gives the container its root itself")
	f.BoolVar(&r.noNewKeyring, "no-new-keyring", false, "accepted for runc compatibility: the Sentry has no host keyrings")
	f.IntVar(&r.preserveFDs, "preserve-fds", 0, "pass N more descriptors to the container (not supported yet: must be 0)")
	if run {
		f.BoolVar(&r.noSubreaper, "no-subreaper", false, "accepted for runc compatibility")
	}
}

func (r *runcCompat) check() error {
	if r.preserveFDs != 0 {
		return fmt.Errorf("--preserve-fds=%d is not supported yet: the container gets only its stdio", r.preserveFDs)
	}
	return nil
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
		new(Exec), new(Pause), new(Resume), new(Update),
	} {
		cdr.Register(c, OCIGroup)
	}
}
