package kernel

import (
	"fmt"

	"github.com/moat-sandbox/moat/sentry/fs/proc"
)

// Settings returns what the container runtime set in the kernel and /proc
// shows: the settable sysctls and the user namespace's id maps.
func (k *Kernel) Settings() *proc.Settings { return &k.settings }

// Settings implements proc.SettingsKernel.
func (p ProcKernel) Settings() *proc.Settings { return p.K.Settings() }

// Settings implements proc.SettingsTask.
func (p procTask) Settings() *proc.Settings { return p.tg.k.Settings() }

var (
	_ proc.SettingsKernel = ProcKernel{}
	_ proc.SettingsTask   = procTask{}
)

// SetOOMScoreAdj sets the process's oom_score_adj and the floor below
// which an unprivileged write may not take it, as a runtime with
// CAP_SYS_RESOURCE writing /proc/[pid]/oom_score_adj before the container
// runs does (an OCI spec's process.oomScoreAdj).
func (tg *ThreadGroup) SetOOMScoreAdj(v int32) error {
	if v < -1000 || v > 1000 {
		return fmt.Errorf("oom_score_adj %d is outside [-1000, 1000]", v)
	}
	tg.procAttrs.oomScoreAdj.Store(v)
	tg.procAttrs.oomScoreAdjMin.Store(v)
	return nil
}
