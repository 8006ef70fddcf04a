package proc

import (
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/synth"
)

// SysVIPC is implemented by kernels whose /proc/sysvipc lists System V
// IPC objects.
type SysVIPC interface {
	// SysVIPCText returns /proc/sysvipc/<facility> ("msg", "sem", "shm") for
	// the IPC namespace of ctx, the task reading.
	SysVIPCText(ctx fs.Context, facility string) string
}

// sysvipcDir is /proc/sysvipc, empty when s does not implement SysVIPC.
func sysvipcDir(s System) fs.Node {
	entries := map[string]fs.Node{}
	if v, ok := s.(SysVIPC); ok {
		for _, name := range []string{"msg", "sem", "shm"} {
			entries[name] = synth.NewGenFile(0o444, func(ctx fs.Context) ([]byte, error) {
				return []byte(v.SysVIPCText(ctx, name)), nil
			})
		}
	}
	return synth.NewDir(0o555, entries)
}
