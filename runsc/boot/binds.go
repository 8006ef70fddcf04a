package boot

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/gofer/proto"
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/gofer"
	"github.com/moat-sandbox/moat/sentry/kernel"
)

// This file holds a spec's host bind mounts. The gofer serves each bind
// source as an attach point of its own (gofer.Config.Mounts); the Sentry
// mounts it at its destination, not under the root's overlay: writes
// reach the host, as volumes are meant to, and a read-only bind refuses
// them with EROFS. Both sides number the binds the same way, from the
// same spec mounts: Binds' i-th is attach point i+1.

// Bind is one host bind mount of a spec that the gofer serves.
type Bind struct {
	// Index is the mount's index in the spec's mounts.
	Index int
	// Source is the host path (as the spec gives it); Destination the
	// cleaned path inside the sandbox.
	Source, Destination string
	// ReadOnly is the "ro" option; Recursive is "rbind" (submounts of
	// the source come along), as opposed to "bind" or a bare type "bind",
	// as runc reads them.
	ReadOnly, Recursive bool
	// Attach is the gofer's attach point for it.
	Attach uint32
}

// IsBind reports whether m is a bind mount: type "bind", or a "bind" or
// "rbind" option, as runc decides.
func IsBind(m SpecMount) bool {
	return m.Type == "bind" || slices.Contains(m.Options, "bind") || slices.Contains(m.Options, "rbind")
}

// bindSkipped says why a bind mount at dst is not served, or "" if it is.
// The Sentry's own file systems stay: a host bind over /proc, /sys, /dev
// or under /proc and /sys would show the sandbox host objects its kernel
// does not serve (the host's mqueue, cgroup tree, shared memory).
func bindSkipped(dst string) string {
	switch {
	case dst == "/", dst == "/proc", dst == "/sys", dst == "/dev", dst == "/dev/pts":
		return "the sandbox mounts its own file system there"
	case dst == "/dev/shm", dst == "/dev/mqueue":
		return "the sandbox's IPC objects are its own"
	case strings.HasPrefix(dst, "/proc/"), strings.HasPrefix(dst, "/sys/"):
		return "the sandbox's /proc and /sys are its own"
	}
	return ""
}

// BindSkipped says why the bind mount m is not served and mounted, or ""
// if it is.
func BindSkipped(m SpecMount) string {
	return bindSkipped(path.Clean("/" + m.Destination))
}

// Binds returns the host bind mounts of mounts that the gofer serves, in
// spec order; the i-th is attach point i+1.
func Binds(mounts []SpecMount) []Bind {
	var out []Bind
	for i, m := range mounts {
		if !IsBind(m) {
			continue
		}
		dst := path.Clean("/" + m.Destination)
		if bindSkipped(dst) != "" {
			continue
		}
		flags, _, _ := mountOptions(m.Options)
		out = append(out, Bind{
			Index:       i,
			Source:      m.Source,
			Destination: dst,
			ReadOnly:    flags.ReadOnly,
			Recursive:   slices.Contains(m.Options, "rbind"),
			Attach:      uint32(len(out) + 1),
		})
	}
	return out
}

// Volume returns the spec mount of a `runsc do --volume`: a recursive
// bind of the host's source at dst, read-only if ro.
func Volume(source, dst string, ro bool) SpecMount {
	opts := []string{"rbind", "rw"}
	if ro {
		opts[1] = "ro"
	}
	return SpecMount{Destination: dst, Type: "bind", Source: source, Options: opts}
}

// mountBind mounts b, served by the gofer behind client, at its
// destination, making the mount point if it is missing (a directory, or
// an empty file for a file bind, and their parents), as runc does in the
// container's root.
func mountBind(mns *fs.MountNamespace, client *proto.Client, b Bind, flags fs.MountFlags) error {
	ctx := kernel.Background()
	if client == nil {
		return fmt.Errorf("no gofer connection: %w", unix.EINVAL)
	}
	f, err := gofer.NewMount(client, b.Attach, !flags.ReadOnly)
	if err != nil {
		return err
	}
	if path.IsAbs(b.Source) {
		// mountinfo shows the host directory as the mount's root, as
		// Linux shows a bind's.
		f.SetMountInfo(fs.MountInfo{Root: path.Clean(b.Source)})
	}
	st, err := f.Root().Stat(ctx)
	if err != nil {
		return fmt.Errorf("source: %w", err)
	}
	root := mns.Root()
	dst, err := followDest(ctx, root, b.Destination)
	if err != nil {
		return fmt.Errorf("mount point: %w", err)
	}
	resolve := func() (fs.VirtualDentry, error) {
		return fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: dst, FollowFinal: true})
	}
	at, err := resolve()
	if err == unix.ENOENT {
		if st.IsDir() {
			err = mkdirAll(ctx, root, dst)
		} else {
			err = mkdirAll(ctx, root, path.Dir(dst))
			if err == nil {
				err = fs.Mknod(ctx, &fs.Lookup{Root: root, Start: root, Path: dst}, unix.S_IFREG|0o644, 0)
			}
		}
		if err == nil || err == unix.EEXIST {
			at, err = resolve()
		}
	}
	if err != nil {
		return fmt.Errorf("mount point: %w", err)
	}
	if _, err := mns.Mount(ctx, at, f, flags); err != nil {
		return err
	}
	return nil
}

// followDest follows symlinks at the end of dst inside the sandbox's own
// view (an image's /etc/resolv.conf may be a link to a file that does not
// exist yet), so that a missing mount point is made where the link
// leads, as runc does; ".." never climbs above the root.
func followDest(ctx fs.Context, root fs.VirtualDentry, dst string) (string, error) {
	for range 40 { // Linux's limit on nested links
		vd, err := fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: dst})
		if err != nil {
			return dst, nil // missing: made at dst
		}
		link, ok := vd.Dentry.Node().(fs.SymlinkNode)
		if !ok {
			return dst, nil
		}
		target, err := link.Readlink(ctx)
		if err != nil {
			return "", err
		}
		if path.IsAbs(target) {
			dst = path.Clean(target)
		} else {
			dst = path.Join(path.Dir(dst), target)
		}
	}
	return "", unix.ELOOP
}
