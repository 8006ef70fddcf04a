package proto

import "golang.org/x/sys/unix"

// This file holds the messages that change the served tree. A read-only
// server answers every one of them with EROFS.

// NoID in a UID or GID field asks the server to leave that owner as the
// host made it (like chown's -1).
const NoID = ^uint32(0)

// XattrNameMax is the longest extended attribute name (XATTR_NAME_MAX).
const XattrNameMax = 255

// XattrValueMax is the largest extended attribute value the protocol
// carries: what fits in one message beside the longest name. Linux allows
// 64 KiB (XATTR_SIZE_MAX); larger values fail with E2BIG.
const XattrValueMax = MaxMessage - 512

// Setattr mask bits: which fields of a Tsetattr to apply.
const (
	SetattrMode uint32 = 1 << iota
	SetattrUID
	SetattrGID
	SetattrSize
	SetattrAtime
	SetattrMtime

	setattrAll = SetattrMode | SetattrUID | SetattrGID | SetattrSize | SetattrAtime | SetattrMtime
)

// Tcreate creates and opens a new regular file Name in Dir, failing with
// EEXIST if the name exists (O_CREAT|O_EXCL, never following a symlink).
// Flags are open(2) flags: the access mode, O_APPEND and O_TRUNC apply to
// the donated fd. Mode is the permission bits, umask already applied.
type Tcreate struct {
	Dir      Handle
	Name     string
	Flags    uint32
	Mode     uint32
	UID, GID uint32
}

// Rcreate returns the new file's handle and attributes, and donates an fd
// opened with the request's flags. FD travels as SCM_RIGHTS.
type Rcreate struct {
	Node Handle
	Attr Attr
	FD   int
}

// Tmkdir creates directory Name in Dir.
type Tmkdir struct {
	Dir      Handle
	Name     string
	Mode     uint32
	UID, GID uint32
}

// Rmkdir returns the new directory.
type Rmkdir struct {
	Node Handle
	Attr Attr
}

// Tmknod creates a FIFO, a socket or an empty regular file (Mode holds
// the type bits). Device nodes are refused with EPERM.
type Tmknod struct {
	Dir      Handle
	Name     string
	Mode     uint32
	UID, GID uint32
}

// Rmknod returns the new node.
type Rmknod struct {
	Node Handle
	Attr Attr
}

// Tsymlink creates symlink Name in Dir pointing at Target, which the
// server stores as is and never follows.
type Tsymlink struct {
	Dir      Handle
	Name     string
	Target   string
	UID, GID uint32
}

// Rsymlink returns the new symlink.
type Rsymlink struct {
	Node Handle
	Attr Attr
}

// Tlink makes Name in Dir a new hard link to the non-directory Target.
type Tlink struct {
	Dir    Handle
	Name   string
	Target Handle
}

// Rlink returns a handle to the file under its new name.
type Rlink struct {
	Node Handle
	Attr Attr
}

// Tunlink removes Name from Dir; Flags is 0 or AT_REMOVEDIR (rmdir).
type Tunlink struct {
	Dir   Handle
	Name  string
	Flags uint32
}

// Runlink confirms Tunlink.
type Runlink struct{}

// Trename renames OldName in OldDir to NewName in NewDir, as renameat2(2)
// with Flags 0, RENAME_NOREPLACE or RENAME_EXCHANGE.
type Trename struct {
	OldDir  Handle
	OldName string
	NewDir  Handle
	NewName string
	Flags   uint32
}

// Rrename confirms Trename.
type Rrename struct{}

// Tsetattr changes the attributes Mask selects: permission bits, owner,
// size (regular files) and times (whose Nsec may be UTIME_NOW or
// UTIME_OMIT).
type Tsetattr struct {
	Node         Handle
	Mask         uint32
	Mode         uint32
	UID, GID     uint32
	Size         int64
	Atime, Mtime unix.Timespec
}

// Rsetattr returns the attributes after the change.
type Rsetattr struct{ Attr Attr }

// Tgetxattr asks for the value of extended attribute Name.
type Tgetxattr struct {
	Node Handle
	Name string
}

// Rgetxattr returns an extended attribute's value.
type Rgetxattr struct{ Value string }

// Tsetxattr sets extended attribute Name; Flags is 0, XATTR_CREATE or
// XATTR_REPLACE.
type Tsetxattr struct {
	Node  Handle
	Name  string
	Value string
	Flags uint32
}

// Rsetxattr confirms Tsetxattr.
type Rsetxattr struct{}

