package gofer

import (
	"strings"

	"github.com/moat-sandbox/moat/gofer/proto"
	"golang.org/x/sys/unix"
)

// This file serves the requests that change the tree. Each names its
// target as a directory handle and one checked component, and reaches it
// with an *at syscall on the directory's O_PATH fd that never follows a
// symlink in the final component; so, like a walk, it cannot leave the
// served tree whatever the host does to the tree meanwhile. Nodes are
// changed through their own O_PATH fd (AT_EMPTY_PATH) or through a
// reopen that checks the file's identity.

// writeTargets returns the names and handles a tree-changing request
// uses, and false for any other message.
func writeTargets(m proto.Message) (names []string, handles []proto.Handle, ok bool) {
	switch m := m.(type) {
	case *proto.Tcreate:
		return []string{m.Name}, []proto.Handle{m.Dir}, true
	case *proto.Tmkdir:
		return []string{m.Name}, []proto.Handle{m.Dir}, true
	case *proto.Tmknod:
		return []string{m.Name}, []proto.Handle{m.Dir}, true
	case *proto.Tsymlink:
		return []string{m.Name}, []proto.Handle{m.Dir}, true
	case *proto.Tlink:
		return []string{m.Name}, []proto.Handle{m.Dir, m.Target}, true
	case *proto.Tunlink:
		return []string{m.Name}, []proto.Handle{m.Dir}, true
	case *proto.Trename:
		return []string{m.OldName, m.NewName}, []proto.Handle{m.OldDir, m.NewDir}, true
	case *proto.Tsetattr:
		return nil, []proto.Handle{m.Node}, true
	case *proto.Tgetxattr:
		return nil, []proto.Handle{m.Node}, true
	case *proto.Tsetxattr:
		return nil, []proto.Handle{m.Node}, true
	case *proto.Tlistxattr:
		return nil, []proto.Handle{m.Node}, true
	case *proto.Tremovexattr:
		return nil, []proto.Handle{m.Node}, true
	case *proto.Tfsync:
		return nil, []proto.Handle{m.Node}, true
	case *proto.Tfallocate:
		return nil, []proto.Handle{m.Node}, true
	case *proto.Tbind:
		return []string{m.Name}, []proto.Handle{m.Dir}, true
	case *proto.Tconnect:
		return []string{m.Name}, []proto.Handle{m.Dir}, true
	case *proto.Ttmpfile:
		return nil, []proto.Handle{m.Dir}, true
	}
	return nil, nil, false
}

// readsOnly reports whether m is one of writeTargets' requests that a
// read-only server still serves.
func readsOnly(m proto.Message) bool {
	switch m.(type) {
	case *proto.Tgetxattr, *proto.Tlistxattr, *proto.Tfsync, *proto.Tconnect:
		return true
	}
	return false
}

// handleWrite serves m if it is a tree-changing request (or one of the
// node operations that came with them), and reports whether it was.
func (c *conn) handleWrite(m proto.Message) (proto.Message, bool) {
	names, handles, ok := writeTargets(m)
	if !ok {
		return nil, false
	}
	for _, name := range names {
		if err := checkName(name); err != nil {
			return errMsg(err), true
		}
	}
	if c.srv.readOnly && !readsOnly(m) {
		return errMsg(unix.EROFS), true
	}
	nodes := make([]*node, len(handles))
	for i, h := range handles {
		n, ok := c.nodes.get(uint64(h))
		if !ok {
			for _, n := range nodes[:i] {
				n.decRef()
			}
			return errMsg(unix.EBADF), true
		}
		nodes[i] = n
	}
	defer func() {
		for _, n := range nodes {
			n.decRef()
		}
	}()
	for _, n := range nodes {
		if n.mount != nodes[0].mount {
			// Attach points are separate mounts: no link or rename
			// crosses them (the host would say so too, once confined).
			return errMsg(unix.EXDEV), true
		}
		if n.ro && !readsOnly(m) { // a node of a read-only bind mount
			return errMsg(unix.EROFS), true
		}
	}
	r, err := c.srv.serveWrite(m, nodes)
	if err != nil {
		return errMsg(err), true
	}
	// A response naming a new node gets its handle here.
	switch r := r.(type) {
	case proto.Message:
		return r, true
	case *newNodeResult:
		h := proto.Handle(c.nodes.add(r.n))
		switch m.(type) {
		case *proto.Tcreate:
			return &proto.Rcreate{Node: h, Attr: r.attr, FD: r.fd}, true
		case *proto.Tmkdir:
			return &proto.Rmkdir{Node: h, Attr: r.attr}, true
		case *proto.Tmknod:
			return &proto.Rmknod{Node: h, Attr: r.attr}, true
		case *proto.Tsymlink:
			return &proto.Rsymlink{Node: h, Attr: r.attr}, true
		case *proto.Tlink:
			return &proto.Rlink{Node: h, Attr: r.attr}, true
		case *proto.Tbind:
			return &proto.Rbind{Node: h, Attr: r.attr, FD: r.fd}, true
		case *proto.Ttmpfile:
			return &proto.Rtmpfile{Node: h, Attr: r.attr, FD: r.fd}, true
		}
	}
	panic("gofer: bad result for " + m.Type().String())
}

