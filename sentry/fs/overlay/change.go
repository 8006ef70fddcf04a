package overlay

import (
	"strings"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
)

// upperDirLocked copies d up if needed and returns its upper directory.
// filesystem.mu is held.
func (d dirNode) upperDirLocked(ctx fs.Context) (fs.MutableDir, error) {
	u, err := d.copyUpLocked(ctx)
	if err != nil {
		return nil, err
	}
	md, ok := u.(fs.MutableDir)
	if !ok {
		return nil, unix.EIO
	}
	return md, nil
}

// clearWhiteout removes a whiteout called name from the upper directory
// ud, reporting whether there was one.
func clearWhiteout(ctx fs.Context, ud fs.MutableDir, name string) (bool, error) {
	un, err := ud.Lookup(ctx, name)
	if err != nil || !isWhiteout(ctx, un) {
		return false, nil
	}
	if err := ud.Unlink(ctx, name, un); err != nil {
		return false, err
	}
	return true, nil
}

// whiteout hides the lower entry name of the upper directory ud.
func whiteout(ctx fs.Context, ud fs.MutableDir) func(name string) error {
	return func(name string) error {
		_, err := ud.Mknod(ctx, name, fs.CreateOptions{Mode: unix.S_IFCHR})
		return err
	}
}

// setOpaque marks the upper directory un as hiding the lower one.
func setOpaque(ctx fs.Context, un fs.Node) error {
	x, ok := un.(fs.XattrNode)
	if !ok {
		return unix.EIO
	}
	return x.SetXattr(ctx, opaqueXattr, []byte("y"), 0)
}

// clearWhiteouts removes every whiteout from the upper directory un, so
// that an empty merged directory can be removed or replaced.
func clearWhiteouts(ctx fs.Context, un fs.Node) error {
	ud, ok := un.(fs.MutableDir)
	if !ok {
		return nil
	}
	ents, err := ud.Readdir(ctx)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if _, err := clearWhiteout(ctx, ud, e.Name); err != nil {
			return err
		}
	}
	return nil
}

// mergedEmpty reports whether the directory node c lists no entries.
func mergedEmpty(ctx fs.Context, c *node) (bool, error) {
	ents, err := dirNode{c}.Readdir(ctx)
	return len(ents) == 0, err
}

// newChild returns the node for un, just created as d's entry name.
func (d dirNode) newChild(ctx fs.Context, un fs.Node, name string) (fs.Node, error) {
	st, err := un.Stat(ctx)
	if err != nil {
		return nil, err
	}
	n := &node{ofs: d.ofs, upper: un, parent: d.node, name: name, ino: st.Ino + upperInoBase}
	return n.wrap(ctx), nil
}

// create makes name in d's upper directory with make, replacing a
// whiteout (which is put back if make fails).
func (d dirNode) create(ctx fs.Context, name string, mk func(ud fs.MutableDir) (fs.Node, error)) (fs.Node, error) {
	d.ofs.mu.Lock()
	defer d.ofs.mu.Unlock()
	ud, err := d.upperDirLocked(ctx)
	if err != nil {
		return nil, err
	}
	hadWhiteout, err := clearWhiteout(ctx, ud, name)
	if err != nil {
		return nil, err
	}
	un, err := mk(ud)
	if err != nil {
		if hadWhiteout {
			whiteout(ctx, ud)(name)
		}
		return nil, err
	}
	return d.newChild(ctx, un, name)
}

// Mknod implements fs.MutableDir.
func (d dirNode) Mknod(ctx fs.Context, name string, opts fs.CreateOptions) (fs.Node, error) {
	return d.create(ctx, name, func(ud fs.MutableDir) (fs.Node, error) {
		return ud.Mknod(ctx, name, opts)
	})
}

// Symlink implements fs.MutableDir.
func (d dirNode) Symlink(ctx fs.Context, name, target string, opts fs.CreateOptions) (fs.Node, error) {
	return d.create(ctx, name, func(ud fs.MutableDir) (fs.Node, error) {
		return ud.Symlink(ctx, name, target, opts)
	})
}

// Mkdir implements fs.MutableDir. A directory made where the lower layer
// has the name is opaque.
func (d dirNode) Mkdir(ctx fs.Context, name string, opts fs.CreateOptions) (fs.Node, error) {
	hides := d.lowerHas(ctx, name)
	return d.create(ctx, name, func(ud fs.MutableDir) (fs.Node, error) {
		un, err := ud.Mkdir(ctx, name, opts)
		if err != nil || !hides {
			return un, err
		}
		if err := setOpaque(ctx, un); err != nil {
			ud.Rmdir(ctx, name, un)
			return nil, err
		}
		return un, nil
	})
}