// Tlistxattr asks for the names of a node's extended attributes.
type Tlistxattr struct{ Node Handle }

// Rlistxattr returns extended attribute names.
type Rlistxattr struct{ Names []string }

// Tremovexattr removes extended attribute Name.
type Tremovexattr struct {
	Node Handle
	Name string
}

// Rremovexattr confirms Tremovexattr.
type Rremovexattr struct{}

// Tfsync flushes a regular file or directory to disk (fdatasync(2) when
// DataOnly).
type Tfsync struct {
	Node     Handle
	DataOnly bool
}

// Rfsync confirms Tfsync.
type Rfsync struct{}

// Tfallocate is fallocate(2) on a regular file.
type Tfallocate struct {
	Node           Handle
	Mode           uint32
	Offset, Length int64
}

// Rfallocate confirms Tfallocate.
type Rfallocate struct{}

// Tbind creates a unix socket of SockType (SOCK_STREAM, SOCK_DGRAM or
// SOCK_SEQPACKET) bound to Name in Dir, with permission bits Mode.
type Tbind struct {
	Dir      Handle
	Name     string
	SockType uint32
	Mode     uint32
	UID, GID uint32
}

// Rbind returns the socket file's handle and attributes and donates the
// bound (not yet listening) socket. FD travels as SCM_RIGHTS.
type Rbind struct {
	Node Handle
	Attr Attr
	FD   int
}

// Tconnect connects a new unix socket of SockType to the socket file Name
// in Dir.
type Tconnect struct {
	Dir      Handle
	Name     string
	SockType uint32
}

// Rconnect donates the connected socket. FD travels as SCM_RIGHTS.
type Rconnect struct{ FD int }

// Ttmpfile creates an unnamed regular file in Dir (open(2)'s O_TMPFILE)
// and opens it with Flags' access mode (O_WRONLY or O_RDWR). O_EXCL in
// Flags keeps it from ever being linked. Tlink may name it later.
type Ttmpfile struct {
	Dir      Handle
	Flags    uint32
	Mode     uint32
	UID, GID uint32
}

// Rtmpfile returns the unnamed file's handle and attributes and donates
// the open fd. FD travels as SCM_RIGHTS.
type Rtmpfile struct {
	Node Handle
	Attr Attr
	FD   int
}

func (*Ttmpfile) Type() MsgType { return MsgTtmpfile }
func (*Rtmpfile) Type() MsgType { return MsgRtmpfile }

func (m *Rtmpfile) fdPtr() *int { return &m.FD }

func (m *Ttmpfile) encode(e *encoder) {
	e.u64(uint64(m.Dir))
	e.u32(m.Flags)
	e.u32(m.Mode)
	e.u32(m.UID)
	e.u32(m.GID)
}
func (m *Ttmpfile) decode(d *decoder) {
	m.Dir = Handle(d.u64())
	m.Flags, m.Mode, m.UID, m.GID = d.u32(), d.u32(), d.u32(), d.u32()
}

func (m *Rtmpfile) encode(e *encoder) { e.nodeAttr(m.Node, &m.Attr) }
func (m *Rtmpfile) decode(d *decoder) { d.nodeAttr(&m.Node, &m.Attr) }

func (*Tcreate) Type() MsgType      { return MsgTcreate }
func (*Rcreate) Type() MsgType      { return MsgRcreate }
func (*Tmkdir) Type() MsgType       { return MsgTmkdir }
func (*Rmkdir) Type() MsgType       { return MsgRmkdir }
func (*Tmknod) Type() MsgType       { return MsgTmknod }
func (*Rmknod) Type() MsgType       { return MsgRmknod }
func (*Tsymlink) Type() MsgType     { return MsgTsymlink }
func (*Rsymlink) Type() MsgType     { return MsgRsymlink }
func (*Tlink) Type() MsgType        { return MsgTlink }
func (*Rlink) Type() MsgType        { return MsgRlink }
func (*Tunlink) Type() MsgType      { return MsgTunlink }
func (*Runlink) Type() MsgType      { return MsgRunlink }
func (*Trename) Type() MsgType      { return MsgTrename }
func (*Rrename) Type() MsgType      { return MsgRrename }
func (*Tsetattr) Type() MsgType     { return MsgTsetattr }
func (*Rsetattr) Type() MsgType     { return MsgRsetattr }
func (*Tgetxattr) Type() MsgType    { return MsgTgetxattr }
func (*Rgetxattr) Type() MsgType    { return MsgRgetxattr }
func (*Tsetxattr) Type() MsgType    { return MsgTsetxattr }
func (*Rsetxattr) Type() MsgType    { return MsgRsetxattr }
func (*Tlistxattr) Type() MsgType   { return MsgTlistxattr }
func (*Rlistxattr) Type() MsgType   { return MsgRlistxattr }
func (*Tremovexattr) Type() MsgType { return MsgTremovexattr }
func (*Rremovexattr) Type() MsgType { return MsgRremovexattr }
func (*Tfsync) Type() MsgType       { return MsgTfsync }
func (*Rfsync) Type() MsgType       { return MsgRfsync }
func (*Tfallocate) Type() MsgType   { return MsgTfallocate }
func (*Rfallocate) Type() MsgType   { return MsgRfallocate }
func (*Tbind) Type() MsgType        { return MsgTbind }
func (*Rbind) Type() MsgType        { return MsgRbind }
func (*Tconnect) Type() MsgType     { return MsgTconnect }
func (*Rconnect) Type() MsgType     { return MsgRconnect }

