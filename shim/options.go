package shim

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/moat-sandbox/moat/internal/atomicfile"
)

// Options say how the shim runs runsc for one container. They come from
// the runtime options of the Create request and from the runsc.toml file
// those options name, and are saved in the bundle (optionsFile) so that
// the delete subcommand, which gets no request, can find the same runsc.
type Options struct {
	// BinaryName is the runsc binary: a path, or a name looked up on PATH.
	BinaryName string `json:"binary_name,omitempty"`
	// Root is runsc's --root, where its container state lives.
	Root string `json:"root,omitempty"`
	// SystemdCgroup passes --systemd-cgroup.
	SystemdCgroup bool `json:"systemd_cgroup,omitempty"`
	// RunscConfig holds runsc's global flags, name to value (without the
	// leading dashes), from runsc.toml's [runsc_config] table.
	RunscConfig map[string]string `json:"runsc_config,omitempty"`
	// ConfigPath is the runsc.toml the options were read from.
	ConfigPath string `json:"config_path,omitempty"`
}

// optionsFile is the file in the bundle holding the Options in JSON.
const optionsFile = "moat-shim-options.json"

// Type names (the part of an Any's type URL after its last slash) of the
// runtime options the shim understands.
const (
	// runtimeOptionsType is containerd's generic options message, which
	// carries a config_path (ctr --runtime-config-path, CRI's ConfigPath).
	runtimeOptionsType = "runtimeoptions.v1.Options"
	// runcOptionsType is the runc shim's options message (ctr
	// --runc-binary, CRI's BinaryName and Root).
	runcOptionsType = "containerd.runc.v1.Options"
)

// Field numbers in those messages.
const (
	runtimeOptionsConfigPath = 2 // runtimeoptions.v1.Options.config_path
	runcOptionsBinaryName    = 6 // containerd.runc.v1.Options.binary_name
	runcOptionsRoot          = 7 // containerd.runc.v1.Options.root
	runcOptionsSystemdCgroup = 9 // containerd.runc.v1.Options.systemd_cgroup
)

// ParseRuntimeOptions reads the runtime options of a Create request: the
// Any's type URL and value. Options naming a config file have it read and
// merged in; an empty type URL gives the zero Options.
func ParseRuntimeOptions(typeURL string, value []byte) (Options, error) {
	var o Options
	name := typeURL
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	switch name {
	case "":
		return o, nil
	case runtimeOptionsType:
		err := walkProto(value, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
			if num == runtimeOptionsConfigPath && typ == protowire.BytesType {
				o.ConfigPath = string(v)
			}
			return nil
		})
		if err != nil {
			return o, fmt.Errorf("decoding %s: %w", name, err)
		}
	case runcOptionsType:
		err := walkProto(value, func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error {
			switch {
			case num == runcOptionsBinaryName && typ == protowire.BytesType:
				o.BinaryName = string(v)
			case num == runcOptionsRoot && typ == protowire.BytesType:
				o.Root = string(v)
			case num == runcOptionsSystemdCgroup && typ == protowire.VarintType:
				o.SystemdCgroup = n != 0
			}
			return nil
		})
		if err != nil {
			return o, fmt.Errorf("decoding %s: %w", name, err)
		}
	default:
		return o, fmt.Errorf("unsupported runtime options type %q", typeURL)
	}
	if o.ConfigPath != "" {
		data, err := os.ReadFile(o.ConfigPath)
		if err != nil {
			return o, fmt.Errorf("reading runsc config: %w", err)
		}
		fromFile, err := ParseConfig(string(data))
		if err != nil {
			return o, fmt.Errorf("runsc config %s: %w", o.ConfigPath, err)
		}
		fromFile.ConfigPath = o.ConfigPath
		if o.BinaryName != "" {
			fromFile.BinaryName = o.BinaryName
		}
		if o.Root != "" {
			fromFile.Root = o.Root
		}
		fromFile.SystemdCgroup = fromFile.SystemdCgroup || o.SystemdCgroup
		o = fromFile
	}
	return o, nil
}

// walkProto calls fn for each field of a protobuf message: its number,
// wire type, and its bytes (length-delimited) or integer (varint) value.
func walkProto(b []byte, fn func(protowire.Number, protowire.Type, []byte, uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var (
			bytes []byte
			u     uint64
		)
		switch typ {
		case protowire.BytesType:
			bytes, n = protowire.ConsumeBytes(b)
		case protowire.VarintType:
			u, n = protowire.ConsumeVarint(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if err := fn(num, typ, bytes, u); err != nil {
			return err
		}
	}
	return nil
}

// ParseConfig reads a runsc.toml: top-level binary_name, root and
// systemd_cgroup, and a [runsc_config] table of runsc flags. Keys gVisor's
// shim reads that have no meaning here (log_level, log_path,
// ignore_cgroups) are accepted and ignored; others are errors.
func ParseConfig(data string) (Options, error) {
	var o Options
	vals, err := parseTOML(data)
	if err != nil {
		return o, err
	}
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := vals[k]
		if flag, ok := strings.CutPrefix(k, "runsc_config."); ok {
			if !validFlagName(flag) {
				return o, fmt.Errorf("invalid runsc flag name %q", flag)
			}
			if o.RunscConfig == nil {
				o.RunscConfig = map[string]string{}
			}
			o.RunscConfig[flag] = v
			continue
		}
		switch k {
		case "binary_name":
			o.BinaryName = v
		case "root":
			o.Root = v
		case "systemd_cgroup":
			o.SystemdCgroup = v == "true"
		case "log_level", "log_path", "ignore_cgroups":
		default:
			return o, fmt.Errorf("unknown key %q", k)
		}
	}
	return o, nil
}

// validFlagName says whether s can be passed as --s=value.
func validFlagName(s string) bool {
	if s == "" || s[0] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isBareKeyByte(s[i]) && s[i] != '.' {
			return false
		}
	}
	return true
}

// GlobalFlags are runsc's global flags for these options, sorted so that
// the command lines are stable: --root and --systemd-cgroup, then the
// runsc_config flags.
func (o Options) GlobalFlags() []string {
	var flags []string
	if o.Root != "" {
		flags = append(flags, "--root="+o.Root)
	}
	if o.SystemdCgroup {
		flags = append(flags, "--systemd-cgroup")
	}
	names := make([]string, 0, len(o.RunscConfig))
	for k := range o.RunscConfig {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		flags = append(flags, "--"+k+"="+o.RunscConfig[k])
	}
	return flags
}

// writeOptions saves o in bundle.
func writeOptions(bundle string, o Options) error {
	data, err := json.Marshal(o)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(bundle, optionsFile), data, 0o600)
}

// readOptions reads the Options saved in bundle; a bundle without them
// gives the zero Options.
func readOptions(bundle string) (Options, error) {
	var o Options
	data, err := os.ReadFile(filepath.Join(bundle, optionsFile))
	if os.IsNotExist(err) {
		return o, nil
	}
	if err != nil {
		return o, err
	}
	if err := json.Unmarshal(data, &o); err != nil {
		return o, fmt.Errorf("reading %s: %w", optionsFile, err)
	}
	return o, nil
}
