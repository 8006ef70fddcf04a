package boot

import (
	"fmt"
	"log/slog"
	"sort"

	"github.com/moat-sandbox/moat/sentry/fs/proc"
	"github.com/moat-sandbox/moat/sentry/kernel"
)

// KernelSettings are the settings of an OCI spec a runtime makes in the
// container's kernel before init runs: here the Sentry's, as /proc shows
// them. They ride in Process, beside its seccomp profile; an exec'd
// process takes only OOMScoreAdj (the container's, set by runsc).
type KernelSettings struct {
	// OOMScoreAdj is process.oomScoreAdj: init's /proc/self/oom_score_adj
	// and the floor an unprivileged write cannot go below, as runc's
	// privileged write leaves them.
	OOMScoreAdj *int `json:"oomScoreAdj,omitempty"`
	// Sysctl is linux.sysctl, each key one proc.CheckSysctl accepts:
	// the UTS names go to the kernel's UTS namespace, the others to
	// proc.Settings.
	Sysctl map[string]string `json:"sysctl,omitempty"`
	// UIDMappings and GIDMappings are the user namespace's id maps
	// (linux.uidMappings, gidMappings), shown in /proc/[pid]/uid_map
	// and gid_map.
	UIDMappings []proc.IDMap `json:"uidMappings,omitempty"`
	GIDMappings []proc.IDMap `json:"gidMappings,omitempty"`
}

// applyExecSettings gives a process exec starts (its leader, t), or init,
// the container's oom_score_adj; the other settings are the kernel's, made
// once for init (applySettings).
func applyExecSettings(t *kernel.Task, s *KernelSettings) error {
	if s == nil || s.OOMScoreAdj == nil {
		return nil
	}
	if err := t.ThreadGroup().SetOOMScoreAdj(int32(*s.OOMScoreAdj)); err != nil {
		return fmt.Errorf("process.oomScoreAdj: %w", err)
	}
	return nil
}

// applySettings makes s's settings in k for its init, init.
func applySettings(k *kernel.Kernel, init *kernel.Task, s *KernelSettings, log *slog.Logger) error {
	if s == nil {
		return nil
	}
	if err := applyExecSettings(init, s); err != nil {
		return err
	}
	keys := make([]string, 0, len(s.Sysctl))
	for key := range s.Sysctl {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		v := s.Sysctl[key]
		if err := proc.CheckSysctl(key, v); err != nil {
			return fmt.Errorf("linux.sysctl: %w", err)
		}
		switch key {
		case "kernel.domainname":
			k.SetDomainname(v)
		case "kernel.hostname":
			k.SetHostname(v)
		default:
			if err := k.Settings().SetSysctl(key, v); err != nil {
				return fmt.Errorf("linux.sysctl: %q = %q: %w", key, v, err)
			}
		}
		log.Debug("sysctl set", "key", key, "value", v)
	}
	if len(s.UIDMappings)+len(s.GIDMappings) > 0 {
		k.Settings().SetIDMaps(s.UIDMappings, s.GIDMappings)
	}
	return nil
}
