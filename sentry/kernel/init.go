package kernel

import (
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// InitOptions describe the sandbox's first process.
type InitOptions struct {
	// Path is resolved from Cwd within the root.
	Path       string
	Argv, Envv []string
	Root, Cwd  fs.VirtualDentry
	Umask      uint32
	FDTable    *fs.FDTable
	Creds      *auth.Credentials
	Limits     *Limits
}

// CreateInit loads the first process, PID 1, without running it. Start
// runs it.
func (k *Kernel) CreateInit(o InitOptions) (*Task, error) {
	return k.newProcess(o, true)
}
