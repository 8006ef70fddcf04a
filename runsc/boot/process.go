package boot

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/opencontainers/runtime-spec/specs-go"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// Process is the identity and limits of the init process, taken from an
// OCI spec's process section by runsc/specutils. It travels from runsc
// create to the sandbox process as JSON (see Spec). The zero value is root
// with every capability and the default limits.
type Process struct {
	UID            uint32   `json:"uid"`
	GID            uint32   `json:"gid"`
	AdditionalGIDs []uint32 `json:"additionalGids,omitempty"`
	// Umask, when set, replaces the default 022.
	Umask *uint32 `json:"umask,omitempty"`
	// Capabilities, when set, are the five capability sets; nil means
	// every capability in the permitted, effective and bounding sets, as
	// root has.
	Capabilities *Capabilities `json:"capabilities,omitempty"`
	// Rlimits replace the default limits they name.
	Rlimits         []Rlimit `json:"rlimits,omitempty"`
	NoNewPrivileges bool     `json:"noNewPrivileges,omitempty"`
	// Seccomp is the spec's linux.seccomp, installed on init before it
	// runs (seccomp.go). Processes started by exec get init's instead,
	// as in runc; an ExecSpec's is ignored.
	Seccomp *specs.LinuxSeccomp `json:"seccomp,omitempty"`
	// Settings are what the runtime sets in the kernel for init
	// (settings.go); of an ExecSpec's, only OOMScoreAdj is used.
	Settings *KernelSettings `json:"settings,omitempty"`
	// Terminal is the spec's process.terminal: init's stdio is a
	// pseudo-terminal of the Sentry relayed to the host descriptors it
	// was given (tty.go). ExecSpec.Terminal says so for exec.
	Terminal bool `json:"terminal,omitempty"`
}

// Capabilities are capability numbers (CAP_*) per set.
type Capabilities struct {
	Bounding    []uint `json:"bounding,omitempty"`
	Effective   []uint `json:"effective,omitempty"`
	Inheritable []uint `json:"inheritable,omitempty"`
	Permitted   []uint `json:"permitted,omitempty"`
	Ambient     []uint `json:"ambient,omitempty"`
}

// Rlimit is one resource limit; Resource is a RLIMIT_* number.
type Rlimit struct {
	Resource int    `json:"resource"`
	Soft     uint64 `json:"soft"`
	Hard     uint64 `json:"hard"`
}

// Spec is everything `runsc boot` needs to start a container's init that
// does not fit its flags: the command and the process settings. runsc
// create writes it as JSON to a pipe the sandbox reads at start.
type Spec struct {
	Argv     []string `json:"argv"`
	Env      []string `json:"env,omitempty"`
	Cwd      string   `json:"cwd,omitempty"`
	Hostname string   `json:"hostname,omitempty"`
	// Domainname is the UTS domain name (the spec's domainname).
	Domainname string  `json:"domainname,omitempty"`
	Process    Process `json:"process"`
	// ReadOnlyRoot is the spec's root.readonly: the root is mounted
	// read-only instead of under the memory-backed overlay.
	ReadOnlyRoot bool `json:"readOnlyRoot,omitempty"`
	// Mounts, MaskedPaths and ReadonlyPaths are the spec's, applied
	// inside the sandbox at boot (see specmounts.go).
	Mounts        []SpecMount `json:"mounts,omitempty"`
	MaskedPaths   []string    `json:"maskedPaths,omitempty"`
	ReadonlyPaths []string    `json:"readonlyPaths,omitempty"`
	// Devices are the spec's linux.devices, made as nodes at boot.
	Devices []SpecDevice `json:"devices,omitempty"`
}

func capSet(caps []uint) (auth.CapSet, error) {
	var s auth.CapSet
	for _, c := range caps {
		if c > unix.CAP_LAST_CAP {
			return 0, fmt.Errorf("unknown capability number %d", c)
		}
		s |= 1 << c
	}
	return s, nil
}

