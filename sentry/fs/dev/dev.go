// Package dev is the Sentry's own /dev, laid out as container runtimes
// lay out theirs (a tmpfs): the memory devices null, zero, full, random
// and urandom, tty, the pseudo-terminals pts/ (a devpts instance, see
// devpts) with ptmx a symlink to pts/ptmx, shm (empty for now), and the
// symlinks fd, stdin, stdout and stderr into /proc/self/fd. It is built
// with the synth kit; the kernel may add entries to the directory New
// returns. A devpts mounted over pts/ takes over /dev/ptmx too, as on
// Linux.
//
// Random bytes come from the Sentry's getrandom(2). There are no locks
// beyond synth's.
package dev

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/devpts"
	"github.com/moat-sandbox/moat/sentry/fs/synth"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

// TmpfsMagic is statfs's f_type for /dev (a tmpfs on Linux).
const TmpfsMagic = 0x01021994

// FSType is /dev's type in /proc/mounts: runtimes mount a tmpfs there.
const FSType = "tmpfs"

// Device numbers of the memory devices (major 1).
var (
	NullDev    = unix.Mkdev(1, 3)
	ZeroDev    = unix.Mkdev(1, 5)
	FullDev    = unix.Mkdev(1, 7)
	RandomDev  = unix.Mkdev(1, 8)
	URandomDev = unix.Mkdev(1, 9)
)

// TTYDev is /dev/tty's device number.
var TTYDev = unix.Mkdev(5, 0)

// TTYOpener is implemented by contexts whose task may have a controlling
// terminal: opening /dev/tty opens it.
type TTYOpener interface {
	// OpenControllingTTY opens the task's controlling terminal with the
	// open(2) flags as the file at vd (/dev/tty), or fails with ENXIO if
	// it has none.
	OpenControllingTTY(vd fs.VirtualDentry, flags uint32) (*fs.FileDescription, error)
}

// ttyDevice is /dev/tty: the opener's controlling terminal, ENXIO when it
// has none.
func ttyDevice() *synth.Device {
	return &synth.Device{
		Attr: synth.Attr{Mode: 0o666},
		Rdev: TTYDev,
		OpenFile: func(ctx fs.Context, vd fs.VirtualDentry, flags uint32) (*fs.FileDescription, error) {
			if o, ok := ctx.(TTYOpener); ok {
				return o.OpenControllingTTY(vd, flags)
			}
			return nil, unix.ENXIO
		},
	}
}

// New returns /dev as a file system and its root directory, to which the
// caller may add nodes. Terminal signals go nowhere; see NewWithOptions.
func New() (*fs.Filesystem, *synth.Dir) {
	f, root, _ := NewWithOptions(Options{})
	return f, root
}

// Options configure NewWithOptions.
type Options struct {
	// TerminalSignals receives the signals pseudo-terminals raise (^C to
	// the foreground process group, SIGWINCH, SIGHUP).
	TerminalSignals devpts.Signaller
}

// NewWithOptions is New, also returning the pseudo-terminals of /dev/pts
// and /dev/ptmx.
func NewWithOptions(o Options) (*fs.Filesystem, *synth.Dir, *devpts.Devpts) {
	// Until a devpts is mounted over it, pts/ is an instance of this
	// /dev's own, whose ptmx anyone may open (ptmxmode=0666, as runtimes
	// mount it).
	ptsFS, dp := devpts.NewFilesystem(o.TerminalSignals, devpts.Options{PtmxMode: 0o666, Mode: 0o620})
	root := synth.NewDir(0o755, map[string]fs.Node{
		"pts":     ptsFS.Root().Node(),
		"ptmx":    synth.NewSymlink("pts/ptmx"),
		"null":    device(NullDev, func() fs.FileImpl { return &nullFile{} }),
		"zero":    device(ZeroDev, func() fs.FileImpl { return &zeroFile{} }),
		"full":    device(FullDev, func() fs.FileImpl { return &fullFile{} }),
		"random":  device(RandomDev, func() fs.FileImpl { return &randomFile{} }),
		"urandom": device(URandomDev, func() fs.FileImpl { return &randomFile{} }),
		"fd":      synth.NewSymlink("/proc/self/fd"),
		"stdin":   synth.NewSymlink("/proc/self/fd/0"),
		"stdout":  synth.NewSymlink("/proc/self/fd/1"),
		"stderr":  synth.NewSymlink("/proc/self/fd/2"),
		"tty":     ttyDevice(),
		// No memory file system exists yet: /dev/shm is there (programs
		// look for it) but nothing can be created in it.
		"shm": synth.NewDir(0o1777, nil),
	})
	return synth.NewFilesystem(FSType, TmpfsMagic, root, false), root, dp
}

