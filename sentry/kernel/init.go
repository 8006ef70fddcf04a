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

	// For CreateProcess only: NewPIDNamespace makes the process the init
	// (pid 1) of a new PID namespace, child of the root one, as a
	// sub-container's first process; otherwise PIDNamespace, if set,
	// is the namespace it joins (an exec into a sub-container), whose
	// init must still live. UTSNamespace and IPCNamespace, if set, are
	// the namespaces it gets instead of the root ones.
	NewPIDNamespace bool
	PIDNamespace    *PIDNamespace
	UTSNamespace    *UTSNamespace
	IPCNamespace    *IPCNamespace
}

// CreateInit loads the first process, PID 1, without running it. Start
// runs it.
func (k *Kernel) CreateInit(o InitOptions) (*Task, error) {
	return k.newProcess(o, true)
}
