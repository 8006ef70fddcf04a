package proto

import "golang.org/x/sys/unix"

// MaxWalkNames bounds the components of one TwalkPath.
const MaxWalkNames = 64

// TwalkPath looks up several components in a row: Names[0] in directory
// Dir, Names[1] in the directory that was, and so on, never following a
// symlink. It saves the round trips of one Twalk per component on a path
// the Sentry has not cached yet. Names holds 1 to MaxWalkNames entries,
// each a single component (the server refuses others as Twalk does).
type TwalkPath struct {
	Dir   Handle
	Names []string
}

// WalkStep is one component a TwalkPath walked: a new handle and its
// attributes, and for a symlink its target when the server could read it
// ("" otherwise, and always "" for other files).
type WalkStep struct {
	Node   Handle
	Attr   Attr
	Target string
}

// RwalkPath returns one step per component walked, in order, at least
// one (a failure of Names[0] is answered with Rerror). With fewer steps
// than names, the walk stopped: at a non-directory (the last step's
// node, Errno 0), because Names[len(Steps)] failed with Errno, or because
// the response was full (Errno 0, the last step a directory).
type RwalkPath struct {
	Steps []WalkStep
	Errno uint32
}

// TwalkOpen is TwalkPath for a caller about to open the last file for
// reading: when every name was walked and the last is a regular file,
// the server opens it read-only (as Topen would) and answers RwalkOpen,
// which donates the fd; otherwise it answers RwalkPath (or Rerror) as
// for a TwalkPath.
type TwalkOpen struct {
	Dir   Handle
	Names []string
}

// RwalkOpen is an RwalkPath that walked every name, the last a regular
// file, plus a host fd of that file opened read-only. FD travels as
// SCM_RIGHTS and belongs to the receiver.
type RwalkOpen struct {
	Steps []WalkStep
	FD    int
}

func (*TwalkPath) Type() MsgType { return MsgTwalkPath }
func (*RwalkPath) Type() MsgType { return MsgRwalkPath }
func (*TwalkOpen) Type() MsgType { return MsgTwalkOpen }
func (*RwalkOpen) Type() MsgType { return MsgRwalkOpen }

func (m *RwalkOpen) fdPtr() *int { return &m.FD }

func (m *TwalkOpen) encode(e *encoder) { (*TwalkPath)(m).encode(e) }
func (m *TwalkOpen) decode(d *decoder) { (*TwalkPath)(m).decode(d) }

func (m *RwalkOpen) encode(e *encoder) {
	r := RwalkPath{Steps: m.Steps}
	r.encode(e)
}

func (m *RwalkOpen) decode(d *decoder) {
	var r RwalkPath
	r.decode(d)
	if d.err != nil {
		return
	}
	if r.Errno != 0 || r.Steps[len(r.Steps)-1].Attr.Mode&unix.S_IFMT != unix.S_IFREG {
		d.fail(errBadValue)
		return
	}
	m.Steps = r.Steps
}

func (m *TwalkPath) encode(e *encoder) {
	e.u64(uint64(m.Dir))
	e.u16(uint16(len(m.Names)))
	for _, n := range m.Names {
		e.str(n)
	}
}

func (m *TwalkPath) decode(d *decoder) {
	m.Dir = Handle(d.u64())
	n := d.u16()
	if d.err != nil {
		return
	}
	if n == 0 || n > MaxWalkNames {
		d.fail(errBadValue)
		return
	}
	// Every name takes at least its 2-byte length.
	if uint64(n) > uint64(len(d.buf))/2 {
		d.fail(errShort)
		return
	}
	m.Names = make([]string, n)
	for i := range m.Names {
		m.Names[i] = d.str()
	}
}

// walkStepFixed is the encoded size of a WalkStep without its target's
// bytes: handle, attributes, target length.
const walkStepFixed = 8 + attrSize + 2

// attrSize is the encoded size of an Attr.
const attrSize = 4 + 8 + 8 + 8 + 4 + 4 + 8 + 8 + 8 + 8 + 3*16

// RwalkPathOverhead is the size of an RwalkPath with no steps, header
// included. Steps fit while RwalkPathOverhead plus the sum of their
// EncodedSize is at most MaxMessage.
const RwalkPathOverhead = headerSize + 4 + 4

// EncodedSize is the number of bytes s takes in an RwalkPath.
func (s *WalkStep) EncodedSize() int { return walkStepFixed + len(s.Target) }

func (m *RwalkPath) encode(e *encoder) {
	e.u32(uint32(len(m.Steps)))
	for i := range m.Steps {
		s := &m.Steps[i]
		e.u64(uint64(s.Node))
		e.attr(&s.Attr)
		e.str(s.Target)
	}
	e.u32(m.Errno)
}

