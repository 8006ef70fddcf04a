package proto

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Message is one protocol message. Only this package's types implement it.
type Message interface {
	// Type returns the message's type byte.
	Type() MsgType
	encode(e *encoder)
	decode(d *decoder)
}

// fdMessage is a message that carries one donated file descriptor.
type fdMessage interface {
	Message
	fdPtr() *int
}

// Rerror answers any request that failed; Errno is a Linux errno.
type Rerror struct{ Errno uint32 }

// Tattach asks for the root of one of the served trees, its attach
// point: Mount 0 is the container's root, Mount i > 0 the i-th bind
// mount the gofer was started with. A bind mount's root may be a
// non-directory (a file bind mount such as /etc/hosts).
type Tattach struct {
	Version uint32
	Mount   uint32
}

// Rattach returns a handle to the root.
type Rattach struct {
	Root Handle
	Attr Attr
}

// Twalk looks up one component, Name, in directory Dir, without following
// a symlink.
type Twalk struct {
	Dir  Handle
	Name string
}

// Rwalk returns a new handle to the node walked to.
type Rwalk struct {
	Node Handle
	Attr Attr
}

// Tstat asks for a node's attributes (lstat semantics).
type Tstat struct{ Node Handle }

// Rstat returns a node's attributes.
type Rstat struct{ Attr Attr }

// Topen asks for a host fd of a node opened with Flags (open(2) flags).
type Topen struct {
	Node  Handle
	Flags uint32
}

// Ropen donates the host fd. FD is not part of the bytes; it travels as
// SCM_RIGHTS and belongs to the receiver.
type Ropen struct{ FD int }

// Treadlink asks for a symlink's target.
type Treadlink struct{ Node Handle }

// Rreadlink returns a symlink's target.
type Rreadlink struct{ Target string }

// Tgetdents asks for a page of directory entries starting at Offset, a
// cookie from an earlier Rgetdents.Next, or 0 for the start.
type Tgetdents struct {
	Dir    Handle
	Offset uint64
}

// Rgetdents returns a page of entries; Next is the cookie for the following
// page and EOF says there is none.
type Rgetdents struct {
	Next    uint64
	EOF     bool
	Entries []Dirent
}

// Tstatfs asks for statfs(2) of the filesystem holding a node.
type Tstatfs struct{ Node Handle }

// Rstatfs returns the filesystem's statistics.
type Rstatfs struct{ Statfs unix.Statfs_t }

// Tclose releases a handle.
type Tclose struct{ Node Handle }

// Rclose confirms Tclose.
type Rclose struct{}

// Tdup asks for a new connection to the same server.
type Tdup struct{}

// Rdup donates one end of a new connection. FD travels as SCM_RIGHTS.
type Rdup struct{ FD int }

func (*Rerror) Type() MsgType    { return MsgRerror }
func (*Tattach) Type() MsgType   { return MsgTattach }
func (*Rattach) Type() MsgType   { return MsgRattach }
func (*Twalk) Type() MsgType     { return MsgTwalk }
func (*Rwalk) Type() MsgType     { return MsgRwalk }
func (*Tstat) Type() MsgType     { return MsgTstat }
func (*Rstat) Type() MsgType     { return MsgRstat }
func (*Topen) Type() MsgType     { return MsgTopen }
func (*Ropen) Type() MsgType     { return MsgRopen }
func (*Treadlink) Type() MsgType { return MsgTreadlink }
func (*Rreadlink) Type() MsgType { return MsgRreadlink }
func (*Tgetdents) Type() MsgType { return MsgTgetdents }
func (*Rgetdents) Type() MsgType { return MsgRgetdents }
func (*Tstatfs) Type() MsgType   { return MsgTstatfs }
func (*Rstatfs) Type() MsgType   { return MsgRstatfs }
func (*Tclose) Type() MsgType    { return MsgTclose }
func (*Rclose) Type() MsgType    { return MsgRclose }
func (*Tdup) Type() MsgType      { return MsgTdup }
func (*Rdup) Type() MsgType      { return MsgRdup }

func (m *Ropen) fdPtr() *int { return &m.FD }
func (m *Rdup) fdPtr() *int  { return &m.FD }

