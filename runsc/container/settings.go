package container

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/moat-sandbox/moat/runsc/boot"
	"github.com/moat-sandbox/moat/runsc/sandbox"
	"github.com/moat-sandbox/moat/runsc/specutils"
	sentryproc "github.com/moat-sandbox/moat/sentry/fs/proc"
)

// kernelSettings returns the settings the sandbox makes in its kernel
// for a validated spec (boot.KernelSettings), nil if there are none. A
// sysctl the Sentry does not model is an error naming it.
func kernelSettings(spec *specs.Spec) (*boot.KernelSettings, error) {
	var ks boot.KernelSettings
	any := false
	if p := spec.Process; p != nil && p.OOMScoreAdj != nil {
		v := *p.OOMScoreAdj
		ks.OOMScoreAdj = &v
		any = true
	}
	if l := spec.Linux; l != nil {
		for k, v := range l.Sysctl {
			if err := sentryproc.CheckSysctl(k, v); err != nil {
				return nil, fmt.Errorf("linux.sysctl: %w", err)
			}
		}
		if len(l.Sysctl) > 0 {
			ks.Sysctl = l.Sysctl
			any = true
		}
		if specutils.HasNamespace(spec, specs.UserNamespace) {
			ks.UIDMappings = idMaps(l.UIDMappings)
			ks.GIDMappings = idMaps(l.GIDMappings)
			any = any || len(ks.UIDMappings)+len(ks.GIDMappings) > 0
		}
	}
	if !any {
		return nil, nil
	}
	return &ks, nil
}

func idMaps(m []specs.LinuxIDMapping) []sentryproc.IDMap {
	var out []sentryproc.IDMap
	for _, e := range m {
		out = append(out, sentryproc.IDMap{ContainerID: e.ContainerID, HostID: e.HostID, Size: e.Size})
	}
	return out
}

// setOOMScoreAdj gives the sandbox and gofer processes (pids) the spec's
// oom_score_adj, so the host's OOM killer weighs the container's
// processes as the spec says. As with runc, which writes it from the
// container's first process, lowering it takes CAP_SYS_RESOURCE, and
// failing to is an error.
func setOOMScoreAdj(spec *specs.Spec, pids ...int) error {
	if spec.Process == nil || spec.Process.OOMScoreAdj == nil {
		return nil
	}
	v := strconv.Itoa(*spec.Process.OOMScoreAdj)
	for _, pid := range pids {
		path := fmt.Sprintf("/proc/%d/oom_score_adj", pid)
		if cur, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(cur)) == v {
			continue
		}
		if err := os.WriteFile(path, []byte(v), 0); err != nil {
			return fmt.Errorf("failed to update %s: %w", path, unwrapPathError(err))
		}
	}
	return nil
}

// unwrapPathError returns the errno of a *os.PathError, so an error
// reads as runc's ("... oom_score_adj: permission denied").
func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// hostNamespaceOptions sets what of the spec's namespaces the sandbox
// process takes on the host: the network namespace a path names, which it
// joins, and, when the spec asks for a user namespace with maps that give
// the container a root, those maps for the sandbox's user namespace. The
// other namespaces are always the sandbox's own.
func hostNamespaceOptions(spec *specs.Spec, o *sandbox.CreateOptions) {
	if spec.Linux == nil {
		return
	}
	for _, ns := range spec.Linux.Namespaces {
		if ns.Type == specs.NetworkNamespace && ns.Path != "" {
			o.NetNSPath = ns.Path
		}
	}
	if !specutils.HasNamespace(spec, specs.UserNamespace) || !mapsRoot(spec.Linux.UIDMappings) || !mapsRoot(spec.Linux.GIDMappings) {
		return
	}
	o.UIDMappings = sysProcIDMaps(spec.Linux.UIDMappings)
	o.GIDMappings = sysProcIDMaps(spec.Linux.GIDMappings)
}

// mapsRoot reports whether m maps id 0.
func mapsRoot(m []specs.LinuxIDMapping) bool {
	for _, e := range m {
		if e.ContainerID == 0 && e.Size > 0 {
			return true
		}
	}
	return false
}

func sysProcIDMaps(m []specs.LinuxIDMapping) []syscall.SysProcIDMap {
	out := make([]syscall.SysProcIDMap, 0, len(m))
	for _, e := range m {
		out = append(out, syscall.SysProcIDMap{ContainerID: int(e.ContainerID), HostID: int(e.HostID), Size: int(e.Size)})
	}
	return out
}
