package shim

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

func TestParseConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want Options
		err  string
	}{
		{
			name: "gvisor style",
			in: `# runsc.toml
binary_name = "/usr/local/bin/runsc"
root = '/run/r'
log_level = "debug" # ignored
[runsc_config]
  debug = "true"
  platform = "ptrace"
  overlay = false
  "debug-log" = "/tmp/x/"
`,
			want: Options{BinaryName: "/usr/local/bin/runsc", Root: "/run/r", RunscConfig: map[string]string{
				"debug": "true", "platform": "ptrace", "overlay": "false", "debug-log": "/tmp/x/",
			}},
		},
		{name: "empty", in: "\n# nothing\n", want: Options{}},
		{name: "systemd", in: "systemd_cgroup = true", want: Options{SystemdCgroup: true}},
		{name: "escapes", in: `binary_name = "a\"b\\c\u00e9"`, want: Options{BinaryName: "a\"b\\cé"}},
		{name: "unknown key", in: `foo = "x"`, err: `unknown key "foo"`},
		{name: "unquoted string", in: `root = /run`, err: "strings need quotes"},
		{name: "array", in: `root = ["a"]`, err: "not supported"},
		{name: "duplicate", in: "root = \"a\"\nroot = \"b\"", err: "defined twice"},
		{name: "unterminated", in: `root = "a`, err: "unterminated string"},
		{name: "no equals", in: `root`, err: "expected key = value"},
		{name: "bad header", in: `[runsc_config`, err: "unterminated table header"},
		{name: "bad flag", in: "[runsc_config]\n\"-x\" = \"1\"", err: "invalid runsc flag name"},
		{name: "trailing text", in: `root = "a" b`, err: "text after value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseConfig(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseConfig: got error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseConfig: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ParseConfig = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestGlobalFlags(t *testing.T) {
	o := Options{Root: "/r", SystemdCgroup: true, RunscConfig: map[string]string{"debug": "true", "a": "b"}}
	want := []string{"--root=/r", "--systemd-cgroup", "--a=b", "--debug=true"}
	if got := o.GlobalFlags(); !reflect.DeepEqual(got, want) {
		t.Errorf("GlobalFlags = %q, want %q", got, want)
	}
}

func TestParseRuntimeOptions(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "runsc.toml")
	if err := os.WriteFile(conf, []byte("root = \"/from/file\"\n[runsc_config]\ndebug = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	str := func(b []byte, num protowire.Number, s string) []byte {
		b = protowire.AppendTag(b, num, protowire.BytesType)
		return protowire.AppendString(b, s)
	}
	var runtimeOpts []byte
	runtimeOpts = str(runtimeOpts, 1, "io.containerd.runsc.v1.options")
	runtimeOpts = str(runtimeOpts, 2, conf)
	var runcOpts []byte
	runcOpts = protowire.AppendTag(runcOpts, 1, protowire.VarintType) // no_pivot_root
	runcOpts = protowire.AppendVarint(runcOpts, 1)
	runcOpts = str(runcOpts, 6, "/bin/runsc-x")
	runcOpts = str(runcOpts, 7, "/run/x")
	runcOpts = protowire.AppendTag(runcOpts, 9, protowire.VarintType)
	runcOpts = protowire.AppendVarint(runcOpts, 1)
	for _, tc := range []struct {
		name    string
		typeURL string
		value   []byte
		want    Options
		err     string
	}{
		{name: "none", want: Options{}},
		{name: "runtimeoptions", typeURL: "runtimeoptions.v1.Options", value: runtimeOpts,
			want: Options{Root: "/from/file", ConfigPath: conf, RunscConfig: map[string]string{"debug": "true"}}},
		{name: "runc options", typeURL: "containerd.runc.v1.Options", value: runcOpts,
			want: Options{BinaryName: "/bin/runsc-x", Root: "/run/x", SystemdCgroup: true}},
		{name: "prefixed type url", typeURL: "type.googleapis.com/containerd.runc.v1.Options", value: runcOpts,
			want: Options{BinaryName: "/bin/runsc-x", Root: "/run/x", SystemdCgroup: true}},
		{name: "unknown type", typeURL: "foo.Bar", err: "unsupported runtime options"},
		{name: "truncated", typeURL: "containerd.runc.v1.Options", value: runcOpts[:len(runcOpts)-1], err: "decoding"},
		{name: "missing config", typeURL: "runtimeoptions.v1.Options", value: str(nil, 2, filepath.Join(dir, "nope")), err: "reading runsc config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseRuntimeOptions(tc.typeURL, tc.value)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestOptionsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	if o, err := readOptions(dir); err != nil || !reflect.DeepEqual(o, Options{}) {
		t.Fatalf("readOptions of an empty bundle = %+v, %v", o, err)
	}
	want := Options{BinaryName: "b", Root: "r", RunscConfig: map[string]string{"x": "y"}}
	if err := writeOptions(dir, want); err != nil {
		t.Fatal(err)
	}
	got, err := readOptions(dir)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("readOptions = %+v, %v; want %+v", got, err, want)
	}
}

func TestParseMountOptions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    []string
		flags uintptr
		data  string
	}{
		{"overlay", []string{"index=off", "lowerdir=/a:/b", "upperdir=/u", "workdir=/w"}, 0, "index=off,lowerdir=/a:/b,upperdir=/u,workdir=/w"},
		{"bind ro", []string{"rbind", "ro", "nosuid"}, 0x1000 | 0x4000 | 1 | 2, ""},
		{"rw clears ro", []string{"ro", "rw"}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			flags, data := parseMountOptions(tc.in)
			if flags != tc.flags || data != tc.data {
				t.Errorf("parseMountOptions(%q) = %#x, %q; want %#x, %q", tc.in, flags, data, tc.flags, tc.data)
			}
		})
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add("binary_name = \"/x\"\n[runsc_config]\ndebug = true\n")
	f.Add(`a."b".c = 'x' # c`)
	f.Add(`root = "\U0001F600\t"`)
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseConfig(s)
		if err != nil {
			return
		}
		for _, fl := range o.GlobalFlags() {
			if !strings.HasPrefix(fl, "--") || strings.HasPrefix(fl, "---") {
				t.Fatalf("flag %q from %q", fl, s)
			}
		}
	})
}

func FuzzParseRuntimeOptions(f *testing.F) {
	f.Add("containerd.runc.v1.Options", []byte{0x32, 0x01, 'x'})
	f.Add("runtimeoptions.v1.Options", []byte{0x0a, 0x00})
	f.Fuzz(func(t *testing.T, typeURL string, value []byte) {
		if strings.Contains(typeURL, "runtimeoptions") {
			// A config_path would read a host file.
			return
		}
		ParseRuntimeOptions(typeURL, value)
	})
}
