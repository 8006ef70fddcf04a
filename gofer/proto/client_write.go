package proto

import "golang.org/x/sys/unix"

// checkName checks a single path component as the server would, sparing
// the round trip for names it refuses.
func checkName(name string) error {
	if len(name) > NameMax {
		return unix.ENAMETOOLONG
	}
	if !ValidName(name) {
		return unix.EINVAL
	}
	return nil
}

// Create creates and opens the regular file name in dir (O_CREAT|O_EXCL:
// EEXIST if the name exists, even as a dangling symlink). flags are the
// open flags of the donated fd (access mode, O_APPEND, O_TRUNC); mode the
// permission bits with the umask applied; uid and gid the owner, or NoID.
// It returns the new file's handle, its attributes and an fd the caller
// owns.
func (c *Client) Create(dir Handle, name string, flags int, mode, uid, gid uint32) (Handle, Attr, int, error) {
	if err := checkName(name); err != nil {
		return 0, Attr{}, -1, err
	}
	m, err := c.call(&Tcreate{Dir: dir, Name: name, Flags: uint32(flags), Mode: mode, UID: uid, GID: gid}, MsgRcreate)
	if err != nil {
		return 0, Attr{}, -1, err
	}
	r := m.(*Rcreate)
	return r.Node, r.Attr, r.FD, nil
}

// Mkdir creates the directory name in dir.
func (c *Client) Mkdir(dir Handle, name string, mode, uid, gid uint32) (Handle, Attr, error) {
	if err := checkName(name); err != nil {
		return 0, Attr{}, err
	}
	m, err := c.call(&Tmkdir{Dir: dir, Name: name, Mode: mode, UID: uid, GID: gid}, MsgRmkdir)
	if err != nil {
		return 0, Attr{}, err
	}
	r := m.(*Rmkdir)
	return r.Node, r.Attr, nil
}

// Mknod creates a FIFO, socket or empty regular file (mode holds the type
// bits) named name in dir. Device nodes fail with EPERM.
func (c *Client) Mknod(dir Handle, name string, mode, uid, gid uint32) (Handle, Attr, error) {
	if err := checkName(name); err != nil {
		return 0, Attr{}, err
	}
	m, err := c.call(&Tmknod{Dir: dir, Name: name, Mode: mode, UID: uid, GID: gid}, MsgRmknod)
	if err != nil {
		return 0, Attr{}, err
	}
	r := m.(*Rmknod)
	return r.Node, r.Attr, nil
}

// Symlink creates the symlink name in dir with the given target.
func (c *Client) Symlink(dir Handle, name, target string, uid, gid uint32) (Handle, Attr, error) {
	if err := checkName(name); err != nil {
		return 0, Attr{}, err
	}
	m, err := c.call(&Tsymlink{Dir: dir, Name: name, Target: target, UID: uid, GID: gid}, MsgRsymlink)
	if err != nil {
		return 0, Attr{}, err
	}
	r := m.(*Rsymlink)
	return r.Node, r.Attr, nil
}

// Link makes name in dir a hard link to target and returns a handle to it.
func (c *Client) Link(dir Handle, name string, target Handle) (Handle, Attr, error) {
	if err := checkName(name); err != nil {
		return 0, Attr{}, err
	}
	m, err := c.call(&Tlink{Dir: dir, Name: name, Target: target}, MsgRlink)
	if err != nil {
		return 0, Attr{}, err
	}
	r := m.(*Rlink)
	return r.Node, r.Attr, nil
}

// Unlink removes name from dir; flags is 0 or unix.AT_REMOVEDIR.
func (c *Client) Unlink(dir Handle, name string, flags int) error {
	if err := checkName(name); err != nil {
		return err
	}
	_, err := c.call(&Tunlink{Dir: dir, Name: name, Flags: uint32(flags)}, MsgRunlink)
	return err
}

// Rename is renameat2(oldDir, oldName, newDir, newName, flags). Handles
// naming the renamed files keep working under their new names.
func (c *Client) Rename(oldDir Handle, oldName string, newDir Handle, newName string, flags uint32) error {
	if err := checkName(oldName); err != nil {
		return err
	}
	if err := checkName(newName); err != nil {
		return err
	}
	_, err := c.call(&Trename{OldDir: oldDir, OldName: oldName, NewDir: newDir, NewName: newName, Flags: flags}, MsgRrename)
	return err
}

