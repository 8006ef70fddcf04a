// Package gofer is the file server of a sandbox: a separate, confined
// process that opens the container's files on the host and donates their
// descriptors to the Sentry, which never opens a host path itself.
//
// # Messages
//
// The wire format lives in gofer/proto (see its package doc for the
// encoding): one SOCK_SEQPACKET datagram per message, a tag to match
// responses to requests, errors as Linux errno numbers. Requests are
// Attach (the root), Walk (one component, never following a symlink),
// Stat (lstat semantics), Open (read-only: donates a host fd), Readlink,
// Getdents (paged by d_off cookies, without "." and ".."), StatFS, Close
// (of a handle) and Dup (a new connection to the same tree).
//
// # Objects and ownership
//
// A Server holds the served root as an O_PATH fd. Each connection has its
// own table of handles; a handle names a node, which owns one O_PATH fd
// opened with O_NOFOLLOW. Nodes are reference counted (one reference per
// handle, per request using the node, and per child regular file, which
// keeps its parent to reopen itself by name), so a node's fd is closed only
// when nothing uses it and an fd number is never reused under a running
// request. When a connection ends, all its handles are released.
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
// outside the container's root; then Serve with Root "/". The seccomp
// allowlist (built in runsc/isolate from Syscalls) is installed after
// that. Walks take one component at a time with openat(dirfd, name,
// O_PATH|O_NOFOLLOW); names holding '/', "." and ".." are refused, so a
// walk cannot leave the tree even before confinement; symlinks are
// returned as such and resolved by the Sentry inside the sandbox's view.
// Open reopens a directory as "." relative to its own O_PATH fd, and a
// regular file by name relative to its parent's fd with O_NOFOLLOW, then
// checks that device and inode still match. Device nodes, FIFOs and
// sockets are never opened (the Sentry serves its own /dev and pipes).
//
// # Concurrency
//
// Each connection is served by up to maxWorkers goroutines that take turns
// reading: the one that receives a request serves it itself while the
// next one is already reading, so a slow request does not hold up others
// and a fast one costs no goroutine switch. Locks, in the order they are
// taken: conn.readMu (held while reading a request), then conn.mu (worker
// counts, end of connection). nodeTable.mu (the handle map) and
// node.dirMu (a directory's paging fd) are leaves, never held together.
package gofer