// credentials returns init's credentials and limits.
func (p *Process) credentials() (*auth.Credentials, *kernel.Limits, error) {
	c := auth.NewRootCredentials()
	c.RealUID, c.EffectiveUID, c.SavedUID, c.FilesystemUID = auth.KUID(p.UID), auth.KUID(p.UID), auth.KUID(p.UID), auth.KUID(p.UID)
	c.RealGID, c.EffectiveGID, c.SavedGID, c.FilesystemGID = auth.KGID(p.GID), auth.KGID(p.GID), auth.KGID(p.GID), auth.KGID(p.GID)
	for _, g := range p.AdditionalGIDs {
		c.ExtraGIDs = append(c.ExtraGIDs, auth.KGID(g))
	}
	if p.Capabilities != nil {
		sets := []struct {
			dst *auth.CapSet
			src []uint
		}{
			{&c.BoundingCaps, p.Capabilities.Bounding},
			{&c.EffectiveCaps, p.Capabilities.Effective},
			{&c.InheritableCaps, p.Capabilities.Inheritable},
			{&c.PermittedCaps, p.Capabilities.Permitted},
			{&c.AmbientCaps, p.Capabilities.Ambient},
		}
		for _, s := range sets {
			v, err := capSet(s.src)
			if err != nil {
				return nil, nil, err
			}
			*s.dst = v
		}
	} else if p.UID != 0 {
		// As execve gives a non-root user: nothing effective or
		// permitted, the bounding set kept.
		c.PermittedCaps, c.EffectiveCaps = 0, 0
	}
	limits := kernel.DefaultLimits()
	for _, r := range p.Rlimits {
		if r.Resource < 0 || r.Resource > unix.RLIMIT_RTTIME {
			return nil, nil, fmt.Errorf("unknown rlimit resource %d", r.Resource)
		}
		if _, err := limits.Set(r.Resource, kernel.Limit{Cur: r.Soft, Max: r.Hard}, true); err != nil {
			return nil, nil, fmt.Errorf("rlimit %d (soft %d, hard %d): %w", r.Resource, r.Soft, r.Hard, err)
		}
	}
	return c, limits, nil
}

// processOptions resolves what a new process of the sandbox needs from its
// argv, environment, working directory and settings: the executable found
// along PATH (defaultPath when env has none), HOME from the root's
// /etc/passwd when env has none (as runc does), the working directory under
// root, credentials, limits and umask. The caller adds the descriptor
// table. A command that cannot be found is an *ExecError with status 127.
func processOptions(root fs.VirtualDentry, argv, env []string, cwdPath string, p Process) (kernel.InitOptions, error) {
	if !hasVar(env, "PATH") {
		env = append(env, "PATH="+defaultPath)
	}
	ctx := kernel.Background()
	cwd := root
	if cwdPath != "" && cwdPath != "/" {
		var err error
		cwd, err = fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: cwdPath, FollowFinal: true})
		if err != nil {
			return kernel.InitOptions{}, fmt.Errorf("working directory %q: %w", cwdPath, err)
		}
	}
	if !hasVar(env, "HOME") {
		env = append(env, "HOME="+homeDir(ctx, root, p.UID))
	}
	exe, err := lookPath(ctx, root, cwd, argv[0], env)
	if err != nil {
		return kernel.InitOptions{}, &ExecError{Status: 127, Err: err}
	}
	creds, limits, err := p.credentials()
	if err != nil {
		return kernel.InitOptions{}, err
	}
	umask := uint32(0o022)
	if p.Umask != nil {
		umask = *p.Umask & 0o777
	}
	return kernel.InitOptions{
		Path:   exe,
		Argv:   argv,
		Envv:   env,
		Root:   root,
		Cwd:    cwd,
		Umask:  umask,
		Creds:  creds,
		Limits: limits,
	}, nil
}

// execError reports a command that could not be executed as a shell
// does: 127 when it is missing, 126 when it cannot run.
func execError(err error) error {
	switch {
	case errors.Is(err, unix.ENOENT):
		return &ExecError{Status: 127, Err: err}
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.ENOEXEC), errors.Is(err, unix.EISDIR):
		return &ExecError{Status: 126, Err: err}
	}
	return err
}
