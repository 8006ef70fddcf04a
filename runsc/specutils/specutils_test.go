package specutils

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// bundle makes a bundle directory with a rootfs and the given config.json
// (none if config is nil).
func bundle(t *testing.T, config []byte) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "rootfs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if config != nil {
		if err := os.WriteFile(filepath.Join(dir, ConfigFile), config, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func specJSON(t *testing.T, edit func(*specs.Spec)) []byte {
	t.Helper()
	s := Default(false, 0, 0)
	if edit != nil {
		edit(s)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestReadBundle(t *testing.T) {
	tests := []struct {
		name    string
		config  func(t *testing.T) []byte
		wantErr string // substring; empty for success
	}{
		{"default", func(t *testing.T) []byte { return specJSON(t, nil) }, ""},
		{"missing config.json", func(t *testing.T) []byte { return nil }, "has no config.json"},
		{"bad JSON", func(t *testing.T) []byte { return []byte(`{"ociVersion": "1.0.2",`) }, "parsing config.json"},
		{"wrong type", func(t *testing.T) []byte { return []byte(`{"ociVersion": "1.0.2", "process": {"args": "sh"}}`) }, `field "process.args"`},
		{"trailing data", func(t *testing.T) []byte { return append(specJSON(t, nil), []byte("{}")...) }, "data after"},
		{"no version", func(t *testing.T) []byte { return specJSON(t, func(s *specs.Spec) { s.Version = "" }) }, "ociVersion is missing"},
		{"version 2", func(t *testing.T) []byte { return specJSON(t, func(s *specs.Spec) { s.Version = "2.0.0" }) }, "not supported"},
		{"version 1.4", func(t *testing.T) []byte { return specJSON(t, func(s *specs.Spec) { s.Version = "1.4.0" }) }, "not supported"},
		{"version junk", func(t *testing.T) []byte { return specJSON(t, func(s *specs.Spec) { s.Version = "one" }) }, "not a version"},
		{"version 1.0.0", func(t *testing.T) []byte { return specJSON(t, func(s *specs.Spec) { s.Version = "1.0.0" }) }, ""},
		{"version 1.0.2-dev", func(t *testing.T) []byte { return specJSON(t, func(s *specs.Spec) { s.Version = "1.0.2-dev" }) }, ""},
		{"version 1.3.0", func(t *testing.T) []byte { return specJSON(t, func(s *specs.Spec) { s.Version = "1.3.0" }) }, ""},
		{"no process", func(t *testing.T) []byte { return specJSON(t, func(s *specs.Spec) { s.Process = nil }) }, "process is missing"},
		{"no args", func(t *testing.T) []byte { return specJSON(t, func(s *specs.Spec) { s.Process.Args = nil }) }, "process.args is missing"},
		{"relative cwd", func(t *testing.T) []byte { return specJSON(t, func(s *specs.Spec) { s.Process.Cwd = "tmp" }) }, "process.cwd"},
		{"bad env", func(t *testing.T) []byte {
			return specJSON(t, func(s *specs.Spec) { s.Process.Env = []string{"NOEQUALS"} })
		}, "process.env[0]"},
		{"unknown capability", func(t *testing.T) []byte {
			return specJSON(t, func(s *specs.Spec) { s.Process.Capabilities.Effective = []string{"CAP_FLY"} })
		}, "process.capabilities.effective: unknown capability"},
		{"unknown rlimit", func(t *testing.T) []byte {
			return specJSON(t, func(s *specs.Spec) { s.Process.Rlimits = []specs.POSIXRlimit{{Type: "RLIMIT_FOO"}} })
		}, "process.rlimits[0].type"},
		{"soft above hard", func(t *testing.T) []byte {
			return specJSON(t, func(s *specs.Spec) {
				s.Process.Rlimits = []specs.POSIXRlimit{{Type: "RLIMIT_NOFILE", Soft: 2, Hard: 1}}
			})
		}, "above the hard limit"},
		{"no root", func(t *testing.T) []byte { return specJSON(t, func(s *specs.Spec) { s.Root = nil }) }, "root.path is missing"},
		{"root escapes", func(t *testing.T) []byte { return specJSON(t, func(s *specs.Spec) { s.Root.Path = "../../etc" }) }, "outside the bundle"},
		{"root missing", func(t *testing.T) []byte { return specJSON(t, func(s *specs.Spec) { s.Root.Path = "nope" }) }, "root.path"},
		{"root absolute", func(t *testing.T) []byte { return specJSON(t, func(s *specs.Spec) { s.Root.Path = "/" }) }, ""},
		{"root not dir", func(t *testing.T) []byte { return specJSON(t, func(s *specs.Spec) { s.Root.Path = "config.json" }) }, "not a directory"},
		{"unknown namespace", func(t *testing.T) []byte {
			return specJSON(t, func(s *specs.Spec) {
				s.Linux.Namespaces = append(s.Linux.Namespaces, specs.LinuxNamespace{Type: "bogus"})
			})
		}, `linux.namespaces[5].type "bogus"`},
		{"duplicate namespace", func(t *testing.T) []byte {
			return specJSON(t, func(s *specs.Spec) {
				s.Linux.Namespaces = append(s.Linux.Namespaces, specs.LinuxNamespace{Type: specs.PIDNamespace})
			})
		}, "given twice"},
		{"relative hook path", func(t *testing.T) []byte {
			return specJSON(t, func(s *specs.Spec) { s.Hooks = &specs.Hooks{Poststop: []specs.Hook{{Path: "true"}}} })
		}, "hooks.poststop[0].path"},
		{"zero hook timeout", func(t *testing.T) []byte {
			zero := 0
			return specJSON(t, func(s *specs.Spec) {
				s.Hooks = &specs.Hooks{Prestart: []specs.Hook{{Path: "/bin/true", Timeout: &zero}}}
			})
		}, "hooks.prestart[0].timeout"},
		{"relative mount", func(t *testing.T) []byte {
			return specJSON(t, func(s *specs.Spec) { s.Mounts = append(s.Mounts, specs.Mount{Destination: "data"}) })
		}, "mounts[7].destination"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := bundle(t, tc.config(t))
			spec, abs, err := ReadBundle(dir)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("ReadBundle: %v", err)
				}
				if abs != dir || spec == nil {
					t.Errorf("got %q, %v", abs, spec)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestReadBundleNotADirectory(t *testing.T) {
	if _, _, err := ReadBundle("/nonexistent-moat-bundle"); err == nil {
		t.Error("missing bundle accepted")
	}
	if _, _, err := ReadBundle("/etc/passwd"); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("file as bundle: %v", err)
	}
}

func TestValidateID(t *testing.T) {
	for _, id := range []string{"a", "abc-123_x.y+z", strings.Repeat("x", 64)} {
		if err := ValidateID(id); err != nil {
			t.Errorf("ValidateID(%q): %v", id, err)
		}
	}
	for _, id := range []string{"", ".", "..", "a/b", "../x", "a b", "a\x00b", "é"} {
		if err := ValidateID(id); err == nil {
			t.Errorf("ValidateID(%q) accepted", id)
		}
	}
}

func TestParseSignal(t *testing.T) {
	tests := []struct {
		in   string
		want unix.Signal
	}{
		{"9", unix.SIGKILL}, {"KILL", unix.SIGKILL}, {"SIGKILL", unix.SIGKILL}, {"sigterm", unix.SIGTERM},
		{"term", unix.SIGTERM}, {"USR1", unix.SIGUSR1}, {"RTMIN", 34}, {"RTMIN+2", 36}, {"RTMAX", 64},
		{"SIGRTMAX-1", 63}, {"64", 64}, {"CHLD", unix.SIGCHLD},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseSignal(tc.in)
			if err != nil || got != tc.want {
				t.Errorf("ParseSignal(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
		})
	}
	for _, bad := range []string{"", "0", "65", "FOO", "RTMIN+40", "RTMIN-1", "-9", "SIG"} {
		if got, err := ParseSignal(bad); err == nil {
			t.Errorf("ParseSignal(%q) = %v, want an error", bad, got)
		}
	}
}

func TestCheck(t *testing.T) {
	s := Default(false, 0, 0)
	notes, err := Check(s)
	if err != nil {
		t.Fatal(err)
	}
	// The default spec's mounts are all the Sentry's own; only its
	// read-only root... is read-only, so no notes at all.
	if len(notes) != 0 {
		t.Errorf("default spec gave notes %q", notes)
	}
	s.Mounts = append(s.Mounts,
		specs.Mount{Destination: "/data", Type: "nfs", Source: "server:/export"},
		specs.Mount{Destination: "/vol", Type: "bind", Source: "/tmp"})
	s.Hooks = &specs.Hooks{StartContainer: []specs.Hook{{Path: "/bin/true"}}}
	notes, _ = Check(s)
	all := strings.Join(notes, "\n")
	for _, want := range []string{"/data", "hooks"} {
		if !strings.Contains(all, want) {
			t.Errorf("notes %q lack %q", notes, want)
		}
	}
	// Bind mounts are mounted, so they get no note.
	if strings.Contains(all, "/vol") {
		t.Errorf("notes %q name the bind mount /vol", notes)
	}
}

func TestCapabilityNames(t *testing.T) {
	names := CapabilityNames()
	if len(names) != unix.CAP_LAST_CAP+1 {
		t.Errorf("%d capability names, want %d", len(names), unix.CAP_LAST_CAP+1)
	}
	for i, n := range names {
		if c, _ := CapabilityNumber(n); c != uint(i) {
			t.Errorf("%s is %d, want %d", n, c, i)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"ociVersion":"1.0.2","process":{"args":["sh"],"cwd":"/"},"root":{"path":"rootfs"}}`))
	f.Add([]byte(`{"ociVersion":"1.3.0","linux":{"namespaces":[{"type":"pid"}]}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		spec, err := Parse(b)
		if err != nil {
			return
		}
		// Whatever parses can be validated and checked without a panic.
		dir := t.TempDir()
		if Validate(spec, dir) == nil {
			Check(spec)
		}
	})
}
