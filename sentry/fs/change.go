package fs

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// This file is the contract between the VFS and file systems that change.
// The VFS resolves paths, checks permissions (mode bits, sticky
// directories, read-only mounts, mountpoints), decides the owner and mode
// of new nodes, serializes changes of one directory, keeps the dentry
// cache right, and then calls exactly one of the methods below. A file
// system does the change atomically, keeps its own nlink, sizes and
// times (see each method), and reports conflicts it alone can see
// (EEXIST, ENOTEMPTY, ENOSPC, EMLINK, EIO...).

// CreateOptions describe a new node. The VFS has applied the umask, the
// setgid-directory rules and the caller's fsuid/fsgid.
type CreateOptions struct {
	// Mode is the file type (S_IFREG, S_IFDIR, S_IFLNK, S_IFIFO,
	// S_IFSOCK, S_IFCHR, S_IFBLK) and permission bits (07777).
	Mode uint32
	// UID and GID own the new node.
	UID auth.KUID
	GID auth.KGID
	// Rdev is the device number of S_IFCHR and S_IFBLK nodes.
	Rdev uint64
}

// MutableDir is a directory whose entries can change. name is always a
// single normal component (not "", "." or "..", at most NameMax bytes).
// Each method updates the directory's mtime and ctime, and the nlink of
// the directories and nodes it touches, as Linux's file systems do.
//
// Methods are called with the VFS's lock on the directory held (and on
// both directories for Rename), so no other VFS change of these
// directories runs concurrently; Lookup and Readdir may.
type MutableDir interface {
	DirNode
	// Mknod creates a node that is not a directory or symlink:
	// opts.Mode's type is S_IFREG (open's O_CREAT, creat, mknod),
	// S_IFIFO, S_IFSOCK, S_IFCHR or S_IFBLK. EEXIST if name exists.
	Mknod(ctx Context, name string, opts CreateOptions) (Node, error)
	// Mkdir creates a directory (opts.Mode's type is S_IFDIR). EEXIST if
	// name exists.
	Mkdir(ctx Context, name string, opts CreateOptions) (Node, error)
	// Symlink creates a symbolic link to target (opts.Mode is
	// S_IFLNK|0777). EEXIST if name exists.
	Symlink(ctx Context, name, target string, opts CreateOptions) (Node, error)
	// Link adds name for target, a node of the same Filesystem that is
	// not a directory, and raises its nlink and ctime. EEXIST if name
	// exists; ENOENT if target has nlink 0 and is not an O_TMPFILE file
	// (those may be linked once); EMLINK at the file system's limit.
	Link(ctx Context, name string, target Node) error
	// Unlink removes name, which names child (not a directory), lowering
	// child's nlink and raising its ctime. The node lives on while open.
	Unlink(ctx Context, name string, child Node) error
	// Rmdir removes name, which names the directory child: ENOTEMPTY if
	// child has entries.
	Rmdir(ctx Context, name string, child Node) error
	// Rename moves the entry oldName of this directory (naming renamed)
	// to newName in newDir (a directory of the same Filesystem, perhaps
	// this one). replaced is the node newName names now, or nil. flags
	// is 0 or RENAME_EXCHANGE (RENAME_NOREPLACE is decided by the VFS,
	// which then passes 0 with replaced nil):
	//   - 0: replaced (if any) is unlinked as by Unlink/Rmdir; the VFS
	//     has checked both are directories or neither is, and the file
	//     system returns ENOTEMPTY for a non-empty replaced directory.
	//   - RENAME_EXCHANGE: replaced is non-nil and the two entries swap.
	// A renamed directory's ".." changes with it (nlink of both parents).
	// ctime of renamed (and replaced) and mtime/ctime of both
	// directories are updated.
	Rename(ctx Context, oldName string, renamed Node, newDir MutableDir, newName string, replaced Node, flags uint32) error
}

// TmpfileDir is a directory in which open(O_TMPFILE) can create an
// unnamed regular file (nlink 0). File systems without it give
// EOPNOTSUPP.
type TmpfileDir interface {
	MutableDir
	// Tmpfile creates an unnamed regular file that linkat(AT_EMPTY_PATH)
	// may later name through Link (unless opened with O_EXCL, which the
	// VFS enforces).
	Tmpfile(ctx Context, opts CreateOptions) (Node, error)
}

