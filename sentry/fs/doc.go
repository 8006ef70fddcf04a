// Package fs is the Sentry's virtual file system core: the objects every
// file system and every file-family syscall share.
//
// The main objects:
//
//   - Node is a file system object (what Linux calls an inode). Each file
//     system implements Node and the optional interfaces DirNode,
//     SymlinkNode, MagicLinkNode and OpenNode.
//   - Dentry names a Node within its Filesystem's tree and caches the
//     children found by lookups.
//   - Mount attaches a Filesystem's root on a dentry of another mount; a
//     MountNamespace holds the mount tree. A VirtualDentry (mount, dentry)
//     is a position in that tree.
//   - Path resolution (Resolve, ResolveParent, Open) walks a path from a
//     task's root and working directory, with Linux's rules for symlinks
//     (40 at most), "..", trailing slashes, mounts and openat2's RESOLVE_*
//     flags, checking search permission on every directory.
//   - FileDescription is an open file description: reference counted,
//     holding the status flags, the offset and the FileImpl of its kind.
//   - FDTable maps descriptor numbers to file descriptions; FSContext holds
//     a task's root, working directory and umask.
//
// How an open flows: the syscall layer builds a Lookup (the task's root,
// the start directory from dirfd or the cwd, the path and flags) and calls
// Open. Resolve walks one component at a time: search permission on each
// directory, Dentry.Lookup (cached unless the directory is an
// UncachedDir; a child not cached yet in a PathLookupDir, such as the
// gofer's, is looked up together with the run of components after it,
// in one round trip, and the whole run is cached: walkpath.go), then
// down any mount on the child; symlinks splice their
// target in front of the rest of the path; magic links (/proc/self/fd/N)
// jump to the object they name. OpenAt then applies Linux's open checks
// (O_DIRECTORY, EISDIR, EROFS before EACCES, ...) and asks the node's
// OpenNode for a FileDescription, which the caller installs in its
// FDTable. Reads and writes go FileDescription -> FileImpl; the offset
// lives in the description unless the file is a stream (pipes) or keeps
// its own (host files).
//
// How a change flows (the contract is in change.go): the syscall layer
// applies the umask to the mode it passes and calls one of Mkdir, Mknod,
// Symlink, Link, Unlink, Rmdir, Rename (mutate.go), Chmod, Chown, Utimes,
// Truncate, Ftruncate, Fallocate, Fsync (attr.go) or the xattr functions
// (xattr.go); creating opens go through Open (open.go). The VFS
// resolves the parent, checks what Linux's namei and may_create/
// may_delete check (EROFS on read-only mounts first, write and search
// permission on the directory, the sticky bit, EBUSY on mountpoints,
// EXDEV across mounts, EINVAL for moving a directory below itself),
// decides the new node's owner (fsuid, and fsgid or the directory's
// group when it is setgid, which new directories inherit), takes the
// directory locks and calls the directory's MutableDir method. On success
// it updates the dentry cache: a created name gets a dentry, a removed
// one's dentry is dropped (marked dead: open files show " (deleted)"),
// a renamed one moves. Nodes of file systems that cannot change (no
// MutableDir, SetAttrNode...) refuse with EPERM (O_CREAT with EACCES, as
// Linux's directories without ->create), read-only mounts with EROFS.
//
// Opens that create: Open with O_CREAT looks the name up under the
// directory lock and, if missing, calls Mknod(S_IFREG) and opens the new
// node with its OpenNode without permission checks (open(2) gives the
// creator the access it asked for). O_TRUNC of an existing regular file
// calls SetAttr(Size 0) after the node's Open succeeded: a node's Open
// never truncates. O_TMPFILE calls TmpfileDir.Tmpfile.
//
// File systems own the times and sizes of their data: a regular file's
// Write sets mtime and ctime and grows the size, its Seek answers
// SEEK_END with the current size (O_APPEND, pwritev2's RWF_APPEND and
// pwrite on O_APPEND descriptions write at that offset; a file system may
// also append by itself when the description has O_APPEND, which keeps
// concurrent appenders apart). Directory
// changes set the directory's mtime and ctime (MutableDir methods). The
// VFS owns the times of attribute changes (SetAttrOptions carries them).
//
// Change notification (notify.go): the VFS reports inotify's events
// where it makes each change, to the watches kept per node in the file
// system's table (one atomic load when nothing is watched). Signal-driven
// I/O (async.go): a description's owner gets SIGIO through an entry on
// the file's readiness queue while O_ASYNC is on. Mounts move with
// MS_MOVE and pivot_root (mountmove.go). Mount namespaces are copied,
// named and released in mountns.go; mount propagation between peer
// groups and to slaves is mountprop.go.
//
// Files never block inside their Read or Write: they return
// syserror.ErrWouldBlock and report readiness as waiter.Waitable.
// ReadBlocking, WriteBlocking and Poll wait through Context.BlockOn.
//
// Lock order (outer first):
//
//	treeMu (mount.go: every change of any mount tree or propagation)
//	FDTable.mu, FSContext.mu, MountNamespace.mu (never held while calling
//	into a file system; several at once only under treeMu)
//	Filesystem.renameMu (Rename only)
//	Dentry.dirMu of directories being changed: an ancestor's before a
//	descendant's; two unrelated directories only under renameMu (a
//	lookup that keeps racing with changes takes it too, holding nothing)
//	Filesystem.nameMu (dentries' parent and name; never held while
//	calling into a file system)
//	FileDescription.offMu
//	file system locks (each file system documents its own)
//	Dentry.mu
//	FileDescription.hooksMu
//	asyncState.mu (turning O_ASYNC on and off)
//	waiter.Queue.mu
//	Filesystem.watchMu, then watchTable.mu (never held while a watch
//	is notified; watches take their own locks, then the kernel's to
//	send SIGIO)
//
// FDTable and FSContext drop their locks before releasing references, so a
// file's Release never runs under them.
package fs