func (m *Rcreate) fdPtr() *int  { return &m.FD }
func (m *Rbind) fdPtr() *int    { return &m.FD }
func (m *Rconnect) fdPtr() *int { return &m.FD }

// nodeAttr is the body of the responses that return a new node.
func (e *encoder) nodeAttr(h Handle, a *Attr) { e.u64(uint64(h)); e.attr(a) }
func (d *decoder) nodeAttr(h *Handle, a *Attr) {
	*h = Handle(d.u64())
	d.attr(a)
}

// dirName is the body prefix of requests naming an entry of a directory.
func (e *encoder) dirName(h Handle, name string) { e.u64(uint64(h)); e.str(name) }
func (d *decoder) dirName(h *Handle, name *string) {
	*h = Handle(d.u64())
	*name = d.str()
}

func (m *Tcreate) encode(e *encoder) {
	e.dirName(m.Dir, m.Name)
	e.u32(m.Flags)
	e.u32(m.Mode)
	e.u32(m.UID)
	e.u32(m.GID)
}
func (m *Tcreate) decode(d *decoder) {
	d.dirName(&m.Dir, &m.Name)
	m.Flags, m.Mode, m.UID, m.GID = d.u32(), d.u32(), d.u32(), d.u32()
}

func (m *Rcreate) encode(e *encoder) { e.nodeAttr(m.Node, &m.Attr) }
func (m *Rcreate) decode(d *decoder) { d.nodeAttr(&m.Node, &m.Attr) }

func (m *Tmkdir) encode(e *encoder) {
	e.dirName(m.Dir, m.Name)
	e.u32(m.Mode)
	e.u32(m.UID)
	e.u32(m.GID)
}
func (m *Tmkdir) decode(d *decoder) {
	d.dirName(&m.Dir, &m.Name)
	m.Mode, m.UID, m.GID = d.u32(), d.u32(), d.u32()
}

func (m *Rmkdir) encode(e *encoder) { e.nodeAttr(m.Node, &m.Attr) }
func (m *Rmkdir) decode(d *decoder) { d.nodeAttr(&m.Node, &m.Attr) }

func (m *Tmknod) encode(e *encoder) {
	e.dirName(m.Dir, m.Name)
	e.u32(m.Mode)
	e.u32(m.UID)
	e.u32(m.GID)
}
func (m *Tmknod) decode(d *decoder) {
	d.dirName(&m.Dir, &m.Name)
	m.Mode, m.UID, m.GID = d.u32(), d.u32(), d.u32()
}

func (m *Rmknod) encode(e *encoder) { e.nodeAttr(m.Node, &m.Attr) }
func (m *Rmknod) decode(d *decoder) { d.nodeAttr(&m.Node, &m.Attr) }

func (m *Tsymlink) encode(e *encoder) {
	e.dirName(m.Dir, m.Name)
	e.str(m.Target)
	e.u32(m.UID)
	e.u32(m.GID)
}
func (m *Tsymlink) decode(d *decoder) {
	d.dirName(&m.Dir, &m.Name)
	m.Target = d.str()
	m.UID, m.GID = d.u32(), d.u32()
}

func (m *Rsymlink) encode(e *encoder) { e.nodeAttr(m.Node, &m.Attr) }
func (m *Rsymlink) decode(d *decoder) { d.nodeAttr(&m.Node, &m.Attr) }