func (m *Rerror) encode(e *encoder) { e.u32(m.Errno) }
func (m *Rerror) decode(d *decoder) {
	m.Errno = d.u32()
	if m.Errno == 0 || m.Errno >= 4096 {
		d.fail(errBadValue)
	}
}

func (m *Tattach) encode(e *encoder) { e.u32(m.Version); e.u32(m.Mount) }
func (m *Tattach) decode(d *decoder) { m.Version = d.u32(); m.Mount = d.u32() }

func (m *Rattach) encode(e *encoder) { e.u64(uint64(m.Root)); e.attr(&m.Attr) }
func (m *Rattach) decode(d *decoder) { m.Root = Handle(d.u64()); d.attr(&m.Attr) }

func (m *Twalk) encode(e *encoder) { e.u64(uint64(m.Dir)); e.str(m.Name) }
func (m *Twalk) decode(d *decoder) { m.Dir = Handle(d.u64()); m.Name = d.str() }

func (m *Rwalk) encode(e *encoder) { e.u64(uint64(m.Node)); e.attr(&m.Attr) }
func (m *Rwalk) decode(d *decoder) { m.Node = Handle(d.u64()); d.attr(&m.Attr) }

func (m *Tstat) encode(e *encoder) { e.u64(uint64(m.Node)) }
func (m *Tstat) decode(d *decoder) { m.Node = Handle(d.u64()) }

func (m *Rstat) encode(e *encoder) { e.attr(&m.Attr) }
func (m *Rstat) decode(d *decoder) { d.attr(&m.Attr) }

func (m *Topen) encode(e *encoder) { e.u64(uint64(m.Node)); e.u32(m.Flags) }
func (m *Topen) decode(d *decoder) { m.Node = Handle(d.u64()); m.Flags = d.u32() }

func (m *Ropen) encode(*encoder) {}
func (m *Ropen) decode(*decoder) {}

func (m *Treadlink) encode(e *encoder) { e.u64(uint64(m.Node)) }
func (m *Treadlink) decode(d *decoder) { m.Node = Handle(d.u64()) }

func (m *Rreadlink) encode(e *encoder) { e.str(m.Target) }
func (m *Rreadlink) decode(d *decoder) {
	m.Target = d.str()
	if len(m.Target) == 0 || len(m.Target) >= PathMax {
		d.fail(errBadValue)
		return
	}
	for i := 0; i < len(m.Target); i++ {
		if m.Target[i] == 0 {
			d.fail(errBadValue)
			return
		}
	}
}

func (m *Tgetdents) encode(e *encoder) { e.u64(uint64(m.Dir)); e.u64(m.Offset) }
func (m *Tgetdents) decode(d *decoder) { m.Dir = Handle(d.u64()); m.Offset = d.u64() }

func (m *Rgetdents) encode(e *encoder) {
	e.u64(m.Next)
	e.boolean(m.EOF)
	e.u32(uint32(len(m.Entries)))
	for i := range m.Entries {
		ent := &m.Entries[i]
		e.u64(ent.Ino)
		e.u8(ent.Type)
		e.str(ent.Name)
	}
}

func (m *Rgetdents) decode(d *decoder) {
	m.Next = d.u64()
	m.EOF = d.boolean()
	n := d.u32()
	// Every entry takes at least direntFixed+1 bytes: refuse a count the
	// remaining bytes cannot hold before allocating for it.
	if d.err != nil || uint64(n) > uint64(len(d.buf))/(direntFixed+1) {
		d.fail(errShort)
		return
	}
	if n == 0 {
		return
	}
	m.Entries = make([]Dirent, n)
	for i := range m.Entries {
		ent := &m.Entries[i]
		ent.Ino = d.u64()
		ent.Type = d.u8()
		ent.Name = d.str()
		if d.err != nil {
			return
		}
		if !ValidName(ent.Name) || !validDirentType(ent.Type) {
			d.fail(errBadValue)
			return
		}
	}
}

func (m *Tstatfs) encode(e *encoder) { e.u64(uint64(m.Node)) }
func (m *Tstatfs) decode(d *decoder) { m.Node = Handle(d.u64()) }

func (m *Rstatfs) encode(e *encoder) { e.statfs(&m.Statfs) }
func (m *Rstatfs) decode(d *decoder) { d.statfs(&m.Statfs) }

