// Package config holds runsc's global configuration: the flags given
// before the subcommand (runc-compatible ones such as --root, --log,
// --log-format, --debug, --systemd-cgroup, and Moat's own), their
// validation, their serialisation into flags for the child processes
// runsc starts (gofer, boot), and the logger they select.
package config

import (
	"flag"
	"fmt"
	"sort"

	"github.com/moat-sandbox/moat/runsc/isolate"
)

// Config is the parsed global configuration. Its zero value is not the
// default: use Default or RegisterFlags.
type Config struct {
	// RootDir is where container state lives (--root).
	RootDir string
	// LogFile receives runsc's log when set (--log); appended to.
	LogFile string
	// LogFormat is "text" or "json" (--log-format).
	LogFormat string
	// Debug enables debug-level logging (--debug).
	Debug bool
	// DebugLog is a directory where each runsc process writes
	// runsc.<pid>.<command>.log (--debug-log).
	DebugLog string
	// Strace makes the Sentry log every application syscall (--strace).
	Strace bool
	// SystemdCgroup asks for systemd-managed cgroups (--systemd-cgroup);
	// accepted for runc compatibility.
	SystemdCgroup bool
	// Platform is how the Sentry traps application syscalls (--platform):
	// "systrap" (the default) or "ptrace".
	Platform string
	// Network is the sandbox's network mode (--network); only "none" is
	// supported yet.
	Network string
	// Overlay says what lies over the container's root (--overlay):
	// OverlayDefault and OverlayMemory put a memory-backed overlay over
	// it, so the root is writable and the host's files stay unchanged;
	// OverlayNone serves the root read-write, so the sandbox's changes
	// reach the host directory.
	Overlay Overlay
	// HostUDS says which unix sockets on host paths (of bind mounts, of
	// the root with --overlay=none, and for connect the overlay root's
	// lower layer) the sandbox may use (--host-uds):
	// HostUDSNone (the default), HostUDSOpen (connect to host sockets),
	// HostUDSCreate (bind sockets that host processes connect to) or
	// HostUDSAll, as gVisor's runsc names them.
	HostUDS HostUDS
	// SeccompDebug replaces the kill of unlisted syscalls in runsc's own
	// seccomp filters by "trap" or "log", to discover missing entries
	// (--seccomp-debug, hidden; never for real workloads).
	SeccompDebug string
}

// Overlay is the value of --overlay.
type Overlay string

// Overlay values.
const (
	OverlayDefault Overlay = ""       // no flag: as OverlayMemory
	OverlayMemory  Overlay = "memory" // --overlay, --overlay=memory, --overlay=true
	OverlayNone    Overlay = "none"   // --overlay=none: the root is writable
)

// String implements flag.Value.
func (o *Overlay) String() string { return string(*o) }

// Set implements flag.Value. "true" (a bare --overlay) means memory and
// "false" the default, as for the boolean flag --overlay once was.
func (o *Overlay) Set(v string) error {
	switch v {
	case "memory", "true":
		*o = OverlayMemory
	case "none":
		*o = OverlayNone
	case "false", "":
		*o = OverlayDefault
	default:
		return fmt.Errorf("invalid overlay %q: want memory or none", v)
	}
	return nil
}

// IsBoolFlag lets --overlay stand alone, as runc callers pass it.
func (o *Overlay) IsBoolFlag() bool { return true }

// HostUDS is the value of --host-uds.
type HostUDS string

// HostUDS values.
const (
	HostUDSNone   HostUDS = "" // shown and given as "none"
	HostUDSOpen   HostUDS = "open"
	HostUDSCreate HostUDS = "create"
	HostUDSAll    HostUDS = "all"
)

// String implements flag.Value.
func (h *HostUDS) String() string {
	if *h == HostUDSNone {
		return "none"
	}
	return string(*h)
}

// Set implements flag.Value.
func (h *HostUDS) Set(v string) error {
	if v == "none" {
		v = ""
	}
	switch HostUDS(v) {
	case HostUDSNone, HostUDSOpen, HostUDSCreate, HostUDSAll:
		*h = HostUDS(v)
		return nil
	}
	return fmt.Errorf("invalid host-uds %q: want none, open, create or all", v)
}

// AllowOpen reports whether sandbox sockets may connect to host sockets.
func (h HostUDS) AllowOpen() bool { return h == HostUDSOpen || h == HostUDSAll }