func (m *Tlink) encode(e *encoder) { e.dirName(m.Dir, m.Name); e.u64(uint64(m.Target)) }
func (m *Tlink) decode(d *decoder) { d.dirName(&m.Dir, &m.Name); m.Target = Handle(d.u64()) }

func (m *Rlink) encode(e *encoder) { e.nodeAttr(m.Node, &m.Attr) }
func (m *Rlink) decode(d *decoder) { d.nodeAttr(&m.Node, &m.Attr) }

func (m *Tunlink) encode(e *encoder) { e.dirName(m.Dir, m.Name); e.u32(m.Flags) }
func (m *Tunlink) decode(d *decoder) { d.dirName(&m.Dir, &m.Name); m.Flags = d.u32() }

func (m *Runlink) encode(*encoder) {}
func (m *Runlink) decode(*decoder) {}

func (m *Trename) encode(e *encoder) {
	e.dirName(m.OldDir, m.OldName)
	e.dirName(m.NewDir, m.NewName)
	e.u32(m.Flags)
}
func (m *Trename) decode(d *decoder) {
	d.dirName(&m.OldDir, &m.OldName)
	d.dirName(&m.NewDir, &m.NewName)
	m.Flags = d.u32()
}

func (m *Rrename) encode(*encoder) {}
func (m *Rrename) decode(*decoder) {}

func (m *Tsetattr) encode(e *encoder) {
	e.u64(uint64(m.Node))
	e.u32(m.Mask)
	e.u32(m.Mode)
	e.u32(m.UID)
	e.u32(m.GID)
	e.i64(m.Size)
	e.timespec(m.Atime)
	e.timespec(m.Mtime)
}
func (m *Tsetattr) decode(d *decoder) {
	m.Node = Handle(d.u64())
	m.Mask, m.Mode, m.UID, m.GID = d.u32(), d.u32(), d.u32(), d.u32()
	m.Size = d.i64()
	m.Atime = d.timespec()
	m.Mtime = d.timespec()
	if m.Mask&^setattrAll != 0 {
		d.fail(errBadValue)
	}
}

func (m *Rsetattr) encode(e *encoder) { e.attr(&m.Attr) }
func (m *Rsetattr) decode(d *decoder) { d.attr(&m.Attr) }

func (m *Tgetxattr) encode(e *encoder) { e.u64(uint64(m.Node)); e.str(m.Name) }
func (m *Tgetxattr) decode(d *decoder) { m.Node = Handle(d.u64()); m.Name = d.str() }

func (m *Rgetxattr) encode(e *encoder) { e.str(m.Value) }
func (m *Rgetxattr) decode(d *decoder) { m.Value = d.str() }

func (m *Tsetxattr) encode(e *encoder) {
	e.u64(uint64(m.Node))
	e.str(m.Name)
	e.str(m.Value)
	e.u32(m.Flags)
}
func (m *Tsetxattr) decode(d *decoder) {
	m.Node = Handle(d.u64())
	m.Name = d.str()
	m.Value = d.str()
	m.Flags = d.u32()
}

func (m *Rsetxattr) encode(*encoder) {}
func (m *Rsetxattr) decode(*decoder) {}

func (m *Tlistxattr) encode(e *encoder) { e.u64(uint64(m.Node)) }
func (m *Tlistxattr) decode(d *decoder) { m.Node = Handle(d.u64()) }

func (m *Rlistxattr) encode(e *encoder) {
	e.u32(uint32(len(m.Names)))
	for _, n := range m.Names {
		e.str(n)
	}
}

func (m *Rlistxattr) decode(d *decoder) {
	n := d.u32()
	// Every name takes at least 3 bytes: refuse a count the remaining
	// bytes cannot hold before allocating for it.
	if d.err != nil || uint64(n) > uint64(len(d.buf))/3 {
		d.fail(errShort)
		return
	}
	if n == 0 {
		return
	}
	m.Names = make([]string, n)
	for i := range m.Names {
		m.Names[i] = d.str()
		if d.err != nil {
			return
		}
		if !validXattrName(m.Names[i]) {
			d.fail(errBadValue)
			return
		}
	}
}

// validXattrName reports whether name can name an extended attribute:
// not empty, at most XattrNameMax bytes, without NUL.
func validXattrName(name string) bool {
	if name == "" || len(name) > XattrNameMax {
		return false
	}
	for i := 0; i < len(name); i++ {
		if name[i] == 0 {
			return false
		}
	}
	return true
}

func (m *Tremovexattr) encode(e *encoder) { e.u64(uint64(m.Node)); e.str(m.Name) }
func (m *Tremovexattr) decode(d *decoder) { m.Node = Handle(d.u64()); m.Name = d.str() }

