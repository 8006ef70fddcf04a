package boot

import (
	"fmt"
	"log/slog"
	"path"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/gofer/proto"
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel"
)

// SpecMount is one entry of an OCI spec's mounts list.
type SpecMount struct {
	Destination string   `json:"destination"`
	Type        string   `json:"type,omitempty"`
	Source      string   `json:"source,omitempty"`
	Options     []string `json:"options,omitempty"`
}

// providedMounts are the destinations the Sentry mounts itself at boot,
// with the type a spec gives them: a spec mount of that type there is
// already in place.
var providedMounts = map[string]string{
	"/proc":    "proc",
	"/sys":     "sysfs",
	"/dev":     "tmpfs",
	"/dev/pts": "devpts",
}

// mountOptions splits a spec mount's options into per-mount flags, the
// propagation and bind options, and the file system's own data.
func mountOptions(opts []string) (flags fs.MountFlags, bind bool, data string) {
	var rest []string
	for _, o := range opts {
		switch o {
		// The r-prefixed forms are runc's recursive mount attributes; a
		// Sentry mount has no submounts of its own to apply them to.
		case "ro", "rro":
			flags.ReadOnly = true
		case "rw", "rrw":
			flags.ReadOnly = false
		case "nosuid", "rnosuid":
			flags.NoSUID = true
		case "suid", "rsuid":
			flags.NoSUID = false
		case "nodev", "rnodev":
			flags.NoDev = true
		case "dev", "rdev":
			flags.NoDev = false
		case "noexec", "rnoexec":
			flags.NoExec = true
		case "exec", "rexec":
			flags.NoExec = false
		case "bind", "rbind":
			bind = true
		case "private", "rprivate", "shared", "rshared", "slave", "rslave", "unbindable", "runbindable",
			"atime", "noatime", "relatime", "norelatime", "strictatime", "nostrictatime",
			"diratime", "nodiratime", "lazytime", "nolazytime", "sync", "async", "dirsync",
			"silent", "loud", "mand", "nomand", "iversion", "noiversion", "defaults":
			// Propagation has no peers in the Sentry's single namespace;
			// access-time and sync policies change nothing here.
		default:
			rest = append(rest, o)
		}
	}
	return flags, bind, strings.Join(rest, ",")
}