// AllowCreate reports whether bind(2) makes host sockets.
func (h HostUDS) AllowCreate() bool { return h == HostUDSCreate || h == HostUDSAll }

// WritableRoot reports whether the container's root is served
// read-write, so that its changes reach the host.
func (c *Config) WritableRoot() bool { return c.Overlay == OverlayNone }

// Default returns the configuration used when no flag is given.
func Default() *Config {
	return &Config{
		RootDir:   "/run/runsc",
		LogFormat: "text",
		Platform:  "systrap",
		Network:   "none",
	}
}

// hidden flags are left out of the usage text: internal or debugging aids.
var hidden = map[string]bool{"seccomp-debug": true}

// Hidden reports whether the global flag name is internal and left out of
// help output.
func Hidden(name string) bool { return hidden[name] }

// RegisterFlags defines the global flags on fs, bound to c, with the
// defaults of Default.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	d := Default()
	fs.StringVar(&c.RootDir, "root", d.RootDir, "root directory for storage of container state")
	fs.StringVar(&c.LogFile, "log", d.LogFile, "file to write runsc's log to (default: stderr)")
	fs.StringVar(&c.LogFormat, "log-format", d.LogFormat, "log format: text or json")
	fs.BoolVar(&c.Debug, "debug", d.Debug, "enable debug logging")
	fs.StringVar(&c.DebugLog, "debug-log", d.DebugLog, "directory where each runsc process writes runsc.<pid>.<command>.log")
	fs.BoolVar(&c.Strace, "strace", d.Strace, "log every system call the sandboxed application makes")
	fs.BoolVar(&c.SystemdCgroup, "systemd-cgroup", d.SystemdCgroup, "use systemd to manage cgroups (accepted for runc compatibility)")
	fs.StringVar(&c.Platform, "platform", d.Platform, "how application system calls are trapped: systrap (seccomp traps into a stub signal handler, the default) or ptrace (PTRACE_SYSEMU)")
	fs.StringVar(&c.Network, "network", d.Network, "network mode: none (loopback only); sandbox and host are not supported yet")
	c.Overlay = d.Overlay
	fs.Var(&c.Overlay, "overlay", "what lies over the container's root: memory (the default, also --overlay alone: writes stay in the sandbox) or none (the root is writable and changes reach the host)")
	c.HostUDS = d.HostUDS
	fs.Var(&c.HostUDS, "host-uds", "unix sockets on host paths the sandbox may use: none, open (connect to host sockets), create (bind sockets host processes connect to) or all")
	fs.StringVar(&c.SeccompDebug, "seccomp-debug", d.SeccompDebug, "internal: trap or log instead of killing on syscalls runsc's own seccomp filters do not list")
}

// Validate checks values that flag parsing cannot.
func (c *Config) Validate() error {
	switch c.LogFormat {
	case "text", "json":
	default:
		return fmt.Errorf("invalid log format %q: want text or json", c.LogFormat)
	}
	if c.Platform != "ptrace" && c.Platform != "systrap" {
		return fmt.Errorf("unsupported platform %q: only ptrace and systrap are available", c.Platform)
	}
	switch c.Network {
	case "none":
	case "sandbox", "host":
		return fmt.Errorf("network mode %q is not supported yet: only --network=none is", c.Network)
	default:
		return fmt.Errorf("invalid network mode %q: only --network=none is supported yet", c.Network)
	}
	if c.RootDir == "" {
		return fmt.Errorf("--root must not be empty")
	}
	if _, err := isolate.ParseMode(c.SeccompDebug); err != nil {
		return err
	}
	return nil
}

// SeccompMode is the mode of runsc's own seccomp filters.
func (c *Config) SeccompMode() isolate.Mode {
	m, _ := isolate.ParseMode(c.SeccompDebug) // checked by Validate
	return m
}

// ToFlags returns c as global flags ("--name=value") for a child runsc
// process, listing only the flags whose value differs from the default, in
// a stable order. Parsing them with RegisterFlags gives back c.
func (c *Config) ToFlags() []string {
	cp := *c
	fs := flag.NewFlagSet("runsc", flag.ContinueOnError)
	cp.RegisterFlags(fs) // resets cp to the defaults...
	cp = *c              // ...so put the values back; fs is bound to cp
	var args []string
	fs.VisitAll(func(f *flag.Flag) {
		if v := f.Value.String(); v != f.DefValue {
			args = append(args, "--"+f.Name+"="+v)
		}
	})
	sort.Strings(args)
	return args
}
