package fs

import (
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// Stat holds a node's attributes, with the fields of statx(2).
type Stat struct {
	// Mode is the file type and permission bits (S_IFMT | 07777).
	Mode    uint32
	Nlink   uint32
	UID     auth.KUID
	GID     auth.KGID
	Ino     uint64
	Dev     uint64 // filled in from the node's Filesystem
	Rdev    uint64 // for device nodes, unix.Mkdev(major, minor)
	Size    int64
	Blocks  int64 // 512-byte blocks
	Blksize uint32
	Atime   unix.Timespec
	Mtime   unix.Timespec
	Ctime   unix.Timespec
	Btime   unix.Timespec
	// HasBtime says whether Btime is known (statx's STATX_BTIME).
	HasBtime bool
}

// Type returns the file type bits of the mode.
func (s *Stat) Type() uint32 { return s.Mode & unix.S_IFMT }

// IsDir reports whether the node is a directory.
func (s *Stat) IsDir() bool { return s.Type() == unix.S_IFDIR }

// IsRegular reports whether the node is a regular file.
func (s *Stat) IsRegular() bool { return s.Type() == unix.S_IFREG }

// IsSymlink reports whether the node is a symbolic link.
func (s *Stat) IsSymlink() bool { return s.Type() == unix.S_IFLNK }

// DirentType returns the d_type value (DT_*) of a file mode.
func DirentType(mode uint32) uint8 {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return unix.DT_REG
	case unix.S_IFDIR:
		return unix.DT_DIR
	case unix.S_IFLNK:
		return unix.DT_LNK
	case unix.S_IFCHR:
		return unix.DT_CHR
	case unix.S_IFBLK:
		return unix.DT_BLK
	case unix.S_IFIFO:
		return unix.DT_FIFO
	case unix.S_IFSOCK:
		return unix.DT_SOCK
	}
	return unix.DT_UNKNOWN
}

// StatFS is the result of statfs(2).
type StatFS struct {
	Type    int64
	Bsize   int64
	Blocks  uint64
	Bfree   uint64
	Bavail  uint64
	Files   uint64
	Ffree   uint64
	NameLen int64
	Frsize  int64
	Flags   int64 // ST_* mount flags; the VFS adds ST_RDONLY and friends
}

var (
	nextAnonMinor atomic.Uint32
	nextIno       atomic.Uint64
)

// NewAnonDev returns a new device number with major 0, as Linux gives
// file systems without a backing device.
func NewAnonDev() uint64 {
	return unix.Mkdev(0, nextAnonMinor.Add(1)+16)
}

// NewIno returns a new inode number for synthetic nodes.
func NewIno() uint64 { return nextIno.Add(1) }
