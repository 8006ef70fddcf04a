// Package modbuild builds commands of a released Go module (fetched from
// the module proxy with `go mod download`) into a cache directory, once:
// the tests use it for cri-tools' crictl and critest and for containerd
// 2.x's containerd and ctr, which Debian does not package.
//
// The module cache is read-only and a module's commands build only inside
// that module, so each build runs in a writable copy of the module's
// source with its own go.mod (GOFLAGS=-mod=mod, GOWORK=off, CGO_ENABLED=0).
// Test binaries running side by side (`go test ./test/...`) may want the
// same command at once: a build holds an exclusive flock(2) on a lock file
// in the cache directory.
package modbuild

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// ErrFetch wraps the failure to download the module: the machine has no
// route to the module proxy, so the caller may skip rather than fail.
var ErrFetch = errors.New("cannot fetch the module")

// Command is one program to build from a module.
type Command struct {
	// Name is the binary's name in the cache directory.
	Name string
	// Package is the package path inside the module, as "./cmd/ctr".
	Package string
	// Test builds the package's test binary (`go test -c`) instead.
	Test bool
	// Tags are the build tags.
	Tags []string
}

// Build returns the paths of cmds built from module@version under
// cacheDir/<base of module>-<version>/, building the ones not there yet.
func Build(ctx context.Context, cacheDir, module, version string, cmds ...Command) ([]string, error) {
	dir := filepath.Join(cacheDir, cacheName(module, version))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("modbuild: %w", err)
	}
	paths := make([]string, len(cmds))
	var todo []int
	for i, c := range cmds {
		paths[i] = filepath.Join(dir, c.Name)
		if _, err := os.Stat(paths[i]); err != nil {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return paths, nil
	}
	unlock, err := lock(filepath.Join(dir, ".lock"))
	if err != nil {
		return nil, err
	}
	defer unlock()
	var src string
	for _, i := range todo {
		// Another process may have built it while this one waited.
		if _, err := os.Stat(paths[i]); err == nil {
			continue
		}
		if src == "" {
			work, err := os.MkdirTemp(dir, "src-")
			if err != nil {
				return nil, fmt.Errorf("modbuild: %w", err)
			}
			defer os.RemoveAll(work)
			if err := copyModule(ctx, module, version, work); err != nil {
				return nil, err
			}
			src = work
		}
		if err := buildOne(ctx, src, cmds[i], paths[i]); err != nil {
			return nil, err
		}
	}
	return paths, nil
}

// cacheName is the cache folder of module@version: the module path's last
// element that is not a major version suffix ("/v2"), then the version.
func cacheName(module, version string) string {
	elems := strings.Split(module, "/")
	name := elems[len(elems)-1]
	if len(elems) > 1 && len(name) > 1 && name[0] == 'v' && strings.Trim(name[1:], "0123456789") == "" {
		name = elems[len(elems)-2]
	}
	return name + "-" + version
}

// lock takes an exclusive flock on path, waiting for it.
func lock(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("modbuild: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("modbuild: flock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}

// copyModule downloads module@version and copies its source into work,
// writable.
func copyModule(ctx context.Context, module, version, work string) error {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", module+"@"+version)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		return fmt.Errorf("%w %s@%s: %v %s%s", ErrFetch, module, version, err, out, msg)
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out, &mod); err != nil {
		return fmt.Errorf("modbuild: go mod download's answer: %w", err)
	}
	if mod.Dir == "" {
		return fmt.Errorf("%w %s@%s: %s", ErrFetch, module, version, mod.Error)
	}
	if out, err := exec.CommandContext(ctx, "cp", "-r", mod.Dir+"/.", work).CombinedOutput(); err != nil {
		return fmt.Errorf("modbuild: copying %s: %v\n%s", mod.Dir, err, out)
	}
	if out, err := exec.CommandContext(ctx, "chmod", "-R", "u+w", work).CombinedOutput(); err != nil {
		return fmt.Errorf("modbuild: chmod %s: %v\n%s", work, err, out)
	}
	return nil
}

// buildOne builds c in src and moves the binary to out.
func buildOne(ctx context.Context, src string, c Command, out string) error {
	tmp := out + ".tmp"
	args := []string{"build"}
	if c.Test {
		args = []string{"test", "-c"}
	}
	if len(c.Tags) > 0 {
		args = append(args, "-tags", strings.Join(c.Tags, " "))
	}
	args = append(args, "-o", tmp, c.Package)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=mod", "GOWORK=off")
	if msg, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("modbuild: go %s in %s: %v\n%s", strings.Join(args, " "), src, err, msg)
	}
	if err := os.Rename(tmp, out); err != nil {
		return fmt.Errorf("modbuild: %w", err)
	}
	return nil
}

// Containerd2Version is the containerd 2.x release the tests build.
const Containerd2Version = "v2.4.2"

// Containerd2Bins are the paths of containerd 2.x's programs.
type Containerd2Bins struct {
	Containerd string // the daemon
	Ctr        string // its client
	// RuncShim is containerd-shim-runc-v2 of the same release: Debian's
	// (1.6) cannot answer 2.4's bootstrap.
	RuncShim string
}

// Containerd2 builds (once per cache directory) containerd 2.x's daemon,
// ctr and runc shim from github.com/containerd/containerd/v2 with the
// build tags of its Makefile. Without cgo the btrfs snapshotter is left
// out, as its build tag says.
func Containerd2(ctx context.Context, cacheDir string) (Containerd2Bins, error) {
	paths, err := Build(ctx, cacheDir, "github.com/containerd/containerd/v2", Containerd2Version,
		Command{Name: "containerd", Package: "./cmd/containerd", Tags: []string{"urfave_cli_no_docs", "no_btrfs"}},
		Command{Name: "ctr", Package: "./cmd/ctr", Tags: []string{"urfave_cli_no_docs"}},
		Command{Name: "containerd-shim-runc-v2", Package: "./cmd/containerd-shim-runc-v2", Tags: []string{"urfave_cli_no_docs", "no_grpc"}})
	if err != nil {
		return Containerd2Bins{}, err
	}
	return Containerd2Bins{Containerd: paths[0], Ctr: paths[1], RuncShim: paths[2]}, nil
}
