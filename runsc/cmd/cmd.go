// Package cmd holds runsc's subcommands, one file each, built on
// github.com/google/subcommands. Commands are thin: they parse their flags
// and call the libraries (runsc/sandbox, runsc/boot, ...), which know
// nothing about flags.
//
// main passes every command's Execute two extra arguments: the global
// *config.Config and the process's *slog.Logger (see Globals).
package cmd

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/google/subcommands"
	"github.com/moat-sandbox/moat/runsc/config"
	"github.com/moat-sandbox/moat/runsc/sandbox"
)

// InternalGroup is the command group of subcommands runsc starts itself
// (gofer, boot); help output leaves it out.
const InternalGroup = "internal"

// Globals extracts the global configuration and logger main passes to
// Execute.
func Globals(args []any) (*config.Config, *slog.Logger) {
	conf, log := config.Default(), slog.Default()
	if len(args) > 0 {
		if c, ok := args[0].(*config.Config); ok {
			conf = c
		}
	}
	if len(args) > 1 {
		if l, ok := args[1].(*slog.Logger); ok {
			log = l
		}
	}
	return conf, log
}

// fail reports err from command name on stderr, and in the log too when
// the log is a file. The log record's message is the error itself, as
// runc's: containerd's runc shim shows the message of the last error
// record of --log (Docker then matches "executable file not found" and
// the like in it to pick its exit status). It returns the status runsc
// exits with when it fails itself.
func fail(conf *config.Config, log *slog.Logger, name string, err error) subcommands.ExitStatus {
	fmt.Fprintf(os.Stderr, "runsc %s: %v\n", name, err)
	if conf.DebugLog != "" || conf.LogFile != "" {
		log.Error(fmt.Sprintf("runsc %s: %v", name, err))
	}
	return sandbox.ExitInternal
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, " ") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// envList is a repeatable K=V flag.
type envList []string

func (l *envList) String() string { return strings.Join(*l, " ") }

func (l *envList) Set(v string) error {
	if k, _, ok := strings.Cut(v, "="); !ok || k == "" {
		return fmt.Errorf("%q is not of the form NAME=VALUE", v)
	}
	*l = append(*l, v)
	return nil
}