// newNodeResult is what serveWrite returns for a request that makes a
// node: the node (one reference, for the handle), its attributes and the
// fd to donate, if any.
type newNodeResult struct {
	n    *node
	attr proto.Attr
	fd   int
}

// serveWrite performs m on nodes, which writeTargets listed. It returns
// the response, or a *newNodeResult for the requests that make a node.
func (s *Server) serveWrite(m proto.Message, nodes []*node) (any, error) {
	switch m := m.(type) {
	case *proto.Tcreate:
		return s.create(nodes[0], m)
	case *proto.Tmkdir:
		if err := checkDir(nodes[0]); err != nil {
			return nil, err
		}
		if err := unix.Mkdirat(nodes[0].fd, m.Name, m.Mode&07777); err != nil {
			return nil, err
		}
		return s.finishNew(nodes[0], m.Name, unix.S_IFDIR, m.Mode&07777, m.UID, m.GID, -1)
	case *proto.Tmknod:
		return s.mknod(nodes[0], m)
	case *proto.Tsymlink:
		if len(m.Target) == 0 {
			return nil, unix.ENOENT
		}
		if len(m.Target) >= proto.PathMax {
			return nil, unix.ENAMETOOLONG
		}
		if strings.IndexByte(m.Target, 0) >= 0 {
			return nil, unix.EINVAL
		}
		if err := checkDir(nodes[0]); err != nil {
			return nil, err
		}
		if err := unix.Symlinkat(m.Target, nodes[0].fd, m.Name); err != nil {
			return nil, err
		}
		return s.finishNew(nodes[0], m.Name, unix.S_IFLNK, 0, m.UID, m.GID, -1)
	case *proto.Tlink:
		return s.link(nodes[0], m.Name, nodes[1])
	case *proto.Tunlink:
		return s.unlink(nodes[0], m.Name, int(m.Flags))
	case *proto.Trename:
		return s.rename(nodes[0], m.OldName, nodes[1], m.NewName, m.Flags)
	case *proto.Tsetattr:
		return setattr(nodes[0], m)
	case *proto.Tgetxattr:
		return getxattr(nodes[0], m.Name)
	case *proto.Tsetxattr:
		return setxattr(nodes[0], m)
	case *proto.Tlistxattr:
		return listxattr(nodes[0])
	case *proto.Tremovexattr:
		return removexattr(nodes[0], m.Name)
	case *proto.Tfsync:
		return fsync(nodes[0], m.DataOnly)
	case *proto.Tfallocate:
		return fallocate(nodes[0], m)
	case *proto.Tbind:
		return s.bind(nodes[0], m)
	case *proto.Tconnect:
		return s.connect(nodes[0], m)
	case *proto.Ttmpfile:
		return s.tmpfile(nodes[0], m)
	}
	panic("gofer: serveWrite of " + m.Type().String())
}

// checkDir refuses a non-directory as the directory of a request.
func checkDir(dir *node) error {
	if dir.mode != unix.S_IFDIR {
		return unix.ENOTDIR
	}
	return nil
}

// idArg turns a protocol owner into chown's argument (-1: unchanged).
func idArg(id uint32) int { return int(int32(id)) }

