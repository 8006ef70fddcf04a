package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/subcommands"
)

// readJSON parses the JSON object in file.
func readJSON(t *testing.T, file string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s is not a JSON object: %v\n%s", file, err, b)
	}
	return m
}

// wantJSON parses s, the JSON a test expects.
func wantJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("bad expectation %s: %v", s, err)
	}
	return m
}

func TestInstallRuntime(t *testing.T) {
	rt := DockerRuntime{Path: "/usr/local/bin/runsc", RuntimeArgs: []string{"--network=none"}}
	for _, tc := range []struct {
		name    string
		initial *string // nil: no file
		runtime string
		clobber bool
		want    string // "" with wantErr
		wantErr string
	}{
		{
			name:    "no file",
			runtime: "runsc",
			want:    `{"runtimes":{"runsc":{"path":"/usr/local/bin/runsc","runtimeArgs":["--network=none"]}}}`,
		},
		{
			name:    "empty file",
			initial: ptr(" \n"),
			runtime: "runsc",
			want:    `{"runtimes":{"runsc":{"path":"/usr/local/bin/runsc","runtimeArgs":["--network=none"]}}}`,
		},
		{
			name:    "other keys kept",
			initial: ptr(`{"debug":true,"log-opts":{"max-size":"10m"},"data-root":"/x"}`),
			runtime: "runsc",
			want:    `{"debug":true,"log-opts":{"max-size":"10m"},"data-root":"/x","runtimes":{"runsc":{"path":"/usr/local/bin/runsc","runtimeArgs":["--network=none"]}}}`,
		},
		{
			name:    "other runtimes kept",
			initial: ptr(`{"runtimes":{"crun":{"path":"/usr/bin/crun","runtimeArgs":["--x"],"options":{"a":1}}}}`),
			runtime: "moat",
			want:    `{"runtimes":{"crun":{"path":"/usr/bin/crun","runtimeArgs":["--x"],"options":{"a":1}},"moat":{"path":"/usr/local/bin/runsc","runtimeArgs":["--network=none"]}}}`,
		},
		{
			name:    "null runtimes",
			initial: ptr(`{"runtimes":null}`),
			runtime: "runsc",
			want:    `{"runtimes":{"runsc":{"path":"/usr/local/bin/runsc","runtimeArgs":["--network=none"]}}}`,
		},
		{
			name:    "clobber replaces",
			initial: ptr(`{"runtimes":{"runsc":{"path":"/old/runsc"}}}`),
			runtime: "runsc",
			clobber: true,
			want:    `{"runtimes":{"runsc":{"path":"/usr/local/bin/runsc","runtimeArgs":["--network=none"]}}}`,
		},
		{
			name:    "no clobber refuses",
			initial: ptr(`{"runtimes":{"runsc":{"path":"/old/runsc"}}}`),
			runtime: "runsc",
			wantErr: `runtime "runsc" already exists`,
		},
		{
			name:    "bad JSON",
			initial: ptr(`{"runtimes":`),
			runtime: "runsc",
			wantErr: "parsing Docker config",
		},
		{
			name:    "not an object",
			initial: ptr(`[1,2]`),
			runtime: "runsc",
			wantErr: "parsing Docker config",
		},
		{
			name:    "null file",
			initial: ptr(`null`),
			runtime: "runsc",
			wantErr: "not a JSON object",
		},
		{
			name:    "runtimes not an object",
			initial: ptr(`{"runtimes":"runc"}`),
			runtime: "runsc",
			wantErr: `"runtimes" is not an object`,
		},
		{
			name:    "empty name",
			runtime: "",
			wantErr: "runtime name is empty",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "docker", "daemon.json")
			if tc.initial != nil {
				os.MkdirAll(filepath.Dir(file), 0o755)
				if err := os.WriteFile(file, []byte(*tc.initial), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			err := InstallRuntime(file, tc.runtime, rt, tc.clobber)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("InstallRuntime = %v, want an error with %q", err, tc.wantErr)
				}
				if tc.initial != nil {
					if b, _ := os.ReadFile(file); string(b) != *tc.initial {
						t.Errorf("file changed on error: %s", b)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("InstallRuntime: %v", err)
			}
			if got, want := readJSON(t, file), wantJSON(t, tc.want); !reflect.DeepEqual(got, want) {
				t.Errorf("daemon.json = %v, want %v", got, want)
			}
			st, err := os.Stat(file)
			if err != nil {
				t.Fatal(err)
			}
			wantMode := os.FileMode(0o644)
			if tc.initial != nil {
				wantMode = 0o600 // an existing file keeps its mode
			}
			if st.Mode().Perm() != wantMode {
				t.Errorf("mode %v, want %v", st.Mode().Perm(), wantMode)
			}
			if ents, _ := os.ReadDir(filepath.Dir(file)); len(ents) != 1 {
				t.Errorf("directory holds %d entries, want only daemon.json (temporary file left?)", len(ents))
			}
		})
	}
}

