package cmd

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/google/subcommands"
	"github.com/moat-sandbox/moat/runsc/boot"
	"github.com/moat-sandbox/moat/runsc/internal/hugeheap"
	"github.com/moat-sandbox/moat/runsc/sandbox"
)

// Do is `runsc do`: run a command in a throwaway sandbox without a bundle.
type Do struct {
	rootfs       string
	cwd          string
	env          envList
	userns       bool
	selfTestOpen bool
	readOnly     bool
	volumes      volumeFlag
}

// volumeFlag collects --volume HOST:CONTAINER[:ro|:rw] as bind mounts.
type volumeFlag []boot.SpecMount

func (v *volumeFlag) String() string {
	var parts []string
	for _, m := range *v {
		parts = append(parts, m.Source+":"+m.Destination)
	}
	return strings.Join(parts, " ")
}

func (v *volumeFlag) Set(s string) error {
	m, err := parseVolume(s)
	if err != nil {
		return err
	}
	*v = append(*v, m)
	return nil
}

// parseVolume reads HOST:CONTAINER[:ro|:rw]: HOST is made absolute (it
// is the caller's path), CONTAINER must be absolute.
func parseVolume(s string) (boot.SpecMount, error) {
	parts := strings.Split(s, ":")
	ro := false
	if len(parts) == 3 {
		switch parts[2] {
		case "ro":
			ro = true
		case "rw":
		default:
			return boot.SpecMount{}, fmt.Errorf("volume %q: mode %q is neither ro nor rw", s, parts[2])
		}
		parts = parts[:2]
	}
	if len(parts) != 2 || parts[0] == "" || !strings.HasPrefix(parts[1], "/") {
		return boot.SpecMount{}, fmt.Errorf("volume %q is not of the form HOST:/CONTAINER[:ro]", s)
	}
	src, err := filepath.Abs(parts[0])
	if err != nil {
		return boot.SpecMount{}, fmt.Errorf("volume %q: %w", s, err)
	}
	return boot.Volume(src, parts[1], ro), nil
}

// Name implements subcommands.Command.
func (*Do) Name() string { return "do" }

// Synopsis implements subcommands.Command.
func (*Do) Synopsis() string { return "run a command in a new sandbox, without a bundle" }

// Usage implements subcommands.Command.
func (*Do) Usage() string {
	return `do [flags] [--] CMD [ARG...]

Runs CMD in a new sandbox whose root is a host directory (default "/"),
served read-only by a gofer under a memory-backed overlay: CMD may change
files, and the changes vanish with the sandbox (--overlay=none writes
through to the host directory; --read-only refuses changes). CMD is looked up in the sandbox's PATH
(default ` + sandbox.DefaultPath + `). Exits with CMD's
status (128+N if signal N killed it), or 125 if runsc itself fails.
SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 sent to runsc are
passed on to CMD. --volume HOST:CONTAINER[:ro] mounts a host file or
directory at CONTAINER, outside the overlay: changes reach the host
(or fail with EROFS when :ro).

`
}

// SetFlags implements subcommands.Command.
func (d *Do) SetFlags(f *flag.FlagSet) {
	f.StringVar(&d.rootfs, "rootfs", "/", "host directory to use as the sandbox's root")
	f.BoolVar(&d.readOnly, "read-only", false, "mount the root read-only (changes fail with EROFS) instead of under an overlay")
	f.StringVar(&d.cwd, "cwd", "/", "working directory of CMD inside the sandbox")
	f.Var(&d.env, "env", "NAME=VALUE to add to CMD's environment (repeatable)")
	f.BoolVar(&d.userns, "userns", true, "run the sandbox process in a user namespace of its own")
	f.Var(&d.volumes, "volume", "HOST:CONTAINER[:ro] bind mount of a host file or directory (repeatable)")
	f.BoolVar(&d.selfTestOpen, "self-test-open", false, "internal: have the Sentry open a host file once confined (it must be killed)")
}

// Execute implements subcommands.Command.
func (d *Do) Execute(ctx context.Context, f *flag.FlagSet, args ...any) subcommands.ExitStatus {
	conf, log := Globals(args)
	if f.NArg() == 0 {
		f.Usage()
		return subcommands.ExitUsageError
	}
	// Starting the sandbox grows runsc do's heap past the 2 MiB that
	// every runsc process's start has on huge pages.
	hugeheap.Advise()
	status, err := sandbox.Do(ctx, sandbox.Options{
		Config:       conf,
		Rootfs:       d.rootfs,
		Cwd:          d.cwd,
		Env:          d.env,
		Argv:         f.Args(),
		NoUserNS:     !d.userns,
		SelfTestOpen: d.selfTestOpen,
		ReadOnlyRoot: d.readOnly,
		Mounts:       d.volumes,
		Log:          log,
		// runsc exits right after: the sandbox's teardown need not
		// be waited for.
		Detach: true,
	})
	if err != nil {
		return fail(conf, log, "do", err)
	}
	return subcommands.ExitStatus(status)
}
