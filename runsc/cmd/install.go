package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/google/subcommands"
)

// This file holds `runsc install` and `runsc uninstall`, which register
// runsc as a runtime in Docker's daemon.json (or remove it).

// DefaultDockerConfig is the daemon.json dockerd reads by default.
const DefaultDockerConfig = "/etc/docker/daemon.json"

// Install is `runsc install`: registers runsc in Docker's daemon.json.
type Install struct {
	configFile string
	runtime    string
	uninstall  bool
	path       string
	clobber    bool
}

// Name implements subcommands.Command.
func (*Install) Name() string { return "install" }

// Synopsis implements subcommands.Command.
func (*Install) Synopsis() string { return "register runsc as a Docker runtime in daemon.json" }

// Usage implements subcommands.Command.
func (*Install) Usage() string {
	return `install [--config_file FILE] [--runtime NAME] [--uninstall] [-- RUNTIME_ARGS...]

Adds a runtime entry to Docker's daemon.json (default ` + DefaultDockerConfig + `):
  "runtimes": {"NAME": {"path": "/abs/path/of/runsc", "runtimeArgs": [...]}}
Arguments after -- become the runtime's runtimeArgs, the global flags Docker
passes to every runsc call (for example --network=none or --debug-log=DIR/).
The file's other keys are kept. Restart dockerd for the change to apply.
With --uninstall, the entry is removed instead.

`
}

// SetFlags implements subcommands.Command.
func (i *Install) SetFlags(f *flag.FlagSet) {
	f.StringVar(&i.configFile, "config_file", DefaultDockerConfig, "path to Docker's daemon.json")
	f.StringVar(&i.runtime, "runtime", "runsc", "the runtime name Docker knows runsc by (docker run --runtime=NAME)")
	f.BoolVar(&i.uninstall, "uninstall", false, "remove the runtime entry instead of adding it")
	f.StringVar(&i.path, "path", "", "the runsc binary the entry names (default: this one)")
	f.BoolVar(&i.clobber, "clobber", true, "replace an existing entry of the same name")
}

// Execute implements subcommands.Command.
func (i *Install) Execute(_ context.Context, f *flag.FlagSet, args ...any) subcommands.ExitStatus {
	conf, log := Globals(args)
	if i.uninstall {
		if f.NArg() != 0 {
			fmt.Fprintf(os.Stderr, "runsc install: --uninstall takes no runtime arguments\n")
			return subcommands.ExitUsageError
		}
		if err := UninstallRuntime(i.configFile, i.runtime); err != nil {
			return ociFail(conf, log, "install", err)
		}
		fmt.Fprintf(os.Stderr, "runtime %q removed from %s; restart dockerd to apply\n", i.runtime, i.configFile)
		return subcommands.ExitSuccess
	}
	path := i.path
	if path == "" {
		exe, err := os.Executable()
		if err != nil {
			return ociFail(conf, log, "install", fmt.Errorf("finding runsc's own path: %w", err))
		}
		path = exe
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return ociFail(conf, log, "install", fmt.Errorf("runsc path %q: %w", path, err))
	}
	rt := DockerRuntime{Path: abs, RuntimeArgs: f.Args()}
	if err := InstallRuntime(i.configFile, i.runtime, rt, i.clobber); err != nil {
		return ociFail(conf, log, "install", err)
	}
	fmt.Fprintf(os.Stderr, "runtime %q (%s) added to %s; restart dockerd to apply\n", i.runtime, abs, i.configFile)
	return subcommands.ExitSuccess
}

// Uninstall is `runsc uninstall`: the same as `runsc install --uninstall`.
type Uninstall struct {
	configFile string
	runtime    string
}

// Name implements subcommands.Command.
func (*Uninstall) Name() string { return "uninstall" }

// Synopsis implements subcommands.Command.
func (*Uninstall) Synopsis() string { return "remove runsc's runtime entry from Docker's daemon.json" }

// Usage implements subcommands.Command.
func (*Uninstall) Usage() string {
	return "uninstall [--config_file FILE] [--runtime NAME]\n\nRemoves the runtime entry NAME (default runsc) from daemon.json, keeping the\nfile's other keys. Restart dockerd for the change to apply.\n\n"
}

// SetFlags implements subcommands.Command.
func (u *Uninstall) SetFlags(f *flag.FlagSet) {
	f.StringVar(&u.configFile, "config_file", DefaultDockerConfig, "path to Docker's daemon.json")
	f.StringVar(&u.runtime, "runtime", "runsc", "the runtime name to remove")
}

