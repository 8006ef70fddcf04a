package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/gofer"
	"github.com/moat-sandbox/moat/runsc/boot"
)

func TestParseGoferBind(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want gofer.Mount
		ok   bool
	}{
		{"rw:/a", gofer.Mount{Path: "/a"}, true},
		{"ro:/a:b", gofer.Mount{Path: "/a:b", ReadOnly: true}, true},
		{"rw,rec:/x y", gofer.Mount{Path: "/x y", Recursive: true}, true},
		{"ro,rec:/", gofer.Mount{Path: "/", ReadOnly: true, Recursive: true}, true},
		{"/a", gofer.Mount{}, false},
		{"rw:a", gofer.Mount{}, false},
		{"rec:/a", gofer.Mount{}, false},
		{"rw,ro:/a", gofer.Mount{}, false},
		{"rx:/a", gofer.Mount{}, false},
		{"", gofer.Mount{}, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseGoferBind(tc.in)
			if (err == nil) != tc.ok || got != tc.want {
				t.Fatalf("ParseGoferBind(%q) = %+v, %v; want %+v (ok %v)", tc.in, got, err, tc.want, tc.ok)
			}
			if tc.ok {
				if back, err := ParseGoferBind(goferBindArg(got)); err != nil || back != got {
					t.Errorf("round trip of %+v: %+v, %v", got, back, err)
				}
			}
		})
	}
}

func FuzzParseGoferBind(f *testing.F) {
	for _, s := range []string{"rw:/a", "ro,rec:/b:c", "x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseGoferBind(s)
		if err != nil {
			return
		}
		if !filepath.IsAbs(m.Path) {
			t.Fatalf("%q gave a relative path %q", s, m.Path)
		}
		if back, err := ParseGoferBind(goferBindArg(m)); err != nil || back != m {
			t.Fatalf("round trip of %+v (from %q): %+v, %v", m, s, back, err)
		}
	})
}

func TestGoferBinds(t *testing.T) {
	bundle := t.TempDir()
	if err := os.WriteFile(filepath.Join(bundle, "hosts"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	binds := boot.Binds([]boot.SpecMount{
		{Destination: "/etc/hosts", Type: "bind", Source: "hosts", Options: []string{"rbind", "ro"}},
		{Destination: "/data", Type: "bind", Source: bundle, Options: []string{"bind"}},
	})
	got, err := goferBinds(binds, bundle)
	if err != nil {
		t.Fatal(err)
	}
	want := []gofer.Mount{
		{Path: filepath.Join(bundle, "hosts"), ReadOnly: true, Recursive: true},
		{Path: bundle},
	}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("goferBinds = %+v, want %+v", got, want)
	}
	for _, tc := range []struct {
		name   string
		m      boot.SpecMount
		bundle string
		want   string
	}{
		{"relative without bundle", boot.SpecMount{Destination: "/x", Type: "bind", Source: "hosts"}, "", "relative"},
		{"missing", boot.SpecMount{Destination: "/x", Type: "bind", Source: filepath.Join(bundle, "nope")}, bundle, "no such file"},
		{"no source", boot.SpecMount{Destination: "/x", Type: "bind"}, bundle, "no source"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := goferBinds(boot.Binds([]boot.SpecMount{tc.m}), tc.bundle)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("goferBinds = %v, want an error with %q", err, tc.want)
			}
		})
	}
}