// Tmpfile implements fs.TmpfileDir.
func (d dirNode) Tmpfile(ctx fs.Context, opts fs.CreateOptions) (fs.Node, error) {
	d.ofs.mu.Lock()
	defer d.ofs.mu.Unlock()
	ud, err := d.upperDirLocked(ctx)
	if err != nil {
		return nil, err
	}
	td, ok := ud.(fs.TmpfileDir)
	if !ok {
		return nil, unix.EOPNOTSUPP
	}
	un, err := td.Tmpfile(ctx, opts)
	if err != nil {
		return nil, err
	}
	st, err := un.Stat(ctx)
	if err != nil {
		return nil, err
	}
	n := &node{ofs: d.ofs, upper: un, ino: st.Ino + upperInoBase}
	return n.wrap(ctx), nil
}

// Link implements fs.MutableDir: the target is copied up and linked in the
// upper layer.
func (d dirNode) Link(ctx fs.Context, name string, target fs.Node) error {
	t := unwrap(target)
	if t == nil {
		return unix.EXDEV
	}
	_, err := d.create(ctx, name, func(ud fs.MutableDir) (fs.Node, error) {
		tu, err := t.copyUpLocked(ctx)
		if err != nil {
			return nil, err
		}
		return tu, ud.Link(ctx, name, tu)
	})
	return err
}

// remove takes name (naming c) out of d: from the upper directory if it is
// there, then a whiteout if the lower layer has the name.
func (d dirNode) remove(ctx fs.Context, name string, c *node, rm func(ud fs.MutableDir, cu fs.Node) error) error {
	d.ofs.mu.Lock()
	defer d.ofs.mu.Unlock()
	hides := d.lowerHas(ctx, name)
	ud, err := d.upperDirLocked(ctx)
	if err != nil {
		return err
	}
	if cu := c.upperNode(); cu != nil {
		if err := rm(ud, cu); err != nil {
			return err
		}
	}
	if hides {
		return whiteout(ctx, ud)(name)
	}
	return nil
}

// Unlink implements fs.MutableDir.
func (d dirNode) Unlink(ctx fs.Context, name string, child fs.Node) error {
	c := unwrap(child)
	if c == nil {
		return unix.EIO
	}
	return d.remove(ctx, name, c, func(ud fs.MutableDir, cu fs.Node) error {
		return ud.Unlink(ctx, name, cu)
	})
}

// Rmdir implements fs.MutableDir: the merged directory must be empty.
func (d dirNode) Rmdir(ctx fs.Context, name string, child fs.Node) error {
	c := unwrap(child)
	if c == nil {
		return unix.EIO
	}
	if empty, err := mergedEmpty(ctx, c); err != nil {
		return err
	} else if !empty {
		return unix.ENOTEMPTY
	}
	return d.remove(ctx, name, c, func(ud fs.MutableDir, cu fs.Node) error {
		if err := clearWhiteouts(ctx, cu); err != nil {
			return err
		}
		return ud.Rmdir(ctx, name, cu)
	})
}

// isDir reports whether n is a directory.
func isDir(ctx fs.Context, n *node) bool {
	st, err := n.current().Stat(ctx)
	return err == nil && st.IsDir()
}

