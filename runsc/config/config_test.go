package config

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func parse(t *testing.T, args ...string) (*Config, error) {
	t.Helper()
	c := &Config{}
	fs := flag.NewFlagSet("runsc", flag.ContinueOnError)
	fs.SetOutput(new(bytes.Buffer))
	c.RegisterFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	return c, c.Validate()
}

func TestDefaults(t *testing.T) {
	c, err := parse(t)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c, Default()) {
		t.Errorf("parsed no flags into %+v, want %+v", c, Default())
	}
	if got := c.ToFlags(); len(got) != 0 {
		t.Errorf("defaults serialise to %q, want nothing", got)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr string
	}{
		{[]string{"--platform=ptrace", "--network=none", "--log-format=json"}, ""},
		{[]string{"--systemd-cgroup", "--overlay", "--strace", "--debug"}, ""},
		{[]string{"--platform=kvm"}, "only ptrace"},
		{[]string{"--network=host"}, "only --network=none"},
		{[]string{"--network=sandbox"}, "only --network=none"},
		{[]string{"--network=bogus"}, "only --network=none"},
		{[]string{"--log-format=xml"}, "invalid log format"},
		{[]string{"--seccomp-debug=log"}, ""},
		{[]string{"--seccomp-debug=maybe"}, "seccomp debug mode"},
		{[]string{"--root="}, "--root"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, err := parse(t, tc.args...)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestToFlagsRoundTrip(t *testing.T) {
	in := &Config{
		RootDir:       "/var/run/moat",
		LogFile:       "/tmp/x.log",
		LogFormat:     "json",
		Debug:         true,
		DebugLog:      "/tmp/dbg dir/",
		Strace:        true,
		SystemdCgroup: true,
		Platform:      "systrap",
		Network:       "none",
		Overlay:       OverlayNone,
		SeccompDebug:  "trap",
	}
	args := in.ToFlags()
	out, err := parse(t, args...)
	if err != nil {
		t.Fatalf("parsing %q: %v", args, err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Errorf("round trip through %q gave %+v, want %+v", args, out, in)
	}
	for _, a := range args {
		if strings.HasPrefix(a, "--platform") || strings.HasPrefix(a, "--network") {
			t.Errorf("default-valued flag %q serialised", a)
		}
	}
}

func TestOpenLog(t *testing.T) {
	dir := t.TempDir()
	t.Run("debug-log dir", func(t *testing.T) {
		c := Default()
		c.Debug = true
		c.DebugLog = filepath.Join(dir, "logs")
		log, closer, err := c.OpenLog("boot", os.Stderr)
		if err != nil {
			t.Fatal(err)
		}
		log.Debug("hello", "k", 1)
		closer.Close()
		b, err := os.ReadFile(c.DebugLogPath(HostPID(), "boot"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "hello") || !strings.Contains(string(b), "cmd=boot") {
			t.Errorf("debug log holds %q", b)
		}
	})
	t.Run("json to --log", func(t *testing.T) {
		c := Default()
		c.LogFormat = "json"
		c.LogFile = filepath.Join(dir, "runsc.json")
		log, closer, err := c.OpenLog("do", os.Stderr)
		if err != nil {
			t.Fatal(err)
		}
		log.Info("dropped: below warn")
		log.Warn("kept")
		closer.Close()
		b, _ := os.ReadFile(c.LogFile)
		if strings.Contains(string(b), "dropped") || !strings.Contains(string(b), `"msg":"kept"`) {
			t.Errorf("json log holds %q", b)
		}
	})
	t.Run("json to --log and --debug-log, levels as runc's", func(t *testing.T) {
		c := Default()
		c.Debug = true
		c.LogFormat = "json"
		c.LogFile = filepath.Join(dir, "both.json")
		c.DebugLog = filepath.Join(dir, "both")
		log, closer, err := c.OpenLog("create", os.Stderr)
		if err != nil {
			t.Fatal(err)
		}
		log.Debug("d")
		log.Info("i")
		log.Warn("w")
		log.Error("runsc create: boom")
		closer.Close()
		for _, path := range []string{c.LogFile, c.DebugLogPath(HostPID(), "create")} {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				var rec struct{ Level, Msg string }
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatalf("%s: line %q: %v", path, line, err)
				}
				got = append(got, rec.Level+":"+rec.Msg)
			}
			want := []string{"debug:d", "info:i", "warning:w", "error:runsc create: boom"}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s holds %q, want %q", path, got, want)
			}
		}
	})
	t.Run("stderr", func(t *testing.T) {
		var buf bytes.Buffer
		c := Default()
		c.Strace = true
		log, _, err := c.OpenLog("boot", &buf)
		if err != nil {
			t.Fatal(err)
		}
		log.Info("syscall")
		if !strings.Contains(buf.String(), "syscall") {
			t.Errorf("stderr got %q; --strace must let info through", buf.String())
		}
	})
}

func TestOverlayFlag(t *testing.T) {
	tests := []struct {
		args     []string
		want     Overlay
		writable bool
		wantErr  bool
	}{
		{nil, OverlayDefault, false, false},
		{[]string{"--overlay"}, OverlayMemory, false, false},
		{[]string{"--overlay=true"}, OverlayMemory, false, false},
		{[]string{"--overlay=memory"}, OverlayMemory, false, false},
		{[]string{"--overlay=false"}, OverlayDefault, false, false},
		{[]string{"--overlay=none"}, OverlayNone, true, false},
		{[]string{"--overlay=disk"}, "", false, true},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			c, err := parse(t, tc.args...)
			if tc.wantErr {
				if err == nil {
					t.Fatal("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Overlay != tc.want || c.WritableRoot() != tc.writable {
				t.Errorf("Overlay = %q, WritableRoot = %v; want %q, %v", c.Overlay, c.WritableRoot(), tc.want, tc.writable)
			}
		})
	}
}

func TestHostUDSFlag(t *testing.T) {
	tests := []struct {
		args                []string
		want                HostUDS
		wantOpen, wantCreat bool
		wantErr             bool
	}{
		{nil, HostUDSNone, false, false, false},
		{[]string{"--host-uds=none"}, HostUDSNone, false, false, false},
		{[]string{"--host-uds=open"}, HostUDSOpen, true, false, false},
		{[]string{"--host-uds=create"}, HostUDSCreate, false, true, false},
		{[]string{"--host-uds=all"}, HostUDSAll, true, true, false},
		{[]string{"--host-uds=yes"}, "", false, false, true},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			c, err := parse(t, tc.args...)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("parsed %v, want an error", tc.args)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.HostUDS != tc.want || c.HostUDS.AllowOpen() != tc.wantOpen || c.HostUDS.AllowCreate() != tc.wantCreat {
				t.Errorf("host-uds %q open %v create %v, want %q %v %v", c.HostUDS, c.HostUDS.AllowOpen(), c.HostUDS.AllowCreate(), tc.want, tc.wantOpen, tc.wantCreat)
			}
			// Children get the same setting back.
			back, err := parse(t, c.ToFlags()...)
			if err != nil || back.HostUDS != c.HostUDS {
				t.Errorf("round trip of %q: %q %v", c.ToFlags(), back.HostUDS, err)
			}
		})
	}
}