func device(rdev uint64, impl func() fs.FileImpl) *synth.Device {
	return &synth.Device{
		Attr: synth.Attr{Mode: 0o666},
		Rdev: rdev,
		OpenFile: func(_ fs.Context, vd fs.VirtualDentry, flags uint32) (*fs.FileDescription, error) {
			return fs.NewFileDescription(impl(), vd, flags, fs.FDOptions{}), nil
		},
	}
}

// nullFile is /dev/null: reads see end of file, writes vanish.
type nullFile struct {
	fs.FileDefaults
	fs.NotPollable
}

func (*nullFile) Read(fs.Context, *fs.FileDescription, []byte, int64) (int, error) { return 0, nil }

func (*nullFile) Write(_ fs.Context, _ *fs.FileDescription, src []byte, _ int64) (int, error) {
	return len(src), nil
}

// DiscardsWrites tells write(2) that /dev/null (and /dev/zero) never
// look at the data, so even a bad buffer is written in full.
func (*nullFile) DiscardsWrites() bool { return true }

// Seek always lands at 0, as Linux's null_lseek.
func (*nullFile) Seek(fs.Context, *fs.FileDescription, int64, int64, int) (int64, error) {
	return 0, nil
}

// zeroFile is /dev/zero: reads give zeros, writes vanish.
type zeroFile struct{ nullFile }

func (*zeroFile) Read(_ fs.Context, _ *fs.FileDescription, dst []byte, _ int64) (int, error) {
	clear(dst)
	return len(dst), nil
}

// fullFile is /dev/full: reads give zeros, writes fail with ENOSPC.
type fullFile struct{ zeroFile }

func (*fullFile) Write(fs.Context, *fs.FileDescription, []byte, int64) (int, error) {
	return 0, unix.ENOSPC
}

// DiscardsWrites is false: /dev/full fails every write.
func (*fullFile) DiscardsWrites() bool { return false }

// randomFile is /dev/random and /dev/urandom.
type randomFile struct {
	fs.FileDefaults
}

func (*randomFile) Read(_ fs.Context, _ *fs.FileDescription, dst []byte, _ int64) (int, error) {
	total := 0
	for total < len(dst) {
		n, err := unix.Getrandom(dst[total:], 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			if total > 0 {
				return total, nil
			}
			return 0, err
		}
		total += n
	}
	return total, nil
}

// Write accepts and discards: the Sentry's pool is the host's.
func (*randomFile) Write(_ fs.Context, _ *fs.FileDescription, src []byte, _ int64) (int, error) {
	return len(src), nil
}

// Seek is accepted and does nothing, as Linux's for these devices.
func (*randomFile) Seek(fs.Context, *fs.FileDescription, int64, int64, int) (int64, error) {
	return 0, nil
}

func (*randomFile) Readiness(mask waiter.EventMask) waiter.EventMask {
	return mask & fs.DefaultPollMask
}

func (*randomFile) EventRegister(*waiter.Entry)   {}
func (*randomFile) EventUnregister(*waiter.Entry) {}
