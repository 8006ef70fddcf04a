package dev

// This file is /dev as runtimes make it: a tmpfs (mounted from a spec's
// mounts) that Populate fills with the Sentry's devices as nodes and the
// standard symlinks, whose device nodes OpenDevice serves. Being a real
// tmpfs, it takes mount points (/dev/mqueue, /dev/pts, a file bind at
// /dev/termination-log) and the spec's linux.devices nodes.

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
)

// OpenDevice opens a character device node by its number: the memory
// devices and /dev/tty. Other numbers are ENXIO, as Linux answers for a
// device no driver serves (the sandbox opens no host devices; a ptmx
// node is served only as pts/ptmx of a devpts).
func OpenDevice(ctx fs.Context, vd fs.VirtualDentry, rdev uint64, flags uint32) (*fs.FileDescription, error) {
	var impl fs.FileImpl
	switch rdev {
	case NullDev:
		impl = &nullFile{}
	case ZeroDev:
		impl = &zeroFile{}
	case FullDev:
		impl = &fullFile{}
	case RandomDev, URandomDev:
		impl = &randomFile{}
	case TTYDev:
		if o, ok := ctx.(TTYOpener); ok {
			return o.OpenControllingTTY(vd, flags)
		}
		return nil, unix.ENXIO
	default:
		return nil, unix.ENXIO
	}
	return fs.NewFileDescription(impl, vd, flags, fs.FDOptions{}), nil
}

// Devices are the character devices Populate makes, as runc makes them.
var Devices = []struct {
	Name string
	Rdev uint64
}{
	{"null", NullDev},
	{"zero", ZeroDev},
	{"full", FullDev},
	{"random", RandomDev},
	{"urandom", URandomDev},
	{"tty", TTYDev},
}

// Symlinks are the links Populate makes, name to target.
var Symlinks = [][2]string{
	{"fd", "/proc/self/fd"},
	{"stdin", "/proc/self/fd/0"},
	{"stdout", "/proc/self/fd/1"},
	{"stderr", "/proc/self/fd/2"},
	{"ptmx", "pts/ptmx"},
}

// Populate fills the directory dir (the root of a new /dev tmpfs) with
// the default devices (0666), the symlinks, and the directories pts and
// shm (mount points). ctx needs CAP_MKNOD. Names that exist are left.
func Populate(ctx fs.Context, dir fs.VirtualDentry) error {
	at := func(name string) *fs.Lookup { return &fs.Lookup{Root: dir, Start: dir, Path: name} }
	for _, d := range Devices {
		if err := fs.Mknod(ctx, at(d.Name), unix.S_IFCHR|0o666, d.Rdev); err != nil && err != unix.EEXIST {
			return fmt.Errorf("/dev/%s: %w", d.Name, err)
		}
		// The creator's umask may have cleared bits.
		if vd, err := fs.Resolve(ctx, at(d.Name)); err == nil {
			fs.Chmod(ctx, vd, 0o666)
		}
	}
	for _, l := range Symlinks {
		if err := fs.Symlink(ctx, at(l[0]), l[1]); err != nil && err != unix.EEXIST {
			return fmt.Errorf("/dev/%s: %w", l[0], err)
		}
	}
	for _, d := range []struct {
		name string
		mode uint32
	}{{"pts", 0o755}, {"shm", 0o1777}} {
		if err := fs.Mkdir(ctx, at(d.name), d.mode); err != nil && err != unix.EEXIST {
			return fmt.Errorf("/dev/%s: %w", d.name, err)
		}
		if vd, err := fs.Resolve(ctx, at(d.name)); err == nil {
			fs.Chmod(ctx, vd, d.mode)
		}
	}
	return nil
}
