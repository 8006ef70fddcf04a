package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/moat-sandbox/moat/gofer"
	"github.com/moat-sandbox/moat/runsc/boot"
)

// This file passes a container's host bind mounts to its gofer, which
// serves each source as an attach point (see runsc/boot/binds.go for
// the Sentry's side). `runsc gofer` takes one --bind per served bind, in
// attach point order:
//
//	--bind=ro|rw[,rec]:SOURCE
//
// SOURCE is an absolute host path; the gofer resolves its symlinks on the
// host side (as runc does) before it confines itself to the sources.

// goferBinds returns the gofer's attach points for the binds the sandbox
// mounts: each source made absolute (a relative one is relative to
// bundle, as the OCI spec says) and checked to exist, so that a missing
// source fails the start with a clear error.
func goferBinds(binds []boot.Bind, bundle string) ([]gofer.Mount, error) {
	var out []gofer.Mount
	for _, b := range binds {
		src := b.Source
		if src == "" {
			return nil, fmt.Errorf("mounts[%d] (bind on %s): no source", b.Index, b.Destination)
		}
		if !filepath.IsAbs(src) {
			if bundle == "" {
				return nil, fmt.Errorf("mounts[%d] (bind on %s): source %q is relative, and the bundle directory is unknown", b.Index, b.Destination, src)
			}
			src = filepath.Join(bundle, src)
		}
		if _, err := os.Stat(src); err != nil {
			return nil, fmt.Errorf("mounts[%d] (bind on %s): source: %w", b.Index, b.Destination, err)
		}
		out = append(out, gofer.Mount{Path: filepath.Clean(src), ReadOnly: b.ReadOnly, Recursive: b.Recursive})
	}
	return out, nil
}

// goferBindArg is the --bind argument of m.
func goferBindArg(m gofer.Mount) string {
	opts := "rw"
	if m.ReadOnly {
		opts = "ro"
	}
	if m.Recursive {
		opts += ",rec"
	}
	return opts + ":" + m.Path
}

// ParseGoferBind decodes a `runsc gofer --bind` argument.
func ParseGoferBind(arg string) (gofer.Mount, error) {
	opts, path, ok := strings.Cut(arg, ":")
	if !ok || !filepath.IsAbs(path) {
		return gofer.Mount{}, fmt.Errorf("bind %q is not of the form ro|rw[,rec]:/SOURCE", arg)
	}
	m := gofer.Mount{Path: path}
	for i, o := range strings.Split(opts, ",") {
		switch {
		case i == 0 && o == "ro":
			m.ReadOnly = true
		case i == 0 && o == "rw":
		case i > 0 && o == "rec":
			m.Recursive = true
		default:
			return gofer.Mount{}, fmt.Errorf("bind %q: unknown option %q", arg, o)
		}
	}
	return m, nil
}
