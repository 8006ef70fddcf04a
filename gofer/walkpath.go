package gofer

import (
	"errors"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/gofer/proto"
)

// walkPath serves TwalkPath from dir (which the caller holds a reference
// on): one walk per name, each a single checked component looked up with
// O_NOFOLLOW in the directory the one before found, exactly as that many
// Twalks would, so it reaches nothing a Twalk could not. It stops after
// a non-directory (a symlink is returned, with its target, never
// followed), at the first failure (an Rerror for names[0], else the
// errno in the response), or when the response is full.
//
// With open (TwalkOpen), a last regular file reached by walking every
// name is opened for reading as Topen opens it, and the answer is an
// RwalkOpen donating that fd.
func (c *conn) walkPath(dir *node, names []string, open bool) proto.Message {
	r := &proto.RwalkPath{}
	size := proto.RwalkPathOverhead
	cur := dir
	cur.incRef()
	defer func() { cur.decRef() }()
	for i, name := range names {
		child, attr, err := walk(cur, name)
		if err != nil {
			if i == 0 {
				return errMsg(err)
			}
			var errno unix.Errno
			if !errors.As(err, &errno) || errno == 0 {
				errno = unix.EIO
			}
			r.Errno = uint32(errno)
			break
		}
		step := proto.WalkStep{Attr: attr}
		if child.mode == unix.S_IFLNK {
			// The Sentry resolves the link next; an unreadable
			// target is left for a Treadlink to report.
			if t, err := readlink(child); err == nil {
				step.Target = t
			}
		}
		if size+step.EncodedSize() > proto.MaxMessage {
			child.decRef()
			break
		}
		size += step.EncodedSize()
		child.incRef() // one for the handle table, one to walk on
		step.Node = proto.Handle(c.nodes.add(child))
		r.Steps = append(r.Steps, step)
		cur.decRef()
		cur = child
		if child.mode != unix.S_IFDIR {
			break
		}
	}
	if open && len(r.Steps) == len(names) && cur.mode == unix.S_IFREG {
		if fd, err := openFile(cur, unix.O_RDONLY, true); err == nil {
			return &proto.RwalkOpen{Steps: r.Steps, FD: fd}
		}
	}
	return r
}