// SetAttr mask bits: which fields of SetAttrOptions to change (values as
// Linux's ATTR_*).
const (
	SetAttrMode  = 1 << 0
	SetAttrUID   = 1 << 1
	SetAttrGID   = 1 << 2
	SetAttrSize  = 1 << 3
	SetAttrAtime = 1 << 4
	SetAttrMtime = 1 << 5
	SetAttrCtime = 1 << 6
)

// SetAttrOptions is a change of attributes. The VFS has checked
// permissions, resolved UTIME_NOW and UTIME_OMIT into times and the mask,
// cleared setuid/setgid bits where Linux does (chown, writes by
// others) and always sets SetAttrCtime with the current time alongside
// any other change, and SetAttrMtime with SetAttrSize (truncate).
type SetAttrOptions struct {
	Mask uint32
	// Mode holds the permission bits (07777) only; the type never
	// changes.
	Mode uint32
	UID  auth.KUID
	GID  auth.KGID
	// Size is the new size of a regular file: extended with zeros or
	// cut. The VFS has checked Size >= 0 and RLIMIT_FSIZE (EFBIG).
	Size  int64
	Atime unix.Timespec
	Mtime unix.Timespec
	Ctime unix.Timespec
}

// SetAttrNode is a node whose attributes can change (chmod, chown,
// truncate, utimes). Nodes that do not implement it refuse with EPERM.
type SetAttrNode interface {
	Node
	// SetAttr applies the fields of opts named by opts.Mask, all or
	// none.
	SetAttr(ctx Context, opts *SetAttrOptions) error
}

// XattrNode is a node with extended attributes. The VFS checks names
// ("user.", "trusted.", "security." prefixes; "system." is EOPNOTSUPP),
// sizes (XATTR_NAME_MAX, XATTR_SIZE_MAX, the caller's buffer: ERANGE),
// permissions and the node type ("user." only on regular files and
// directories). Nodes that do not implement it give EOPNOTSUPP.
type XattrNode interface {
	Node
	// GetXattr returns the value of name, or ENODATA.
	GetXattr(ctx Context, name string) ([]byte, error)
	// SetXattr sets name to value. flags is 0, XATTR_CREATE (EEXIST if
	// name exists) or XATTR_REPLACE (ENODATA if it does not). Updates
	// ctime.
	SetXattr(ctx Context, name string, value []byte, flags int) error
	// ListXattr returns the names, in a stable order.
	ListXattr(ctx Context) ([]string, error)
	// RemoveXattr removes name, or gives ENODATA. Updates ctime.
	RemoveXattr(ctx Context, name string) error
}

// Allocator is a FileImpl that implements fallocate(2). The VFS has
// checked the mode bits combination, offset and length (EINVAL), that
// the file is writable (EBADF), regular (ENODEV or ESPIPE as Linux
// gives), the mount writable (EROFS) and the size limit (EFBIG). Files
// that do not implement it give EOPNOTSUPP.
type Allocator interface {
	// Fallocate allocates, punches holes or zeroes the range [off,
	// off+length) as mode (FALLOC_FL_*) says, extending the size unless
	// FALLOC_FL_KEEP_SIZE.
	Fallocate(ctx Context, fd *FileDescription, mode uint32, off, length int64) error
}

// Syncer is a FileImpl with data to flush (fsync, fdatasync,
// sync_file_range, msync). Files that do not implement it have nothing
// to flush.
type Syncer interface {
	// Sync flushes the file's data, and its metadata unless dataOnly.
	Sync(ctx Context, fd *FileDescription, dataOnly bool) error
}

// FilesystemSyncer is a FilesystemImpl with data to flush (sync,
// syncfs).
type FilesystemSyncer interface {
	SyncFS(ctx Context) error
}

// Now returns the current time as file systems stamp it.
func Now() unix.Timespec { return unix.NsecToTimespec(time.Now().UnixNano()) }