func (m *Tclose) encode(e *encoder) { e.u64(uint64(m.Node)) }
func (m *Tclose) decode(d *decoder) { m.Node = Handle(d.u64()) }

func (m *Rclose) encode(*encoder) {}
func (m *Rclose) decode(*decoder) {}

func (m *Tdup) encode(*encoder) {}
func (m *Tdup) decode(*decoder) {}

func (m *Rdup) encode(*encoder) {}
func (m *Rdup) decode(*decoder) {}

// newMessage returns a zero message of type t, or nil if t is unknown.
func newMessage(t MsgType) Message {
	switch t {
	case MsgRerror:
		return &Rerror{}
	case MsgTattach:
		return &Tattach{}
	case MsgRattach:
		return &Rattach{}
	case MsgTwalk:
		return &Twalk{}
	case MsgRwalk:
		return &Rwalk{}
	case MsgTstat:
		return &Tstat{}
	case MsgRstat:
		return &Rstat{}
	case MsgTopen:
		return &Topen{}
	case MsgRopen:
		return &Ropen{FD: -1}
	case MsgTreadlink:
		return &Treadlink{}
	case MsgRreadlink:
		return &Rreadlink{}
	case MsgTgetdents:
		return &Tgetdents{}
	case MsgRgetdents:
		return &Rgetdents{}
	case MsgTstatfs:
		return &Tstatfs{}
	case MsgRstatfs:
		return &Rstatfs{}
	case MsgTclose:
		return &Tclose{}
	case MsgRclose:
		return &Rclose{}
	case MsgTdup:
		return &Tdup{}
	case MsgRdup:
		return &Rdup{FD: -1}
	case MsgTwalkPath:
		return &TwalkPath{}
	case MsgRwalkPath:
		return &RwalkPath{}
	case MsgTwalkOpen:
		return &TwalkOpen{}
	case MsgRwalkOpen:
		return &RwalkOpen{FD: -1}
	}
	return newWriteMessage(t)
}

// IsRequest reports whether t is a T-message.
func IsRequest(t MsgType) bool { return t >= MsgTattach && t%2 == 0 && newMessage(t) != nil }

// Encode appends the encoding of m with the given tag to buf and returns
// the extended buffer. A donated fd is not part of the bytes.
func Encode(buf []byte, tag uint32, m Message) ([]byte, error) {
	start := len(buf)
	e := encoder{buf: buf}
	e.u32(tag)
	e.u8(uint8(m.Type()))
	m.encode(&e)
	if e.err != nil {
		return buf[:start], fmt.Errorf("encode %v: %w", m.Type(), e.err)
	}
	if len(e.buf)-start > MaxMessage {
		return buf[:start], fmt.Errorf("encode %v: %w", m.Type(), errTooLarge)
	}
	return e.buf, nil
}

// DecodeError is a message that arrived whole but could not be decoded.
// The connection is still usable; if HasTag, the sender can be answered.
type DecodeError struct {
	Tag    uint32
	HasTag bool
	Err    error
}

func (e *DecodeError) Error() string {
	if e.HasTag {
		return fmt.Sprintf("bad message (tag %d): %v", e.Tag, e.Err)
	}
	return fmt.Sprintf("bad message: %v", e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// Decode decodes one message. Fds of donating messages are not filled in
// (they are -1); the transport attaches them. A failure is a *DecodeError.
func Decode(b []byte) (uint32, Message, error) {
	if len(b) < headerSize {
		return 0, nil, &DecodeError{Err: errShort}
	}
	if len(b) > MaxMessage {
		return 0, nil, &DecodeError{Err: errTooLarge}
	}
	d := decoder{buf: b}
	tag := d.u32()
	t := MsgType(d.u8())
	m := newMessage(t)
	if m == nil {
		return tag, nil, &DecodeError{Tag: tag, HasTag: true, Err: fmt.Errorf("%w %d", errUnknown, t)}
	}
	m.decode(&d)
	if err := d.finish(); err != nil {
		return tag, nil, &DecodeError{Tag: tag, HasTag: true, Err: fmt.Errorf("%v: %w", t, err)}
	}
	return tag, m, nil
}
