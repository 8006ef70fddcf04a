package cmd

import (
	"context"
	"encoding/json"
	"flag"
	"os"

	"github.com/google/subcommands"
	"github.com/moat-sandbox/moat/runsc/boot"
	"github.com/moat-sandbox/moat/runsc/specutils"
	"github.com/opencontainers/runtime-spec/specs-go/features"
)

// Features is `runsc features`: what of the OCI spec runsc implements.
type Features struct{}

// Name implements subcommands.Command.
func (*Features) Name() string { return "features" }

// Synopsis implements subcommands.Command.
func (*Features) Synopsis() string { return "print the OCI features runsc supports, as JSON" }

// Usage implements subcommands.Command.
func (*Features) Usage() string {
	return "features\n\nPrints the OCI runtime features document: the spec versions,\nnamespaces, capabilities and hooks runsc accepts, cgroup v1 and v2, and the\nseccomp actions, operators and flags the Sentry enforces. AppArmor and SELinux\nare marked disabled: runsc does not apply them.\n\n"
}

// SetFlags implements subcommands.Command.
func (*Features) SetFlags(*flag.FlagSet) {}

// Execute implements subcommands.Command.
func (*Features) Execute(_ context.Context, f *flag.FlagSet, args ...any) subcommands.ExitStatus {
	conf, log := Globals(args)
	no, yes := false, true
	feat := features.Features{
		OCIVersionMin: "1.0.0",
		OCIVersionMax: "1.3.0",
		// All run on the host (createContainer and startContainer too:
		// the container's namespaces are the Sentry's).
		Hooks: []string{"prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop"},
		Linux: &features.Linux{
			// Accepted; the sandbox has its own of each whatever the
			// spec asks.
			Namespaces:   []string{"cgroup", "ipc", "mount", "network", "pid", "time", "user", "uts"},
			Capabilities: specutils.CapabilityNames(),
			// cgroupfs only: a systemd cgroupsPath names a directory,
			// no unit is asked of systemd.
			Cgroup: &features.Cgroup{V1: &yes, V2: &yes, Systemd: &no, SystemdUser: &no},
			// The Sentry runs the profile on every syscall itself.
			Seccomp: &features.Seccomp{
				Enabled:        &yes,
				Actions:        boot.SeccompActions,
				Operators:      boot.SeccompOperators,
				Archs:          boot.SeccompArchs,
				KnownFlags:     boot.SeccompFlags,
				SupportedFlags: boot.SeccompFlags,
			},
			Apparmor: &features.Apparmor{Enabled: &no},
			Selinux:  &features.Selinux{Enabled: &no},
		},
		Annotations: map[string]string{"dev.moat-sandbox.runsc.platform": conf.Platform},
	}
	b, err := json.MarshalIndent(&feat, "", "    ")
	if err != nil {
		return ociFail(conf, log, "features", err)
	}
	os.Stdout.Write(append(b, '\n'))
	return subcommands.ExitSuccess
}