// Execute implements subcommands.Command.
func (u *Uninstall) Execute(_ context.Context, f *flag.FlagSet, args ...any) subcommands.ExitStatus {
	conf, log := Globals(args)
	if f.NArg() != 0 {
		f.Usage()
		return subcommands.ExitUsageError
	}
	if err := UninstallRuntime(u.configFile, u.runtime); err != nil {
		return ociFail(conf, log, "uninstall", err)
	}
	fmt.Fprintf(os.Stderr, "runtime %q removed from %s; restart dockerd to apply\n", u.runtime, u.configFile)
	return subcommands.ExitSuccess
}

// DockerRuntime is one entry of daemon.json's "runtimes" object.
type DockerRuntime struct {
	Path        string   `json:"path"`
	RuntimeArgs []string `json:"runtimeArgs,omitempty"`
}

// InstallRuntime adds runtime name, rt, to the daemon.json at file,
// creating the file (and its directory) if missing and keeping every other
// key. An existing entry of that name is replaced when clobber is set and
// is an error otherwise.
func InstallRuntime(file, name string, rt DockerRuntime, clobber bool) error {
	if name == "" {
		return errors.New("runtime name is empty")
	}
	if rt.Path == "" {
		return errors.New("runtime path is empty")
	}
	c, mode, err := readDaemonJSON(file)
	if err != nil {
		return err
	}
	if c == nil {
		c = map[string]json.RawMessage{}
	}
	runtimes, err := runtimesOf(c, file)
	if err != nil {
		return err
	}
	if _, ok := runtimes[name]; ok && !clobber {
		return fmt.Errorf("runtime %q already exists in %s", name, file)
	}
	b, err := json.Marshal(rt)
	if err != nil {
		return err
	}
	runtimes[name] = b
	if c["runtimes"], err = json.Marshal(runtimes); err != nil {
		return err
	}
	return writeDaemonJSON(file, c, mode)
}

// UninstallRuntime removes runtime name from the daemon.json at file,
// keeping every other key; the "runtimes" object goes when it empties. A
// missing file or entry is an error, as there is nothing to remove.
func UninstallRuntime(file, name string) error {
	c, mode, err := readDaemonJSON(file)
	if err != nil {
		return err
	}
	if c == nil {
		return fmt.Errorf("runtime %q not found: %s does not exist", name, file)
	}
	runtimes, err := runtimesOf(c, file)
	if err != nil {
		return err
	}
	if _, ok := runtimes[name]; !ok {
		return fmt.Errorf("runtime %q not found in %s", name, file)
	}
	delete(runtimes, name)
	if len(runtimes) == 0 {
		delete(c, "runtimes")
	} else if c["runtimes"], err = json.Marshal(runtimes); err != nil {
		return err
	}
	return writeDaemonJSON(file, c, mode)
}

// readDaemonJSON reads the daemon.json at file as a map of raw values, so
// keys runsc does not know survive untouched. A missing or empty file
// gives a nil map; mode is the file's permissions (0644 for a new file).
func readDaemonJSON(file string) (map[string]json.RawMessage, fs.FileMode, error) {
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0o644, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("reading Docker config: %w", err)
	}
	mode := fs.FileMode(0o644)
	if st, err := os.Stat(file); err == nil {
		mode = st.Mode().Perm()
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, mode, nil
	}
	var c map[string]json.RawMessage
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, 0, fmt.Errorf("parsing Docker config %s: %w", file, err)
	}
	if c == nil { // the file says "null"
		return nil, 0, fmt.Errorf("parsing Docker config %s: not a JSON object", file)
	}
	return c, mode, nil
}

// runtimesOf returns c's "runtimes" object, each entry raw; an empty map
// when c has none.
func runtimesOf(c map[string]json.RawMessage, file string) (map[string]json.RawMessage, error) {
	runtimes := map[string]json.RawMessage{}
	raw, ok := c["runtimes"]
	if !ok || string(bytes.TrimSpace(raw)) == "null" {
		return runtimes, nil
	}
	if err := json.Unmarshal(raw, &runtimes); err != nil {
		return nil, fmt.Errorf("parsing Docker config %s: \"runtimes\" is not an object: %w", file, err)
	}
	return runtimes, nil
}

// writeDaemonJSON writes c to file, indented, through a temporary file
// renamed over it so a reader never sees half a file.
func writeDaemonJSON(file string, c map[string]json.RawMessage, mode fs.FileMode) error {
	b, err := json.MarshalIndent(c, "", "    ")
	if err != nil {
		return fmt.Errorf("encoding Docker config: %w", err)
	}
	b = append(b, '\n')
	// A daemon.json that is a symlink (to a configuration-managed file,
	// say) stays one: the target is replaced.
	if target, err := filepath.EvalSymlinks(file); err == nil {
		file = target
	}
	dir := filepath.Dir(file)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating Docker config directory: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(file)+".tmp*")
	if err != nil {
		return fmt.Errorf("writing Docker config: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("writing Docker config: %w", err)
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("writing Docker config: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing Docker config: %w", err)
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return fmt.Errorf("writing Docker config: %w", err)
	}
	return nil
}
