// Package specutils reads and validates OCI runtime specs (a bundle's
// config.json), names what Moat does not support in them, and makes the
// default spec `runsc spec` writes. Errors name the offending field, so a
// malformed bundle says what to fix.
//
// No locks: everything here is a function of its arguments.
package specutils

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// ConfigFile is the name of a bundle's spec.
const ConfigFile = "config.json"

// Supported OCI versions: 1.0.0 up to MaxMinor.x.
const (
	supportedMajor = 1
	maxMinor       = 3
)

// idChar reports whether c may appear in a container id: runc's pattern
// is ^[\w+\-.]+$ (checked by hand: importing regexp cost every runsc
// process its package initialisation, for this one use).
func idChar(c rune) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("_+-.", c)
}

// ValidateID checks a container id: not empty, letters, digits and
// "_+-." only, so that it names one directory under the state root.
func ValidateID(id string) error {
	switch {
	case id == "":
		return errors.New("container id cannot be empty")
	case id == "." || id == "..":
		return fmt.Errorf("invalid container id %q", id)
	case strings.Contains(id, "/"):
		return fmt.Errorf("invalid container id %q: it must not contain '/'", id)
	case len(id) > 1024:
		return fmt.Errorf("invalid container id %q: longer than 1024 bytes", id[:32]+"...")
	case strings.IndexFunc(id, func(c rune) bool { return !idChar(c) }) >= 0:
		return fmt.Errorf("invalid container id %q: only letters, digits and _+-. are allowed", id)
	}
	return nil
}