func (m *Rremovexattr) encode(*encoder) {}
func (m *Rremovexattr) decode(*decoder) {}

func (m *Tfsync) encode(e *encoder) { e.u64(uint64(m.Node)); e.boolean(m.DataOnly) }
func (m *Tfsync) decode(d *decoder) { m.Node = Handle(d.u64()); m.DataOnly = d.boolean() }

func (m *Rfsync) encode(*encoder) {}
func (m *Rfsync) decode(*decoder) {}

func (m *Tfallocate) encode(e *encoder) {
	e.u64(uint64(m.Node))
	e.u32(m.Mode)
	e.i64(m.Offset)
	e.i64(m.Length)
}
func (m *Tfallocate) decode(d *decoder) {
	m.Node = Handle(d.u64())
	m.Mode = d.u32()
	m.Offset, m.Length = d.i64(), d.i64()
}

func (m *Rfallocate) encode(*encoder) {}
func (m *Rfallocate) decode(*decoder) {}

func (m *Tbind) encode(e *encoder) {
	e.dirName(m.Dir, m.Name)
	e.u32(m.SockType)
	e.u32(m.Mode)
	e.u32(m.UID)
	e.u32(m.GID)
}
func (m *Tbind) decode(d *decoder) {
	d.dirName(&m.Dir, &m.Name)
	m.SockType, m.Mode, m.UID, m.GID = d.u32(), d.u32(), d.u32(), d.u32()
}

func (m *Rbind) encode(e *encoder) { e.nodeAttr(m.Node, &m.Attr) }
func (m *Rbind) decode(d *decoder) { d.nodeAttr(&m.Node, &m.Attr) }

func (m *Tconnect) encode(e *encoder) { e.dirName(m.Dir, m.Name); e.u32(m.SockType) }
func (m *Tconnect) decode(d *decoder) { d.dirName(&m.Dir, &m.Name); m.SockType = d.u32() }

func (m *Rconnect) encode(*encoder) {}
func (m *Rconnect) decode(*decoder) {}

// newWriteMessage is newMessage for this file's types.
func newWriteMessage(t MsgType) Message {
	switch t {
	case MsgTcreate:
		return &Tcreate{}
	case MsgRcreate:
		return &Rcreate{FD: -1}
	case MsgTmkdir:
		return &Tmkdir{}
	case MsgRmkdir:
		return &Rmkdir{}
	case MsgTmknod:
		return &Tmknod{}
	case MsgRmknod:
		return &Rmknod{}
	case MsgTsymlink:
		return &Tsymlink{}
	case MsgRsymlink:
		return &Rsymlink{}
	case MsgTlink:
		return &Tlink{}
	case MsgRlink:
		return &Rlink{}
	case MsgTunlink:
		return &Tunlink{}
	case MsgRunlink:
		return &Runlink{}
	case MsgTrename:
		return &Trename{}
	case MsgRrename:
		return &Rrename{}
	case MsgTsetattr:
		return &Tsetattr{}
	case MsgRsetattr:
		return &Rsetattr{}
	case MsgTgetxattr:
		return &Tgetxattr{}
	case MsgRgetxattr:
		return &Rgetxattr{}
	case MsgTsetxattr:
		return &Tsetxattr{}
	case MsgRsetxattr:
		return &Rsetxattr{}
	case MsgTlistxattr:
		return &Tlistxattr{}
	case MsgRlistxattr:
		return &Rlistxattr{}
	case MsgTremovexattr:
		return &Tremovexattr{}
	case MsgRremovexattr:
		return &Rremovexattr{}
	case MsgTfsync:
		return &Tfsync{}
	case MsgRfsync:
		return &Rfsync{}
	case MsgTfallocate:
		return &Tfallocate{}
	case MsgRfallocate:
		return &Rfallocate{}
	case MsgTbind:
		return &Tbind{}
	case MsgRbind:
		return &Rbind{FD: -1}
	case MsgTconnect:
		return &Tconnect{}
	case MsgRconnect:
		return &Rconnect{FD: -1}
	case MsgTtmpfile:
		return &Ttmpfile{}
	case MsgRtmpfile:
		return &Rtmpfile{FD: -1}
	}
	return nil
}

// MessageFD returns the fd m donates, or -1 if m donates none.
func MessageFD(m Message) int {
	if fm, ok := m.(fdMessage); ok {
		return *fm.fdPtr()
	}
	return -1
}
