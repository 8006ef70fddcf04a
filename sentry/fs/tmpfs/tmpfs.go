// Package tmpfs implements a file system whose contents live in the
// Sentry's memory: /dev/shm, `mount -t tmpfs`, the files of memfd_create,
// and later the upper layer of the root overlay.
//
// A regular file's data is an mm.Object (pages in the memory file, shared
// with every mapping of the file); directories, symlinks, fifos, sockets
// and device nodes are plain Go objects. The VFS (sentry/fs) resolves
// paths, checks permissions and serializes changes of a directory; this
// package keeps the tree, link counts, sizes, times, modes, owners and
// extended attributes, and enforces the mount's size= and nr_inodes=
// limits (ENOSPC).
//
// Lifetime: a node lives while a directory names it or a file description
// is open on it. A regular file's Object has one reference for the node,
// dropped when the node is neither linked nor open; mappings hold their
// own references, so a mapped file's pages outlive its last close.
//
// Locks (outer first): filesystem.mu (the tree: directory entries, link
// counts, the inode count), then inode.mu (attributes), then mm.Object's
// lock. No lock is held while calling into the VFS.
package tmpfs

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/mm"
)

// Magic is statfs's f_type for tmpfs (TMPFS_MAGIC).
const Magic = 0x01021994

// FSType is the file system type name mount(2) and /proc/mounts use.
const FSType = "tmpfs"

const pageSize = 4096

// Options are a tmpfs mount's options.
type Options struct {
	// Size bounds the bytes of file data (size=, nr_blocks=); 0: none.
	Size int64
	// Inodes bounds the number of nodes (nr_inodes=); 0: none.
	Inodes uint64
	// Mode, UID and GID are the root directory's (mode=, uid=, gid=);
	// Mode 0 means 01777.
	Mode uint32
	UID  auth.KUID
	GID  auth.KGID
	// SetUID and SetGID say whether uid= and gid= were given (otherwise
	// the root belongs to the mounter).
	SetUID, SetGID bool
	// OpenDevice opens character and block device nodes (by their rdev);
	// without it, opening one gives ENXIO.
	OpenDevice func(ctx fs.Context, vd fs.VirtualDentry, rdev uint64, flags uint32) (*fs.FileDescription, error)
}

// DefaultOptions returns Linux's defaults: half of the memory (the host's
// RAM, or the memory file if that is smaller) for data, and as many inodes
// as that half has pages.
func DefaultOptions(mf *mm.MemoryFile) Options {
	half := int64(mf.Capacity() / 2)
	if hostMemory > 0 {
		half = min(half, int64(hostMemory/2))
	}
	half &^= pageSize - 1
	return Options{Size: half, Inodes: uint64(half / pageSize)}
}

// hostMemory is the host's RAM, read when the Sentry starts (before it
// confines itself); 0 if it cannot be read.
var hostMemory = func() uint64 {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		return 0
	}
	return si.Totalram * uint64(si.Unit)
}()

// ParseOptions parses mount(2) data for tmpfs ("size=64m,mode=1777,...")
// over the defaults o. Sizes take k, m, g, t, p, e suffixes, or % of the
// memory file (capacity bytes). Unknown options give EINVAL, as Linux's
// tmpfs does.
func ParseOptions(data string, o Options, capacity uint64) (Options, error) {
	for _, opt := range strings.Split(data, ",") {
		if opt == "" {
			continue
		}
		key, val, hasVal := strings.Cut(opt, "=")
		switch key {
		case "size":
			if !hasVal {
				return o, unix.EINVAL
			}
			n, err := parseSize(val, capacity, true)
			if err != nil || n > math.MaxInt64 {
				return o, unix.EINVAL
			}
			o.Size = int64(pageUp(n))
		case "nr_blocks":
			n, err := parseSize(val, 0, false)
			if err != nil || n > math.MaxInt64/pageSize {
				return o, unix.EINVAL
			}
			o.Size = int64(n * pageSize)
		case "nr_inodes":
			n, err := parseSize(val, 0, false)
			if err != nil {
				return o, unix.EINVAL
			}
			o.Inodes = n
		case "mode":
			n, err := strconv.ParseUint(val, 8, 32)
			if err != nil || n > 0o7777 {
				return o, unix.EINVAL
			}
			o.Mode = uint32(n)
			if o.Mode == 0 {
				o.Mode = modeZero
			}
		case "uid", "gid":
			n, err := strconv.ParseUint(val, 10, 32)
			if err != nil || n == math.MaxUint32 {
				return o, unix.EINVAL
			}
			if key == "uid" {
				o.UID, o.SetUID = auth.KUID(n), true
			} else {
				o.GID, o.SetGID = auth.KGID(n), true
			}
		case "huge", "mpol", "inode32", "inode64", "noswap", "quota", "usrquota", "grpquota":
			// Accepted and meaningless in the Sentry's memory.
		default:
			// Generic mount flags (rw, nosuid, ...) are parsed by the VFS
			// before the data reaches a file system.
			return o, unix.EINVAL
		}
	}
	return o, nil
}

