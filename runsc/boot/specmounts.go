package boot

import (
	"fmt"
	"log/slog"
	"path"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/gofer/proto"
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/dev"
	"github.com/moat-sandbox/moat/sentry/fs/devpts"
	"github.com/moat-sandbox/moat/sentry/fs/tmpfs"
	"github.com/moat-sandbox/moat/sentry/kernel"
)

// SpecMount is one entry of an OCI spec's mounts list.
type SpecMount struct {
	Destination string   `json:"destination"`
	Type        string   `json:"type,omitempty"`
	Source      string   `json:"source,omitempty"`
	Options     []string `json:"options,omitempty"`
}

// bootMounts are the destinations the Sentry mounts at boot before the
// spec's mounts (mountSpecial), with the type a spec gives them. A spec
// mount of that type there replaces the boot's, in spec order, so that
// mountinfo lists the spec's mounts in order, as runtimes mount them.
var bootMounts = map[string]string{
	"/proc":    "proc",
	"/sys":     "sysfs",
	"/dev":     "tmpfs",
	"/dev/shm": "tmpfs",
}

// registerSpecFilesystems makes devpts mountable (by spec mounts and
// mount(2)), with its mount options.
func registerSpecFilesystems(k *kernel.Kernel) {
	k.RegisterFilesystem(devpts.FSType, func(ctx fs.Context, _ string, _ bool, data string) (*fs.Filesystem, error) {
		o, err := devpts.ParseOptions(data, devpts.DefaultOptions())
		if err != nil {
			return nil, err
		}
		uid, gid, err := mounterIDs(ctx, o.UID, o.GID, o.SetUID, o.SetGID)
		if err != nil {
			return nil, err
		}
		o.UID, o.GID = uint32(uid), uint32(gid)
		f, _ := devpts.NewFilesystem(nil, o)
		return f, nil
	})
}

// isDevTmpfs reports whether the spec mount m at dst is the container's
// /dev: a tmpfs whose device nodes open the Sentry's devices, filled by
// dev.Populate once mounted.
func isDevTmpfs(dst string, m SpecMount) bool { return dst == "/dev" && m.Type == "tmpfs" }