// Rename implements fs.MutableDir. Directories with a lower part cannot
// move (EXDEV), as in overlayfs without redirect_dir.
func (d dirNode) Rename(ctx fs.Context, oldName string, renamed fs.Node, newDir fs.MutableDir, newName string, replaced fs.Node, flags uint32) error {
	r := unwrap(renamed)
	nd, ok := newDir.(dirNode)
	if r == nil || !ok {
		return unix.EXDEV
	}
	var p *node
	if replaced != nil {
		if p = unwrap(replaced); p == nil {
			return unix.EXDEV
		}
	}
	exchange := flags&unix.RENAME_EXCHANGE != 0
	if isDir(ctx, r) && r.lower != nil {
		return unix.EXDEV
	}
	if p != nil && isDir(ctx, p) {
		if exchange && p.lower != nil {
			return unix.EXDEV
		}
		if !exchange {
			if empty, err := mergedEmpty(ctx, p); err != nil {
				return err
			} else if !empty {
				return unix.ENOTEMPTY
			}
		}
	}

	d.ofs.mu.Lock()
	defer d.ofs.mu.Unlock()
	oldHides := d.lowerHas(ctx, oldName)
	newHides := nd.lowerHas(ctx, newName)
	oud, err := d.upperDirLocked(ctx)
	if err != nil {
		return err
	}
	nud, err := nd.upperDirLocked(ctx)
	if err != nil {
		return err
	}
	ru, err := r.copyUpLocked(ctx)
	if err != nil {
		return err
	}
	var rep fs.Node
	switch {
	case p != nil && exchange:
		if rep, err = p.copyUpLocked(ctx); err != nil {
			return err
		}
	case p != nil:
		if rep = p.upperNode(); rep != nil && isDir(ctx, p) {
			if err := clearWhiteouts(ctx, rep); err != nil {
				return err
			}
		}
	default:
		// A whiteout at the new name is replaced.
		if un, err := nud.Lookup(ctx, newName); err == nil && isWhiteout(ctx, un) {
			rep = un
		}
	}
	if err := oud.Rename(ctx, oldName, ru, nud, newName, rep, flags&unix.RENAME_EXCHANGE); err != nil {
		return err
	}
	if exchange {
		// Both names still exist; a directory now over a lower name must
		// hide it.
		if newHides && isDir(ctx, r) {
			setOpaque(ctx, ru)
		}
		if oldHides && isDir(ctx, p) {
			setOpaque(ctx, rep)
		}
		p.mu.Lock()
		p.parent, p.name = d.node, oldName
		p.mu.Unlock()
	} else {
		if oldHides {
			if err := whiteout(ctx, oud)(oldName); err != nil {
				return err
			}
		}
		if newHides && isDir(ctx, r) {
			setOpaque(ctx, ru)
		}
	}
	r.mu.Lock()
	r.parent, r.name = nd.node, newName
	r.mu.Unlock()
	return nil
}

// SetAttr implements fs.SetAttrNode: the node is copied up first.
func (n *node) SetAttr(ctx fs.Context, opts *fs.SetAttrOptions) error {
	u, err := n.copyUp(ctx)
	if err != nil {
		return err
	}
	sa, ok := u.(fs.SetAttrNode)
	if !ok {
		return unix.EPERM
	}
	return sa.SetAttr(ctx, opts)
}

// GetXattr implements fs.XattrNode.
func (n *node) GetXattr(ctx fs.Context, name string) ([]byte, error) {
	if strings.HasPrefix(name, reservedPrefix) {
		return nil, unix.ENODATA
	}
	x, ok := n.current().(fs.XattrNode)
	if !ok {
		return nil, unix.ENODATA
	}
	return x.GetXattr(ctx, name)
}

// ListXattr implements fs.XattrNode, without the overlay's own names.
func (n *node) ListXattr(ctx fs.Context) ([]string, error) {
	x, ok := n.current().(fs.XattrNode)
	if !ok {
		return nil, nil
	}
	names, err := x.ListXattr(ctx)
	if err != nil {
		return nil, err
	}
	out := names[:0:0]
	for _, name := range names {
		if !strings.HasPrefix(name, reservedPrefix) {
			out = append(out, name)
		}
	}
	return out, nil
}

// upperXattr copies n up and returns its upper part's xattrs.
func (n *node) upperXattr(ctx fs.Context, name string) (fs.XattrNode, error) {
	if strings.HasPrefix(name, reservedPrefix) {
		return nil, unix.EPERM
	}
	u, err := n.copyUp(ctx)
	if err != nil {
		return nil, err
	}
	x, ok := u.(fs.XattrNode)
	if !ok {
		return nil, unix.EOPNOTSUPP
	}
	return x, nil
}

// SetXattr implements fs.XattrNode.
func (n *node) SetXattr(ctx fs.Context, name string, value []byte, flags int) error {
	x, err := n.upperXattr(ctx, name)
	if err != nil {
		return err
	}
	return x.SetXattr(ctx, name, value, flags)
}

// RemoveXattr implements fs.XattrNode.
func (n *node) RemoveXattr(ctx fs.Context, name string) error {
	x, err := n.upperXattr(ctx, name)
	if err != nil {
		return err
	}
	return x.RemoveXattr(ctx, name)
}