// create serves Tcreate: O_CREAT|O_EXCL by name, then the node.
func (s *Server) create(dir *node, m *proto.Tcreate) (any, error) {
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	acc := int(m.Flags) & unix.O_ACCMODE
	if acc == unix.O_ACCMODE {
		return nil, unix.EINVAL
	}
	flags := acc | int(m.Flags)&(unix.O_APPEND|unix.O_SYNC|unix.O_DSYNC)
	fd, err := unix.Openat(dir.fd, m.Name,
		flags|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_NOCTTY|unix.O_CLOEXEC, m.Mode&07777)
	if err != nil {
		return nil, err
	}
	r, err := s.finishNew(dir, m.Name, unix.S_IFREG, m.Mode&07777, m.UID, m.GID, fd)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	return r, nil
}

// tmpfile serves Ttmpfile: an unnamed file made with O_TMPFILE. Its node
// holds a duplicate of the open fd (a regular one, not O_PATH: there is
// no name to open one by), through which Tlink can name it (linkat with
// AT_EMPTY_PATH) and setattr reach it; it has no location to reopen by.
func (s *Server) tmpfile(dir *node, m *proto.Ttmpfile) (any, error) {
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	acc := int(m.Flags) & unix.O_ACCMODE
	if acc != unix.O_WRONLY && acc != unix.O_RDWR {
		return nil, unix.EINVAL
	}
	fd, err := unix.Openat(dir.fd, ".", unix.O_TMPFILE|acc|int(m.Flags)&unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, m.Mode&07777)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (any, error) {
		unix.Close(fd)
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fail(err)
	}
	if st.Mode&0777 != m.Mode&0777 {
		if err := unix.Fchmod(fd, st.Mode&07000|m.Mode&0777); err != nil {
			return fail(err)
		}
	}
	if m.UID != proto.NoID || m.GID != proto.NoID {
		if err := unix.Fchownat(fd, "", idArg(m.UID), idArg(m.GID), unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return fail(err)
		}
	}
	if err := unix.Fstat(fd, &st); err != nil {
		return fail(err)
	}
	nfd, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return fail(err)
	}
	n := newNode(nfd, &st, &s.idx, nil, "")
	n.ro, n.mount = dir.ro, dir.mount
	return &newNodeResult{n: n, attr: proto.AttrFromStat(&st), fd: fd}, nil
}

// mknod serves Tmknod: FIFOs, sockets and regular files only.
func (s *Server) mknod(dir *node, m *proto.Tmknod) (any, error) {
	typ := m.Mode & unix.S_IFMT
	switch typ {
	case 0:
		typ = unix.S_IFREG
	case unix.S_IFREG, unix.S_IFIFO, unix.S_IFSOCK:
	case unix.S_IFCHR, unix.S_IFBLK:
		return nil, unix.EPERM
	default:
		return nil, unix.EINVAL
	}
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	if err := unix.Mknodat(dir.fd, m.Name, typ|m.Mode&07777, 0); err != nil {
		return nil, err
	}
	return s.finishNew(dir, m.Name, typ, m.Mode&07777, m.UID, m.GID, -1)
}

