package modbuild

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func TestCacheName(t *testing.T) {
	for _, tc := range []struct{ module, version, want string }{
		{"sigs.k8s.io/cri-tools", "v1.36.0", "cri-tools-v1.36.0"},
		{"github.com/containerd/containerd/v2", "v2.4.2", "containerd-v2.4.2"},
		{"example.com/v2", "v2.0.0", "example.com-v2.0.0"},
		{"example.com/tool/v", "v1.0.0", "v-v1.0.0"},
		{"plain", "v0.1.0", "plain-v0.1.0"},
	} {
		t.Run(tc.module, func(t *testing.T) {
			if got := cacheName(tc.module, tc.version); got != tc.want {
				t.Errorf("cacheName(%q, %q) = %q, want %q", tc.module, tc.version, got, tc.want)
			}
		})
	}
}

// TestBuildCached checks that binaries already in the cache are returned
// without a download or a build (the module named does not exist).
func TestBuildCached(t *testing.T) {
	cache := t.TempDir()
	dir := filepath.Join(cache, "nosuch-v1.0.0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/true\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	paths, err := Build(context.Background(), cache, "example.invalid/nosuch", "v1.0.0",
		Command{Name: "a", Package: "./cmd/a"}, Command{Name: "b", Package: "./cmd/b", Test: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "a"), filepath.Join(dir, "b")}
	if len(paths) != 2 || paths[0] != want[0] || paths[1] != want[1] {
		t.Errorf("Build = %q, want %q", paths, want)
	}
}