func TestUninstallRuntime(t *testing.T) {
	for _, tc := range []struct {
		name    string
		initial *string
		runtime string
		want    string
		wantErr string
	}{
		{
			name:    "last runtime removes the key",
			initial: ptr(`{"debug":true,"runtimes":{"runsc":{"path":"/r"}}}`),
			runtime: "runsc",
			want:    `{"debug":true}`,
		},
		{
			name:    "others kept",
			initial: ptr(`{"runtimes":{"runsc":{"path":"/r"},"crun":{"path":"/c"}},"x":[1]}`),
			runtime: "runsc",
			want:    `{"runtimes":{"crun":{"path":"/c"}},"x":[1]}`,
		},
		{
			name:    "absent runtime",
			initial: ptr(`{"runtimes":{"crun":{"path":"/c"}}}`),
			runtime: "runsc",
			wantErr: `runtime "runsc" not found in`,
		},
		{
			name:    "no runtimes",
			initial: ptr(`{}`),
			runtime: "runsc",
			wantErr: `runtime "runsc" not found in`,
		},
		{
			name:    "no file",
			runtime: "runsc",
			wantErr: "does not exist",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "daemon.json")
			if tc.initial != nil {
				if err := os.WriteFile(file, []byte(*tc.initial), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := UninstallRuntime(file, tc.runtime)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("UninstallRuntime = %v, want an error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("UninstallRuntime: %v", err)
			}
			if got, want := readJSON(t, file), wantJSON(t, tc.want); !reflect.DeepEqual(got, want) {
				t.Errorf("daemon.json = %v, want %v", got, want)
			}
		})
	}
}

func TestInstallSymlinkStays(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.json")
	link := filepath.Join(dir, "daemon.json")
	if err := os.WriteFile(target, []byte(`{"debug":true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real.json", link); err != nil {
		t.Fatal(err)
	}
	if err := InstallRuntime(link, "runsc", DockerRuntime{Path: "/r"}, true); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("daemon.json is no longer a symlink: %v %v", st, err)
	}
	if got, want := readJSON(t, target), wantJSON(t, `{"debug":true,"runtimes":{"runsc":{"path":"/r"}}}`); !reflect.DeepEqual(got, want) {
		t.Errorf("target = %v, want %v", got, want)
	}
}

// runInstallCmd runs the install and uninstall commands on args as main
// would, returning the status.
func runInstallCmd(t *testing.T, args ...string) subcommands.ExitStatus {
	t.Helper()
	top := flag.NewFlagSet("runsc", flag.ContinueOnError)
	if err := top.Parse(args); err != nil {
		t.Fatal(err)
	}
	c := subcommands.NewCommander(top, "runsc")
	var out bytes.Buffer
	c.Output, c.Error = &out, &out
	c.Register(new(Install), "")
	c.Register(new(Uninstall), "")
	return c.Execute(context.Background())
}

func TestInstallCommand(t *testing.T) {
	file := filepath.Join(t.TempDir(), "daemon.json")
	if err := os.WriteFile(file, []byte(`{"storage-driver":"vfs"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		args []string
		want string
	}{
		{
			name: "install with runtime args",
			args: []string{"install", "--config_file", file, "--", "--network=none", "--debug"},
			want: `{"storage-driver":"vfs","runtimes":{"runsc":{"path":` + quote(exe) + `,"runtimeArgs":["--network=none","--debug"]}}}`,
		},
		{
			name: "second runtime by name and path",
			args: []string{"install", "--config_file=" + file, "--runtime=moat-debug", "--path=/opt/runsc"},
			want: `{"storage-driver":"vfs","runtimes":{"runsc":{"path":` + quote(exe) + `,"runtimeArgs":["--network=none","--debug"]},"moat-debug":{"path":"/opt/runsc"}}}`,
		},
		{
			name: "install --uninstall",
			args: []string{"install", "--config_file", file, "--uninstall"},
			want: `{"storage-driver":"vfs","runtimes":{"moat-debug":{"path":"/opt/runsc"}}}`,
		},
		{
			name: "uninstall",
			args: []string{"uninstall", "--config_file", file, "--runtime", "moat-debug"},
			want: `{"storage-driver":"vfs"}`,
		},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			if st := runInstallCmd(t, s.args...); st != subcommands.ExitSuccess {
				t.Fatalf("status %v", st)
			}
			if got, want := readJSON(t, file), wantJSON(t, s.want); !reflect.DeepEqual(got, want) {
				t.Errorf("daemon.json = %v, want %v", got, want)
			}
		})
	}
	t.Run("uninstall again fails", func(t *testing.T) {
		if st := runInstallCmd(t, "uninstall", "--config_file", file); st == subcommands.ExitSuccess {
			t.Errorf("removing an absent runtime succeeded")
		}
	})
	t.Run("relative path made absolute", func(t *testing.T) {
		if st := runInstallCmd(t, "install", "--config_file", file, "--path", "bin/runsc"); st != subcommands.ExitSuccess {
			t.Fatalf("status %v", st)
		}
		rts := readJSON(t, file)["runtimes"].(map[string]any)
		p := rts["runsc"].(map[string]any)["path"].(string)
		if !filepath.IsAbs(p) || !strings.HasSuffix(p, "/bin/runsc") {
			t.Errorf("path %q, want an absolute path ending in /bin/runsc", p)
		}
	})
}

func ptr(s string) *string { return &s }

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