// finishNew makes the node of name, just created in dir with type typ:
// it opens it without following a symlink, checks its type, restores the
// permission bits the gofer's umask took and sets the owner. fd, if not
// -1, is an open fd of the new file to check it against and to donate.
// If anything fails, the new name is removed again (if it still names
// what was created).
func (s *Server) finishNew(dir *node, name string, typ, mode, uid, gid uint32, fd int) (*newNodeResult, error) {
	pfd, err := unix.Openat(dir.fd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := fstat(pfd, &st); err != nil {
		unix.Close(pfd)
		return nil, err
	}
	if st.Mode&unix.S_IFMT != typ {
		// Replaced on the host between the creation and now: the name is
		// not ours to remove.
		unix.Close(pfd)
		return nil, unix.ESTALE
	}
	n := newNode(pfd, &st, &s.idx, dir, name)
	if fd >= 0 {
		var fst unix.Stat_t
		if err := unix.Fstat(fd, &fst); err != nil || !n.same(&fst) {
			n.decRef()
			return nil, unix.ESTALE
		}
	}
	undo := func(err error) (*newNodeResult, error) {
		flags := 0
		if typ == unix.S_IFDIR {
			flags = unix.AT_REMOVEDIR
		}
		var cur unix.Stat_t
		if unix.Fstatat(dir.fd, name, &cur, unix.AT_SYMLINK_NOFOLLOW) == nil && n.same(&cur) {
			s.unlink(dir, name, flags)
		}
		n.decRef()
		return nil, err
	}
	changed := false
	if typ != unix.S_IFLNK && st.Mode&0777 != mode&0777 {
		if err := chmod(n, st.Mode&07000|mode&0777); err != nil {
			return undo(err)
		}
		changed = true
	}
	if uid != proto.NoID || gid != proto.NoID {
		if err := chown(n, uid, gid); err != nil {
			return undo(err)
		}
		changed = true
	}
	if changed {
		if err := fstat(pfd, &st); err != nil {
			return undo(err)
		}
	}
	return &newNodeResult{n: n, attr: proto.AttrFromStat(&st), fd: fd}, nil
}

// chown sets n's owner through its O_PATH fd (NoID: unchanged).
func chown(n *node, uid, gid uint32) error {
	return unix.Fchownat(n.fd, "", idArg(uid), idArg(gid), unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW)
}

// chmod sets n's permission bits. Symlinks have none to set (EOPNOTSUPP,
// as lchmod). Without fchmodat2 (Linux before 6.6) it reopens n.
func chmod(n *node, mode uint32) error {
	if n.mode == unix.S_IFLNK {
		return unix.EOPNOTSUPP
	}
	err := unix.Fchmodat(n.fd, "", mode, unix.AT_EMPTY_PATH)
	if err != unix.EOPNOTSUPP && err != unix.ENOSYS {
		return err
	}
	fd, err := reopenAny(n, unix.O_RDONLY)
	if err == unix.ENXIO && n.mode == unix.S_IFSOCK {
		return chmodSocketByName(n, mode)
	}
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Fchmod(fd, mode)
}

// chmodSocketByName chmods the socket n by name after checking that the
// name still holds it: a socket cannot be opened, and fchmodat without
// fchmodat2 follows symlinks. A symlink swapped in between the check and
// the chmod can only lead within the gofer's confined root.
func chmodSocketByName(n *node, mode uint32) error {
	n.idx.moveMu.RLock()
	defer n.idx.moveMu.RUnlock()
	parent, name := n.idx.location(n)
	if parent == nil {
		return unix.ESTALE
	}
	defer parent.decRef()
	var st unix.Stat_t
	if err := unix.Fstatat(parent.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err
	}
	if !n.same(&st) {
		return unix.ESTALE
	}
	return unix.Fchmodat(parent.fd, name, mode, 0)
}

// reopenAny opens n for flags: a directory through "." on its own fd, a
// regular file or FIFO by reopen. Other types give ENXIO.
func reopenAny(n *node, flags int) (int, error) {
	switch n.mode {
	case unix.S_IFDIR:
		return unix.Openat(n.fd, ".", flags|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	case unix.S_IFREG, unix.S_IFIFO:
		return reopen(n, flags)
	}
	return -1, unix.ENXIO
}

// link serves Tlink. It links through the target's own fd where the
// host allows that (AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH), else by its
// name, checking afterwards that the new name holds the target.
func (s *Server) link(dir *node, name string, target *node) (any, error) {
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	if target.mode == unix.S_IFDIR {
		return nil, unix.EPERM
	}
	err := unix.Linkat(target.fd, "", dir.fd, name, unix.AT_EMPTY_PATH)
	if err == unix.ENOENT || err == unix.EPERM {
		err = s.linkByName(dir, name, target)
	}
	if err != nil {
		return nil, err
	}
	pfd, err := unix.Openat(dir.fd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := fstat(pfd, &st); err != nil || !target.same(&st) {
		unix.Close(pfd)
		return nil, unix.ESTALE
	}
	return &newNodeResult{n: newNode(pfd, &st, &s.idx, dir, name), attr: proto.AttrFromStat(&st), fd: -1}, nil
}

func (s *Server) linkByName(dir *node, name string, target *node) error {
	s.idx.moveMu.RLock()
	defer s.idx.moveMu.RUnlock()
	parent, oldName := s.idx.location(target)
	if parent == nil {
		return unix.ENOENT
	}
	defer parent.decRef()
	if err := unix.Linkat(parent.fd, oldName, dir.fd, name, 0); err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Fstatat(dir.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || !target.same(&st) {
		// The old name held another file by the time of the link: take
		// back the link we made to it.
		if err == nil {
			unix.Unlinkat(dir.fd, name, 0)
		}
		return unix.ESTALE
	}
	return nil
}

// unlink serves Tunlink.
func (s *Server) unlink(dir *node, name string, flags int) (any, error) {
	if flags&^unix.AT_REMOVEDIR != 0 {
		return nil, unix.EINVAL
	}
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	s.idx.moveMu.Lock()
	defer s.idx.moveMu.Unlock()
	if err := unix.Unlinkat(dir.fd, name, flags); err != nil {
		return nil, err
	}
	s.idx.unlinked(dir, name)
	return &proto.Runlink{}, nil
}

// rename serves Trename.
func (s *Server) rename(oldDir *node, oldName string, newDir *node, newName string, flags uint32) (any, error) {
	const known = unix.RENAME_NOREPLACE | unix.RENAME_EXCHANGE
	if flags&^known != 0 || flags == known {
		return nil, unix.EINVAL
	}
	if err := checkDir(oldDir); err != nil {
		return nil, err
	}
	if err := checkDir(newDir); err != nil {
		return nil, err
	}
	s.idx.moveMu.Lock()
	defer s.idx.moveMu.Unlock()
	if err := unix.Renameat2(oldDir.fd, oldName, newDir.fd, newName, uint(flags)); err != nil {
		return nil, err
	}
	s.idx.renamed(oldDir, oldName, newDir, newName, flags&unix.RENAME_EXCHANGE != 0)
	return &proto.Rrename{}, nil
}

// setattr serves Tsetattr: owner first (which may clear set-id bits),
// then mode, size and times, as chown, chmod, truncate and utimensat
// would in that order.
func setattr(n *node, m *proto.Tsetattr) (any, error) {
	if m.Mask&(proto.SetattrUID|proto.SetattrGID) != 0 {
		uid, gid := proto.NoID, proto.NoID
		if m.Mask&proto.SetattrUID != 0 {
			uid = m.UID
		}
		if m.Mask&proto.SetattrGID != 0 {
			gid = m.GID
		}
		if err := chown(n, uid, gid); err != nil {
			return nil, err
		}
	}
	if m.Mask&proto.SetattrMode != 0 {
		if err := chmod(n, m.Mode&07777); err != nil {
			return nil, err
		}
	}
	if m.Mask&proto.SetattrSize != 0 {
		if err := truncate(n, m.Size); err != nil {
			return nil, err
		}
	}
	if m.Mask&(proto.SetattrAtime|proto.SetattrMtime) != 0 {
		ts := []unix.Timespec{{Nsec: unix.UTIME_OMIT}, {Nsec: unix.UTIME_OMIT}}
		if m.Mask&proto.SetattrAtime != 0 {
			ts[0] = m.Atime
		}
		if m.Mask&proto.SetattrMtime != 0 {
			ts[1] = m.Mtime
		}
		if err := unix.UtimesNanoAt(n.fd, "", ts, unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return nil, err
		}
	}
	var st unix.Stat_t
	if err := fstat(n.fd, &st); err != nil {
		return nil, err
	}
	return &proto.Rsetattr{Attr: proto.AttrFromStat(&st)}, nil
}

// truncate sets the size of the regular file n.
func truncate(n *node, size int64) error {
	switch n.mode {
	case unix.S_IFREG:
	case unix.S_IFDIR:
		return unix.EISDIR
	default:
		return unix.EINVAL
	}
	if size < 0 {
		return unix.EINVAL
	}
	fd, err := reopen(n, unix.O_WRONLY)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Ftruncate(fd, size)
}

// fsync serves Tfsync.
func fsync(n *node, dataOnly bool) (any, error) {
	if n.mode != unix.S_IFDIR && n.mode != unix.S_IFREG {
		return nil, unix.EINVAL
	}
	fd, err := reopenAny(n, unix.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	if dataOnly {
		err = unix.Fdatasync(fd)
	} else {
		err = unix.Fsync(fd)
	}
	if err != nil {
		return nil, err
	}
	return &proto.Rfsync{}, nil
}

// fallocate serves Tfallocate.
func fallocate(n *node, m *proto.Tfallocate) (any, error) {
	switch n.mode {
	case unix.S_IFREG:
	case unix.S_IFDIR:
		return nil, unix.EISDIR
	case unix.S_IFIFO:
		return nil, unix.ESPIPE
	default:
		return nil, unix.ENODEV
	}
	fd, err := reopen(n, unix.O_WRONLY)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	if err := unix.Fallocate(fd, m.Mode, m.Offset, m.Length); err != nil {
		return nil, err
	}
	return &proto.Rfallocate{}, nil
}
