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