// applySpecMounts mounts what an OCI spec asks for inside the sandbox:
// its mounts of file systems the Sentry makes (tmpfs, proc, sysfs;
// /dev/shm's options replace the default ones), then maskedPaths (an
// empty read-only tmpfs over directories, /dev/null over files) and
// readonlyPaths (read-only bind mounts over themselves). Host bind mounts
// are served by the gofer behind client, each as its attach point (see
// binds.go), and mounted in spec order among the others. Types the
// Sentry does not have, and binds over the Sentry's own /proc, /sys and
// /dev, are logged and left out (runsc create has already warned about
// them).
func applySpecMounts(k *kernel.Kernel, mns *fs.MountNamespace, cfg Config, client *proto.Client, log *slog.Logger) error {
	ctx := kernel.Background()
	root := mns.Root()
	resolve := func(p string) (fs.VirtualDentry, error) {
		return fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: p, FollowFinal: true})
	}
	binds := make(map[int]Bind)
	for _, b := range Binds(cfg.Mounts) {
		binds[b.Index] = b
	}
	for i, m := range cfg.Mounts {
		dst := path.Clean("/" + m.Destination)
		flags, _, data := mountOptions(m.Options)
		if t, ok := providedMounts[dst]; ok && t == m.Type {
			continue
		}
		if IsBind(m) {
			b, ok := binds[i]
			if !ok {
				log.Info("spec mount not applied", "index", i, "destination", dst, "source", m.Source, "reason", bindSkipped(dst))
				continue
			}
			if err := mountBind(mns, client, b, flags); err != nil {
				return fmt.Errorf("mounts[%d] (bind %s on %s): %w", i, m.Source, dst, err)
			}
			log.Debug("bind mount", "index", i, "destination", dst, "source", m.Source, "attach", b.Attach, "ro", flags.ReadOnly)
			continue
		}
		newFS, ok := k.Filesystem(m.Type)
		if !ok {
			log.Info("spec mount not applied: file system type not available in the sandbox", "index", i, "destination", dst, "type", m.Type)
			continue
		}
		f, err := newFS(ctx, m.Source, flags.ReadOnly, data)
		if err != nil {
			return fmt.Errorf("mounts[%d] (%s on %s): %w", i, m.Type, dst, err)
		}
		at, err := resolve(dst)
		if err == unix.ENOENT {
			if err = mkdirAll(ctx, root, dst); err == nil {
				at, err = resolve(dst)
			}
		}
		if err != nil {
			return fmt.Errorf("mounts[%d] (%s on %s): mount point: %w", i, m.Type, dst, err)
		}
		if dst == "/dev/shm" {
			// The spec's /dev/shm replaces the default one.
			if old, err := fs.MountAt(at); err == nil && old.Filesystem().Type() == "tmpfs" {
				if err := mns.Umount(old, true); err != nil {
					return fmt.Errorf("mounts[%d]: replacing /dev/shm: %w", i, err)
				}
				if at, err = resolve(dst); err != nil {
					return fmt.Errorf("mounts[%d]: /dev/shm: %w", i, err)
				}
			}
		}
		if _, err := mns.Mount(ctx, at, f, flags); err != nil {
			return fmt.Errorf("mounts[%d] (%s on %s): %w", i, m.Type, dst, err)
		}
	}
	for _, p := range cfg.MaskedPaths {
		if err := maskPath(k, mns, resolve, p); err != nil {
			return fmt.Errorf("maskedPaths %s: %w", p, err)
		}
	}
	for _, p := range cfg.ReadonlyPaths {
		vd, err := resolve(p)
		if err == unix.ENOENT {
			continue
		}
		if err != nil {
			return fmt.Errorf("readonlyPaths %s: %w", p, err)
		}
		fl := vd.Mount.Flags()
		fl.ReadOnly = true
		if _, err := mns.BindMountRec(ctx, vd, vd, fl, true); err != nil {
			return fmt.Errorf("readonlyPaths %s: %w", p, err)
		}
	}
	return nil
}

// maskPath hides p: an empty read-only tmpfs over a directory, /dev/null
// over anything else. Paths that do not exist need no mask.
func maskPath(k *kernel.Kernel, mns *fs.MountNamespace, resolve func(string) (fs.VirtualDentry, error), p string) error {
	ctx := kernel.Background()
	vd, err := resolve(p)
	if err == unix.ENOENT || err == unix.ENOTDIR {
		return nil
	}
	if err != nil {
		return err
	}
	st, err := vd.Stat(ctx)
	if err != nil {
		return err
	}
	if st.IsDir() {
		newFS, ok := k.Filesystem("tmpfs")
		if !ok {
			return unix.ENODEV
		}
		f, err := newFS(ctx, "tmpfs", true, "mode=0555")
		if err != nil {
			return err
		}
		_, err = mns.Mount(ctx, vd, f, fs.MountFlags{ReadOnly: true, NoSUID: true, NoDev: true, NoExec: true})
		return err
	}
	null, err := resolve("/dev/null")
	if err != nil {
		return fmt.Errorf("/dev/null: %w", err)
	}
	_, err = mns.BindMount(ctx, vd, null, fs.MountFlags{ReadOnly: true, NoSUID: true, NoExec: true})
	return err
}

// mkdirAll makes the directory p and its missing parents (0755), as
// runtimes make mount points in the container's root.
func mkdirAll(ctx fs.Context, root fs.VirtualDentry, p string) error {
	cur := ""
	for _, part := range strings.Split(strings.Trim(p, "/"), "/") {
		cur += "/" + part
		err := fs.Mkdir(ctx, &fs.Lookup{Root: root, Start: root, Path: cur}, 0o755)
		if err != nil && err != unix.EEXIST {
			return err
		}
	}
	return nil
}
