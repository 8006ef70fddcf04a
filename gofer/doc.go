// Package gofer is the file server of a sandbox: a separate, confined
// process that opens the container's files on the host and donates their
// descriptors to the Sentry, which never opens a host path itself.
//
// # Messages
//
// The wire format lives in gofer/proto (see its package doc for the
// encoding): one SOCK_SEQPACKET datagram per message, a tag to match
// responses to requests, errors as Linux errno numbers. Requests are
// Attach (an attach point's root), Walk (one component, never following a symlink),
// WalkPath (several components in a row, each walked as Walk walks one, up
// to the first failure or non-directory; a symlink's target comes along;
// WalkOpen also opens a last regular file for reading, as Open would),
// Stat (lstat semantics), Open (donates a host fd), Readlink,
// Getdents (paged by d_off cookies, without "." and ".."), StatFS, Close
// (of a handle) and Dup (a new connection to the same tree). A read-write
// server (Config.ReadOnly false) also serves the requests that change the
// tree (write.go, xattr.go, sock.go): Create, Tmpfile, Mkdir, Mknod (FIFOs,
// sockets, regular files; devices are EPERM), Symlink, Link, Unlink,
// Rename (renameat2 flags), Setattr, the xattr calls (user.* and
// trusted.*), Fsync, Fallocate, Bind and Connect of unix sockets (only
// with Config.HostUDS, or HostUDSBind and HostUDSConnect for one each,
// else EPERM: a socket in the tree may lead to a host daemon), and Open
// for writing. A read-only server answers them with
// EROFS (Getxattr, Listxattr, Fsync and Connect excepted, which change
// nothing).
//
// # Attach points
//
// A Server serves several trees, its attach points: number 0 is the
// container's root (always a directory), numbers 1, 2, ... the sources of
// the container's bind mounts (Config.Mounts), each a directory or a
// single file (a file bind mount such as /etc/hosts). Tattach names one.
// A file's attach point is reached by name in its directory, which no
// handle names, so it can be reopened like any file. Every node belongs
// to the attach point it was reached from: a read-only one (a ro bind
// mount) refuses changes with EROFS as a read-only server does, and a
// link or rename never mixes nodes of two attach points (EXDEV), as
// Linux refuses it across mounts. Each attach point is a tree of its
// own: walks are single components (a WalkPath is a row of them) and ".." is never walked, so a
// bind's symlinks and its ".." never lead out of its source.
//
// # Objects and ownership
//
// A Server holds each attach point's root as an O_PATH fd. Each connection has its
// own table of handles; a handle names a node, which owns one O_PATH fd
// opened with O_NOFOLLOW (an O_TMPFILE file's node owns a duplicate of its
// open fd instead, having no name to open one by). Nodes are reference counted (one reference per
// handle, per request using the node, and per child non-directory, which
// keeps its parent to reopen itself by name), so a node's fd is closed only
// when nothing uses it and an fd number is never reused under a running
// request. When a connection ends, all its handles are released. The
// server's nameIndex records where each non-directory node was found, so
// that a rename through the gofer moves the location of every node (of
// any connection) reached through the old name, and an unlink forgets it
// (reopening such a node then fails with ESTALE).
//
// A donated fd (Ropen, Rdup) is a fresh descriptor: the gofer closes its
// copy right after sending, and the receiver owns the one it gets. The
// client closes fds that arrive unasked for.
//
// # Confinement
//
// The launcher (runsc) starts the gofer in its own mount namespace
// (CLONE_NEWNS; also user, PID, IPC, UTS and network namespaces as it
// sees fit). The gofer then calls Confine(root), which makes all mounts
// private and pivots into root, so the process cannot name anything
// outside the container's root; then Serve with Root "/". With bind
// mounts it calls ConfineMounts instead, which clones the root and every
// source as detached mount trees (read-only ones made read-only by the
// host kernel), moves them into a small read-only tmpfs and pivots into
// that, so the gofer can name the root and the sources and nothing else. The seccomp
// allowlist (built in runsc/isolate from Syscalls) is installed after
// that. Walks take one component at a time with openat(dirfd, name,
// O_PATH|O_NOFOLLOW); names holding '/', "." and ".." are refused, so a
// walk cannot leave the tree even before confinement; symlinks are
// returned as such and resolved by the Sentry inside the sandbox's view.
// Open reopens a directory as "." relative to its own O_PATH fd, and a
// regular file by name relative to its parent's fd with O_NOFOLLOW, then
// checks that device and inode still match (O_TRUNC is applied only after
// that check). Device nodes, FIFOs and sockets are never opened (the
// Sentry serves its own /dev and pipes). Changes work the same way: each
// names one checked component of a directory handle and uses an *at call
// on the directory's O_PATH fd that does not follow a final symlink
// (O_CREAT|O_EXCL|O_NOFOLLOW, mkdirat, renameat2, unlinkat, ...), or acts
// on a node's own O_PATH fd with AT_EMPTY_PATH (fchownat, fchmodat2,
// utimensat). Created files get the requested permission bits even
// where the gofer's umask took some. bind and connect have no *at form:
// they run with the working directory moved into the directory's fd.
//
// # Concurrency
//
// Each connection is served by up to maxWorkers goroutines that take turns
// reading: the one that receives a request serves it itself while the
// next one is already reading, so a slow request does not hold up others
// and a fast one costs no goroutine switch. Locks, in the order they are
// taken: conn.readMu (held while reading a request), then conn.mu (worker
// counts, end of connection). nameIndex.moveMu (held for writing across a
// rename or unlink and its index update, for reading across a reopen by
// name) comes before nameIndex.mu (the index and every node's location).
// Server.cwdMu (bind and connect), nodeTable.mu (the handle map),
// nameIndex.mu and node.dirMu (a directory's paging fd) are leaves, never
// held together.
package gofer