func (m *RwalkPath) decode(d *decoder) {
	n := d.u32()
	if d.err != nil {
		return
	}
	if n == 0 || n > MaxWalkNames {
		d.fail(errBadValue)
		return
	}
	if uint64(n) > uint64(len(d.buf))/walkStepFixed {
		d.fail(errShort)
		return
	}
	m.Steps = make([]WalkStep, n)
	for i := range m.Steps {
		s := &m.Steps[i]
		s.Node = Handle(d.u64())
		d.attr(&s.Attr)
		s.Target = d.str()
		if d.err != nil {
			return
		}
		if s.Node == 0 || !validStepTarget(s) {
			d.fail(errBadValue)
			return
		}
		// Only the last step may be a non-directory.
		if i < len(m.Steps)-1 && s.Attr.Mode&unix.S_IFMT != unix.S_IFDIR {
			d.fail(errBadValue)
			return
		}
	}
	m.Errno = d.u32()
	if m.Errno >= 4096 {
		d.fail(errBadValue)
	}
}

// validStepTarget reports whether a step's target fits its file: empty
// for anything but a symlink, else empty or a valid symlink target.
func validStepTarget(s *WalkStep) bool {
	if s.Target == "" {
		return true
	}
	if s.Attr.Mode&unix.S_IFMT != unix.S_IFLNK || len(s.Target) >= PathMax {
		return false
	}
	for i := 0; i < len(s.Target); i++ {
		if s.Target[i] == 0 {
			return false
		}
	}
	return true
}

// WalkPath looks up names one after the other from directory dir (see
// TwalkPath) and returns a step (a new handle) per component walked. A
// failure of names[0] is the error, with no step. Otherwise err is nil
// when the walk stopped at a non-directory, walked every name, or
// stopped early for the server's own reasons (the caller walks the rest
// again), and is the errno of names[len(steps)] when that one failed.
// Names past MaxWalkNames, or from the first that is not a single
// component, are not walked; a bad names[0] fails as Walk's name does.
func (c *Client) WalkPath(dir Handle, names []string) ([]WalkStep, error) {
	if err := checkWalkNames(&names); err != nil {
		return nil, err
	}
	steps, _, err := c.walkPath(dir, names, false)
	return steps, err
}

// WalkPathOpen is WalkPath for a caller about to open the last file for
// reading (see TwalkOpen): when every name was walked and the last is a
// regular file, fd is a host fd of it opened read-only, which the caller
// owns; otherwise fd is -1.
func (c *Client) WalkPathOpen(dir Handle, names []string) (steps []WalkStep, fd int, err error) {
	if err := checkWalkNames(&names); err != nil {
		return nil, -1, err
	}
	return c.walkPath(dir, names, true)
}

// checkWalkNames applies WalkPath's rules to names: errors for a bad
// first name, else the list cut before a bad one or past MaxWalkNames.
func checkWalkNames(names *[]string) error {
	ns := *names
	if len(ns) == 0 {
		return unix.EINVAL
	}
	if len(ns[0]) > NameMax {
		return unix.ENAMETOOLONG
	}
	if len(ns) > MaxWalkNames {
		ns = ns[:MaxWalkNames]
	}
	for i, n := range ns {
		if !ValidName(n) {
			if i == 0 {
				return unix.EINVAL
			}
			ns = ns[:i]
			break
		}
	}
	*names = ns
	return nil
}

func (c *Client) walkPath(dir Handle, names []string, open bool) ([]WalkStep, int, error) {
	var req Message = &TwalkPath{Dir: dir, Names: names}
	if open {
		req = &TwalkOpen{Dir: dir, Names: names}
	}
	m, err := c.callEither(req, MsgRwalkPath, MsgRwalkOpen)
	if err != nil {
		return nil, -1, err
	}
	var steps []WalkStep
	var errno uint32
	fd := -1
	switch r := m.(type) {
	case *RwalkPath:
		steps, errno = r.Steps, r.Errno
	case *RwalkOpen:
		steps, fd = r.Steps, r.FD
		if !open || len(steps) != len(names) {
			unix.Close(fd)
			fd = -1
		}
	}
	if len(steps) > len(names) {
		if fd >= 0 {
			unix.Close(fd)
		}
		for _, s := range steps {
			go c.Close(s.Node)
		}
		return nil, -1, eio("walk of %d names answered with %d steps", len(names), len(steps))
	}
	if errno != 0 && len(steps) < len(names) {
		return steps, -1, unix.Errno(errno)
	}
	return steps, fd, nil
}