// newSpecFS returns a new file system for the spec mount m at dst: an
// instance of the type's file system, recording the spec's source.
func newSpecFS(ctx fs.Context, k *kernel.Kernel, dst string, m SpecMount, ro bool, data string) (*fs.Filesystem, error) {
	var f *fs.Filesystem
	if isDevTmpfs(dst, m) {
		opts, err := tmpfs.ParseOptions(data, tmpfs.DefaultOptions(k.MemFile), k.MemFile.Capacity())
		if err != nil {
			return nil, err
		}
		opts.OpenDevice = dev.OpenDevice
		f = tmpfs.New(k.MemFile, opts, nil)
	} else {
		newFS, ok := k.Filesystem(m.Type)
		if !ok {
			return nil, nil
		}
		var err error
		if f, err = newFS(ctx, m.Source, ro, data); err != nil {
			return nil, err
		}
	}
	if m.Source != "" {
		f.SetMountInfo(fs.MountInfo{Source: m.Source})
	}
	return f, nil
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

// applySpecMounts mounts what an OCI spec asks for inside the sandbox,
// in spec order, as runc does: its mounts of file systems the Sentry
// makes (tmpfs, proc, sysfs, devpts, mqueue), each recording the spec's
// source for /proc/self/mountinfo. A spec mount at /proc, /sys, /dev or
// /dev/shm replaces the one the boot made there, so mountinfo lists them
// in the spec's order. A tmpfs at /dev is the container's /dev:
// dev.Populate fills it with the Sentry's devices and the standard
// symlinks (/dev/ptmx leads to pts/ptmx), and a devpts and a /dev/shm
// are mounted in it if the spec has none. Then come the spec's
// linux.devices (devices.go), a read-only /dev turns read-only, and
// maskedPaths (an empty read-only tmpfs over directories, /dev/null over
// files) and readonlyPaths (read-only bind mounts over themselves) are
// applied. Host bind mounts are served by the gofer behind client, each
// as its attach point (see binds.go), and mounted in spec order among
// the others. Types the Sentry does not have, and binds over the
// Sentry's own /proc, /sys and /dev, are logged and left out (runsc
// create has already warned about them).
func applySpecMounts(k *kernel.Kernel, mns *fs.MountNamespace, cfg Config, client *proto.Client, log *slog.Logger) error {
	ctx := kernel.Background()
	root := mns.Root()
	resolve := func(p string) (fs.VirtualDentry, error) {
		return fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: p, FollowFinal: true})
	}
	registerSpecFilesystems(k)
	binds := make(map[int]Bind)
	for _, b := range Binds(cfg.Mounts) {
		binds[b.Index] = b
	}
	devTmpfs, ptsMounted, shmMounted := false, false, false
	var devRO func()
	for i, m := range cfg.Mounts {
		dst := path.Clean("/" + m.Destination)
		flags, _, data := mountOptions(m.Options)
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
		f, err := newSpecFS(ctx, k, dst, m, flags.ReadOnly, data)
		if err != nil {
			return fmt.Errorf("mounts[%d] (%s on %s): %w", i, m.Type, dst, err)
		}
		if f == nil {
			log.Info("spec mount not applied: file system type not available in the sandbox", "index", i, "destination", dst, "type", m.Type)
			continue
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
		if t, ok := bootMounts[dst]; ok && t == m.Type {
			// The spec's mount replaces the boot's (and what is
			// mounted below it: a new /dev has no /dev/shm yet).
			if old, err := fs.MountAt(at); err == nil && old != root.Mount && old.Filesystem().Type() == t {
				if err := mns.Umount(old, true); err != nil {
					return fmt.Errorf("mounts[%d]: replacing %s: %w", i, dst, err)
				}
				if at, err = resolve(dst); err != nil {
					return fmt.Errorf("mounts[%d]: %s: %w", i, dst, err)
				}
			}
		}
		mflags := flags
		if isDevTmpfs(dst, m) {
			// A read-only /dev is made read-only at the end, once
			// its devices and mount points are in, as runc does.
			mflags.ReadOnly = false
		}
		nm, err := mns.Mount(ctx, at, f, mflags)
		if err != nil {
			return fmt.Errorf("mounts[%d] (%s on %s): %w", i, m.Type, dst, err)
		}
		if isDevTmpfs(dst, m) {
			if err := dev.Populate(ctx, fs.VirtualDentry{Mount: nm, Dentry: nm.Root()}); err != nil {
				return fmt.Errorf("mounts[%d]: %w", i, err)
			}
			if flags.ReadOnly {
				devRO = func() { nm.SetFlags(flags) }
			}
			devTmpfs = true
		}
		ptsMounted = ptsMounted || dst == "/dev/pts"
		shmMounted = shmMounted || dst == "/dev/shm"
	}
	if devTmpfs && !ptsMounted {
		// Without one, /dev/ptmx would lead nowhere: mount a devpts as
		// runtimes' default specs do.
		if err := mountDefaultPts(mns); err != nil {
			return err
		}
	}
	if devTmpfs && !shmMounted {
		// The boot's /dev/shm went with its /dev: the sandbox keeps one,
		// as mountSpecial makes it.
		if err := mountDefaultShm(k, mns); err != nil {
			return err
		}
	}
	if err := makeDevices(mns, cfg.Devices, log); err != nil {
		return err
	}
	if devRO != nil {
		devRO()
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

// mountDefaultPts mounts a devpts (nosuid,noexec,ptmxmode=0666) at
// /dev/pts.
func mountDefaultPts(mns *fs.MountNamespace) error {
	ctx := kernel.Background()
	root := mns.Root()
	at, err := fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: "/dev/pts", FollowFinal: true})
	if err != nil {
		return nil
	}
	pts, _ := devpts.NewFilesystem(nil, devpts.Options{PtmxMode: 0o666, Mode: 0o620})
	if _, err := mns.Mount(ctx, at, pts, fs.MountFlags{NoSUID: true, NoExec: true}); err != nil {
		return fmt.Errorf("mounting /dev/pts: %w", err)
	}
	return nil
}

// mountDefaultShm mounts a tmpfs (rw,nosuid,nodev) at /dev/shm, as
// Linux's container runtimes mount it, where /dev has a shm directory.
func mountDefaultShm(k *kernel.Kernel, mns *fs.MountNamespace) error {
	ctx := kernel.Background()
	root := mns.Root()
	at, err := fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: "/dev/shm", FollowFinal: true})
	if err != nil {
		return nil
	}
	shm := tmpfs.New(k.MemFile, tmpfs.DefaultOptions(k.MemFile), nil)
	shm.SetMountInfo(fs.MountInfo{Source: "shm"})
	if _, err := mns.Mount(ctx, at, shm, fs.MountFlags{NoSUID: true, NoDev: true}); err != nil {
		return fmt.Errorf("mounting /dev/shm: %w", err)
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
