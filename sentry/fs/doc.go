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
// UncachedDir), then down any mount on the child; symlinks splice their
// target in front of the rest of the path; magic links (/proc/self/fd/N)
// jump to the object they name. OpenAt then applies Linux's open checks
// (O_DIRECTORY, EISDIR, EROFS before EACCES, ...) and asks the node's
// OpenNode for a FileDescription, which the caller installs in its
// FDTable. Reads and writes go FileDescription -> FileImpl; the offset
// lives in the description unless the file is a stream (pipes) or keeps
// its own (host files).
//
// Write-like operations (mkdir, unlink, rename, chmod, truncate...) are
// checked by CheckCreate, CheckRemove, CheckRename, CheckSetAttr and
// CheckTruncate, which give Linux's errors in Linux's order and end in
// EROFS: no file system in this phase can change.
//
// Files never block inside their Read or Write: they return
// syserror.ErrWouldBlock and report readiness as waiter.Waitable.
// ReadBlocking, WriteBlocking and Poll wait through Context.BlockOn.
//
// Lock order (outer first):
//
//	FDTable.mu, FSContext.mu, MountNamespace.mu (never held while calling
//	into a file system)
//	FileDescription.offMu
//	file system locks (each file system documents its own)
//	Dentry.mu
//	FileDescription.hooksMu
//	waiter.Queue.mu
//
// FDTable and FSContext drop their locks before releasing references, so a
// file's Release never runs under them.
package fs