// Setattr applies the attributes req.Mask selects to req.Node and returns
// the attributes afterwards.
func (c *Client) Setattr(req Tsetattr) (Attr, error) {
	m, err := c.call(&req, MsgRsetattr)
	if err != nil {
		return Attr{}, err
	}
	return m.(*Rsetattr).Attr, nil
}

// Getxattr returns the value of the extended attribute name of h.
func (c *Client) Getxattr(h Handle, name string) (string, error) {
	m, err := c.call(&Tgetxattr{Node: h, Name: name}, MsgRgetxattr)
	if err != nil {
		return "", err
	}
	return m.(*Rgetxattr).Value, nil
}

// Setxattr sets the extended attribute name of h; flags is 0,
// XATTR_CREATE or XATTR_REPLACE.
func (c *Client) Setxattr(h Handle, name, value string, flags int) error {
	if len(value) > XattrValueMax {
		return unix.E2BIG
	}
	_, err := c.call(&Tsetxattr{Node: h, Name: name, Value: value, Flags: uint32(flags)}, MsgRsetxattr)
	return err
}

// Listxattr returns the names of h's extended attributes.
func (c *Client) Listxattr(h Handle) ([]string, error) {
	m, err := c.call(&Tlistxattr{Node: h}, MsgRlistxattr)
	if err != nil {
		return nil, err
	}
	return m.(*Rlistxattr).Names, nil
}

// Removexattr removes the extended attribute name of h.
func (c *Client) Removexattr(h Handle, name string) error {
	_, err := c.call(&Tremovexattr{Node: h, Name: name}, MsgRremovexattr)
	return err
}

// Fsync flushes h to disk (only its data when dataOnly).
func (c *Client) Fsync(h Handle, dataOnly bool) error {
	_, err := c.call(&Tfsync{Node: h, DataOnly: dataOnly}, MsgRfsync)
	return err
}

// Fallocate is fallocate(2) on the regular file h.
func (c *Client) Fallocate(h Handle, mode uint32, off, length int64) error {
	_, err := c.call(&Tfallocate{Node: h, Mode: mode, Offset: off, Length: length}, MsgRfallocate)
	return err
}

// Bind creates a unix socket of sockType bound to name in dir, with
// permission bits mode, and returns the socket file's handle and
// attributes and the bound socket, which the caller owns.
func (c *Client) Bind(dir Handle, name string, sockType int, mode, uid, gid uint32) (Handle, Attr, int, error) {
	if err := checkName(name); err != nil {
		return 0, Attr{}, -1, err
	}
	m, err := c.call(&Tbind{Dir: dir, Name: name, SockType: uint32(sockType), Mode: mode, UID: uid, GID: gid}, MsgRbind)
	if err != nil {
		return 0, Attr{}, -1, err
	}
	r := m.(*Rbind)
	return r.Node, r.Attr, r.FD, nil
}

// Connect connects a new unix socket of sockType to the socket file name
// in dir and returns it; the caller owns it. The socket is non-blocking
// while it connects: a listener with a full backlog gives EAGAIN.
func (c *Client) Connect(dir Handle, name string, sockType int) (int, error) {
	if err := checkName(name); err != nil {
		return -1, err
	}
	m, err := c.call(&Tconnect{Dir: dir, Name: name, SockType: uint32(sockType)}, MsgRconnect)
	if err != nil {
		return -1, err
	}
	return m.(*Rconnect).FD, nil
}

// Tmpfile creates an unnamed regular file in dir (O_TMPFILE) and returns
// its handle, attributes and an fd opened with flags' access mode (plus
// O_EXCL, which keeps it from being linked), which the caller owns.
func (c *Client) Tmpfile(dir Handle, flags int, mode, uid, gid uint32) (Handle, Attr, int, error) {
	m, err := c.call(&Ttmpfile{Dir: dir, Flags: uint32(flags), Mode: mode, UID: uid, GID: gid}, MsgRtmpfile)
	if err != nil {
		return 0, Attr{}, -1, err
	}
	r := m.(*Rtmpfile)
	return r.Node, r.Attr, r.FD, nil
}
