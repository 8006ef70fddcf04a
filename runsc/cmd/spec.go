package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/subcommands"
	"github.com/moat-sandbox/moat/runsc/specutils"
)

// Spec is `runsc spec`: write a default config.json.
type Spec struct {
	bundle   string
	rootless bool
}

// Name implements subcommands.Command.
func (*Spec) Name() string { return "spec" }

// Synopsis implements subcommands.Command.
func (*Spec) Synopsis() string { return "write a default config.json" }

// Usage implements subcommands.Command.
func (*Spec) Usage() string {
	return `spec [--bundle DIR] [--rootless]

Writes a default OCI spec, config.json, into the bundle directory (default:
the current one), as runc's: it runs "sh" in ./rootfs on a terminal.
--rootless adds a user namespace mapping the caller's ids to root.

`
}

// SetFlags implements subcommands.Command.
func (s *Spec) SetFlags(f *flag.FlagSet) {
	f.StringVar(&s.bundle, "bundle", ".", "directory to write config.json in")
	f.StringVar(&s.bundle, "b", ".", "short for --bundle")
	f.BoolVar(&s.rootless, "rootless", false, "a spec for an unprivileged user")
}

// Execute implements subcommands.Command.
func (s *Spec) Execute(_ context.Context, f *flag.FlagSet, args ...any) subcommands.ExitStatus {
	conf, log := Globals(args)
	if f.NArg() != 0 {
		f.Usage()
		return exitError
	}
	path := filepath.Join(s.bundle, specutils.ConfigFile)
	if _, err := os.Lstat(path); err == nil {
		return ociFail(conf, log, "spec", fmt.Errorf("file %s exists: remove it first", path))
	} else if !errors.Is(err, os.ErrNotExist) {
		return ociFail(conf, log, "spec", err)
	}
	b, err := json.MarshalIndent(specutils.Default(s.rootless, uint32(os.Getuid()), uint32(os.Getgid())), "", "\t")
	if err != nil {
		return ociFail(conf, log, "spec", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o666); err != nil {
		return ociFail(conf, log, "spec", err)
	}
	return subcommands.ExitSuccess
}