// ReadBundle reads and validates bundle/config.json. bundle must be a
// directory; it is returned made absolute.
func ReadBundle(bundle string) (*specs.Spec, string, error) {
	abs, err := filepath.Abs(bundle)
	if err != nil {
		return nil, "", fmt.Errorf("bundle %q: %w", bundle, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, "", fmt.Errorf("bundle: %w", err)
	}
	if !fi.IsDir() {
		return nil, "", fmt.Errorf("bundle %q is not a directory", abs)
	}
	b, err := os.ReadFile(filepath.Join(abs, ConfigFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, "", fmt.Errorf("bundle %q has no %s: run `runsc spec` to make one", abs, ConfigFile)
	}
	if err != nil {
		return nil, "", fmt.Errorf("reading %s: %w", ConfigFile, err)
	}
	spec, err := Parse(b)
	if err != nil {
		return nil, "", err
	}
	if err := Validate(spec, abs); err != nil {
		return nil, "", err
	}
	return spec, abs, nil
}

// Parse decodes a config.json's bytes. Unknown fields are allowed (the spec
// lets runtimes ignore them); a field of the wrong type is an error that
// names it.
func Parse(b []byte) (*specs.Spec, error) {
	var spec specs.Spec
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&spec); err != nil {
		var te *json.UnmarshalTypeError
		var se *json.SyntaxError
		switch {
		case errors.As(err, &te):
			return nil, fmt.Errorf("parsing %s: field %q: cannot use a JSON %s as %s", ConfigFile, te.Field, te.Value, te.Type)
		case errors.As(err, &se):
			return nil, fmt.Errorf("parsing %s: invalid JSON at byte %d: %v", ConfigFile, se.Offset, err)
		}
		return nil, fmt.Errorf("parsing %s: %w", ConfigFile, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("parsing %s: data after the JSON object", ConfigFile)
	}
	return &spec, nil
}

// checkVersion accepts 1.0.0 .. 1.3.x, with an optional pre-release or
// build suffix ("1.0.2-dev").
func checkVersion(v string) error {
	if v == "" {
		return errors.New("ociVersion is missing")
	}
	core, _, _ := strings.Cut(v, "-")
	core, _, _ = strings.Cut(core, "+")
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return fmt.Errorf("ociVersion %q is not a version (want MAJOR.MINOR.PATCH)", v)
	}
	var n [3]int
	for i, p := range parts {
		x, err := strconv.Atoi(p)
		if err != nil || x < 0 {
			return fmt.Errorf("ociVersion %q is not a version (want MAJOR.MINOR.PATCH)", v)
		}
		n[i] = x
	}
	if n[0] != supportedMajor || n[1] > maxMinor {
		return fmt.Errorf("ociVersion %q is not supported: want 1.0.0 to 1.%d.x", v, maxMinor)
	}
	return nil
}

// knownNamespaces are the linux.namespaces types of the spec.
var knownNamespaces = map[specs.LinuxNamespaceType]bool{
	specs.PIDNamespace: true, specs.NetworkNamespace: true, specs.MountNamespace: true,
	specs.IPCNamespace: true, specs.UTSNamespace: true, specs.UserNamespace: true,
	specs.CgroupNamespace: true, specs.TimeNamespace: true,
}

// Validate checks what runsc needs of a spec, bundle being the absolute
// bundle directory.
func Validate(spec *specs.Spec, bundle string) error {
	if err := checkVersion(spec.Version); err != nil {
		return err
	}
	if spec.Root == nil || spec.Root.Path == "" {
		return errors.New("root.path is missing")
	}
	if _, err := RootPath(spec, bundle); err != nil {
		return err
	}
	if err := validateProcess(spec.Process); err != nil {
		return err
	}
	for i, m := range spec.Mounts {
		if !filepath.IsAbs(m.Destination) {
			return fmt.Errorf("mounts[%d].destination %q is not an absolute path", i, m.Destination)
		}
	}
	if err := validateHooks(spec.Hooks); err != nil {
		return err
	}
	if spec.Linux != nil {
		seen := map[specs.LinuxNamespaceType]bool{}
		for i, ns := range spec.Linux.Namespaces {
			if !knownNamespaces[ns.Type] {
				return fmt.Errorf("linux.namespaces[%d].type %q is not a namespace type", i, ns.Type)
			}
			if seen[ns.Type] {
				return fmt.Errorf("linux.namespaces[%d]: namespace %q given twice", i, ns.Type)
			}
			seen[ns.Type] = true
			if ns.Path != "" {
				if err := checkNamespacePath(ns.Type, ns.Path); err != nil {
					return fmt.Errorf("linux.namespaces[%d]: %w", i, err)
				}
			}
		}
	}
	if spec.Hostname != "" && spec.Linux != nil && !HasNamespace(spec, specs.UTSNamespace) {
		return errors.New("hostname is set but linux.namespaces has no uts namespace")
	}
	if spec.Domainname != "" && spec.Linux != nil && !HasNamespace(spec, specs.UTSNamespace) {
		return errors.New("domainname is set but linux.namespaces has no uts namespace")
	}
	return validateSysctl(spec)
}

// HasNamespace reports whether the spec's linux.namespaces lists a
// namespace of type t (with or without a path).
func HasNamespace(spec *specs.Spec, t specs.LinuxNamespaceType) bool {
	if spec.Linux == nil {
		return false
	}
	for _, ns := range spec.Linux.Namespaces {
		if ns.Type == t {
			return true
		}
	}
	return false
}

func validateProcess(p *specs.Process) error {
	if p == nil {
		return errors.New("process is missing")
	}
	if len(p.Args) == 0 || p.Args[0] == "" {
		return errors.New("process.args is missing: give the command to run")
	}
	if p.Cwd == "" {
		return errors.New("process.cwd is missing")
	}
	if !filepath.IsAbs(p.Cwd) {
		return fmt.Errorf("process.cwd %q is not an absolute path", p.Cwd)
	}
	for i, e := range p.Env {
		if k, _, ok := strings.Cut(e, "="); !ok || k == "" {
			return fmt.Errorf("process.env[%d] %q is not of the form NAME=VALUE", i, e)
		}
	}
	if p.Capabilities != nil {
		sets := []struct {
			name string
			caps []string
		}{
			{"bounding", p.Capabilities.Bounding}, {"effective", p.Capabilities.Effective},
			{"inheritable", p.Capabilities.Inheritable}, {"permitted", p.Capabilities.Permitted},
			{"ambient", p.Capabilities.Ambient},
		}
		for _, s := range sets {
			for _, c := range s.caps {
				if _, err := CapabilityNumber(c); err != nil {
					return fmt.Errorf("process.capabilities.%s: %w", s.name, err)
				}
			}
		}
	}
	seen := map[string]bool{}
	for i, r := range p.Rlimits {
		if _, err := RlimitNumber(r.Type); err != nil {
			return fmt.Errorf("process.rlimits[%d].type: %w", i, err)
		}
		if seen[r.Type] {
			return fmt.Errorf("process.rlimits[%d]: %s given twice", i, r.Type)
		}
		seen[r.Type] = true
		if r.Soft > r.Hard {
			return fmt.Errorf("process.rlimits[%d]: %s soft limit %d is above the hard limit %d", i, r.Type, r.Soft, r.Hard)
		}
	}
	return nil
}

// RootPath returns the container's root directory on the host: root.path,
// relative to the bundle unless absolute. A relative path may not climb
// out of the bundle, and the result must be a directory.
func RootPath(spec *specs.Spec, bundle string) (string, error) {
	if spec.Root == nil || spec.Root.Path == "" {
		return "", errors.New("root.path is missing")
	}
	p := spec.Root.Path
	if !filepath.IsAbs(p) {
		clean := filepath.Clean(p)
		if clean == ".." || strings.HasPrefix(clean, "../") {
			return "", fmt.Errorf("root.path %q is outside the bundle", p)
		}
		p = filepath.Join(bundle, clean)
	}
	fi, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("root.path: %w", err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("root.path %q is not a directory", p)
	}
	return p, nil
}

func validateHooks(h *specs.Hooks) error {
	if h == nil {
		return nil
	}
	for _, k := range []struct {
		name  string
		hooks []specs.Hook
	}{
		{"prestart", h.Prestart}, {"createRuntime", h.CreateRuntime}, {"createContainer", h.CreateContainer},
		{"startContainer", h.StartContainer}, {"poststart", h.Poststart}, {"poststop", h.Poststop},
	} {
		for i, hk := range k.hooks {
			if !filepath.IsAbs(hk.Path) {
				return fmt.Errorf("hooks.%s[%d].path %q is not an absolute path", k.name, i, hk.Path)
			}
			if hk.Timeout != nil && *hk.Timeout <= 0 {
				return fmt.Errorf("hooks.%s[%d].timeout %d is not positive", k.name, i, *hk.Timeout)
			}
		}
	}
	return nil
}