// modeZero stands for an explicit mode=0 (Mode 0 means the default).
const modeZero = 0o10000

func pageUp(n uint64) uint64 { return (n + pageSize - 1) &^ (pageSize - 1) }

// parseSize parses a number with an optional binary suffix, or (with
// percent) a percentage of capacity.
func parseSize(s string, capacity uint64, percent bool) (uint64, error) {
	if s == "" {
		return 0, unix.EINVAL
	}
	if percent && strings.HasSuffix(s, "%") {
		p, err := strconv.ParseUint(s[:len(s)-1], 10, 64)
		if err != nil || p > 100 {
			return 0, unix.EINVAL
		}
		return capacity / 100 * p, nil
	}
	shift := uint(0)
	switch s[len(s)-1] {
	case 'k', 'K':
		shift = 10
	case 'm', 'M':
		shift = 20
	case 'g', 'G':
		shift = 30
	case 't', 'T':
		shift = 40
	case 'p', 'P':
		shift = 50
	case 'e', 'E':
		shift = 60
	}
	if shift != 0 {
		s = s[:len(s)-1]
	}
	n, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		return 0, unix.EINVAL
	}
	if n > math.MaxUint64>>shift {
		return 0, unix.EINVAL
	}
	return n << shift, nil
}

// String formats the options as /proc/mounts shows them.
func (o Options) String() string {
	var b strings.Builder
	if o.Size > 0 {
		fmt.Fprintf(&b, ",size=%dk", o.Size/1024)
	}
	if o.Inodes > 0 {
		fmt.Fprintf(&b, ",nr_inodes=%d", o.Inodes)
	}
	if m := o.Mode &^ modeZero; o.Mode != 0 && m != 0o1777 {
		fmt.Fprintf(&b, ",mode=%o", m)
	}
	if o.SetUID {
		fmt.Fprintf(&b, ",uid=%d", o.UID)
	}
	if o.SetGID {
		fmt.Fprintf(&b, ",gid=%d", o.GID)
	}
	return strings.TrimPrefix(b.String(), ",")
}

// filesystem is one tmpfs instance.
type filesystem struct {
	mf         *mm.MemoryFile
	budget     mm.Budget
	maxInodes  uint64
	openDevice func(ctx fs.Context, vd fs.VirtualDentry, rdev uint64, flags uint32) (*fs.FileDescription, error)
	opts       Options

	mu sync.Mutex
	// inodes counts the nodes that exist.
	inodes uint64
}

// New returns a tmpfs whose file data lives in mf. The root directory
// belongs to creds's filesystem user and group unless opts say otherwise.
func New(mf *mm.MemoryFile, opts Options, creds *auth.Credentials) *fs.Filesystem {
	tfs := &filesystem{mf: mf, maxInodes: opts.Inodes, openDevice: opts.OpenDevice, opts: opts}
	tfs.budget.SetLimit(opts.Size)
	mode := opts.Mode &^ modeZero
	if opts.Mode == 0 {
		mode = 0o1777
	}
	uid, gid := opts.UID, opts.GID
	if creds != nil {
		if !opts.SetUID {
			uid = creds.FilesystemUID
		}
		if !opts.SetGID {
			gid = creds.FilesystemGID
		}
	}
	tfs.inodes = 1
	root := tfs.newDir(nil, fs.CreateOptions{Mode: unix.S_IFDIR | mode, UID: uid, GID: gid})
	return fs.NewFilesystem(FSType, tfs, root, false)
}

// Options returns the options of a tmpfs file system (for /proc/mounts),
// false if f is not one.
func OptionsOf(f *fs.Filesystem) (Options, bool) {
	tfs, ok := f.Impl().(*filesystem)
	if !ok {
		return Options{}, false
	}
	return tfs.opts, true
}

// StatFS implements fs.FilesystemImpl.
func (tfs *filesystem) StatFS(fs.Context) (fs.StatFS, error) {
	st := fs.StatFS{Type: Magic, Bsize: pageSize, Frsize: pageSize, NameLen: fs.NameMax}
	if l := tfs.budget.Limit(); l > 0 {
		used := tfs.budget.Used()
		st.Blocks = uint64(l / pageSize)
		st.Bfree = uint64(max(l-used, 0) / pageSize)
		st.Bavail = st.Bfree
	}
	if tfs.maxInodes > 0 {
		tfs.mu.Lock()
		st.Files = tfs.maxInodes
		st.Ffree = tfs.maxInodes - min(tfs.inodes, tfs.maxInodes)
		tfs.mu.Unlock()
	}
	return st, nil
}

// takeInode counts a new node, or gives ENOSPC at the nr_inodes limit.
// Preconditions: tfs.mu is held.
func (tfs *filesystem) takeInode() error {
	if tfs.maxInodes > 0 && tfs.inodes >= tfs.maxInodes {
		return unix.ENOSPC
	}
	tfs.inodes++
	return nil
}

// dropInode uncounts a node that no longer exists.
func (tfs *filesystem) dropInode() {
	if tfs == nil {
		return
	}
	tfs.mu.Lock()
	tfs.inodes--
	tfs.mu.Unlock()
}
