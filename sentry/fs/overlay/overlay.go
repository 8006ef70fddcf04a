// Package overlay is the container root's default file system: a
// read-only lower file system (the gofer's view of the host directory)
// under a writable upper one held in the Sentry's memory (tmpfs), merged
// as Linux's overlayfs merges them. Changes land in the upper layer and
// vanish with the sandbox; the lower layer is never written.
//
// Rules, as overlayfs:
//   - A name is looked up in the upper directory first; an upper
//     directory over a lower directory of the same name is merged (its
//     listing is the union) unless the upper one is opaque.
//   - Removing a name that the lower directory has leaves a whiteout in
//     the upper directory: a character device with device number 0/0,
//     which the overlay hides. A directory created where a whiteout was
//     is marked opaque (the upper xattr trusted.overlay.opaque = "y"), so
//     the lower directory's entries stay hidden.
//   - Changing a lower node first copies it up: its parent directories,
//     then the node with its data, mode, owner, times and xattrs. Files
//     opened before a copy-up keep reading the lower file.
//   - Renaming a directory that has a lower part gives EXDEV, as
//     overlayfs without redirect_dir does; mv and friends copy instead.
//
// Inode numbers: a node with a lower part keeps the lower inode number
// across copy-up; a node only in the upper layer shows its upper number
// plus upperInoBase, so the two layers' numbers never collide.
//
// Locks: filesystem.mu serializes copy-ups and every change made through
// the overlay (the VFS already serializes changes per directory; this one
// lock also covers the ancestors a copy-up creates). node.mu guards the
// node's upper part and its place (parent, name); it is taken after
// filesystem.mu and never while another node's is held.
package overlay

import (
	"sync"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
)

// FSType is the type /proc/mounts shows.
const FSType = "overlay"

// upperInoBase is added to the inode numbers of nodes that exist only in
// the upper layer.
const upperInoBase = 1 << 40

// Names the overlay keeps to itself in the upper layer.
const (
	opaqueXattr    = "trusted.overlay.opaque"
	reservedPrefix = "trusted.overlay."
)

type filesystem struct {
	upper *fs.Filesystem
	lower *fs.Filesystem

	mu sync.Mutex
}

// New returns the overlay of upper (writable, normally a tmpfs) over lower
// (read-only).
func New(ctx fs.Context, upper, lower *fs.Filesystem) (*fs.Filesystem, error) {
	ofs := &filesystem{upper: upper, lower: lower}
	up := upper.Root().Node()
	if _, ok := up.(fs.MutableDir); !ok {
		return nil, unix.EINVAL
	}
	root := &node{ofs: ofs, upper: up, lower: lower.Root().Node()}
	st, err := root.lower.Stat(ctx)
	if err != nil {
		return nil, err
	}
	root.ino = st.Ino
	// The root's owner, mode and times come from the lower root, as if
	// the upper root were its copy-up.
	if sa, ok := up.(fs.SetAttrNode); ok {
		sa.SetAttr(ctx, &fs.SetAttrOptions{
			Mask: fs.SetAttrMode | fs.SetAttrUID | fs.SetAttrGID | fs.SetAttrAtime | fs.SetAttrMtime | fs.SetAttrCtime,
			Mode: st.Mode & 07777, UID: st.UID, GID: st.GID,
			Atime: st.Atime, Mtime: st.Mtime, Ctime: st.Ctime,
		})
	}
	return fs.NewFilesystem(FSType, ofs, root.wrap(ctx), false), nil
}

// StatFS implements fs.FilesystemImpl: the upper layer's figures, which are
// what can still be written.
func (ofs *filesystem) StatFS(ctx fs.Context) (fs.StatFS, error) {
	st, err := ofs.upper.Impl().StatFS(ctx)
	if err != nil {
		return st, err
	}
	st.Type = unix.OVERLAYFS_SUPER_MAGIC
	return st, nil
}

// node is one overlay object: its upper part, its lower part, or both.
type node struct {
	ofs *filesystem
	// lower never changes; nil for nodes only in the upper layer.
	lower fs.Node
	// ino is the inode number shown for the node.
	ino uint64

	mu sync.Mutex
	// upper is nil until the node is copied up.
	upper fs.Node
	// parent and name place the node for a copy-up; nil for the root and
	// for nodes born in the upper layer.
	parent *node
	name   string
}

// The kinds of node: the VFS tells directories and symlinks apart by the
// interfaces they implement.
type (
	dirNode     struct{ *node }
	symlinkNode struct{ *node }
	fileNode    struct{ *node }
)

// wrap returns n as the fs.Node of its kind.
func (n *node) wrap(ctx fs.Context) fs.Node {
	st, err := n.current().Stat(ctx)
	if err != nil {
		return fileNode{n}
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return dirNode{n}
	case unix.S_IFLNK:
		return symlinkNode{n}
	}
	return fileNode{n}
}

// unwrap returns the overlay node behind an fs.Node of this file system.
func unwrap(fn fs.Node) *node {
	switch v := fn.(type) {
	case dirNode:
		return v.node
	case symlinkNode:
		return v.node
	case fileNode:
		return v.node
	}
	return nil
}

// upperNode returns n's upper part, or nil.
func (n *node) upperNode() fs.Node {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.upper
}

// current returns the part that speaks for n: upper if it exists.
func (n *node) current() fs.Node {
	if u := n.upperNode(); u != nil {
		return u
	}
	return n.lower
}

// Stat implements fs.Node: the upper part's attributes if there is one,
// except that a merged directory keeps the lower directory's size, blocks
// and link count (the upper one holds only what changed).
func (n *node) Stat(ctx fs.Context) (fs.Stat, error) {
	u := n.upperNode()
	cur := u
	if cur == nil {
		cur = n.lower
	}
	st, err := cur.Stat(ctx)
	if err != nil {
		return st, err
	}
	if u != nil && n.lower != nil && st.IsDir() {
		if lst, err := n.lower.Stat(ctx); err == nil && lst.IsDir() {
			st.Size, st.Blocks, st.Blksize, st.Nlink = lst.Size, lst.Blocks, lst.Blksize, lst.Nlink
		}
	}
	st.Ino = n.ino
	return st, nil
}

// isWhiteout reports whether an upper node is a whiteout.
func isWhiteout(ctx fs.Context, un fs.Node) bool {
	st, err := un.Stat(ctx)
	return err == nil && st.Mode&unix.S_IFMT == unix.S_IFCHR && st.Rdev == 0
}

// isOpaque reports whether an upper directory hides the lower one.
func isOpaque(ctx fs.Context, un fs.Node) bool {
	x, ok := un.(fs.XattrNode)
	if !ok {
		return false
	}
	v, err := x.GetXattr(ctx, opaqueXattr)
	return err == nil && string(v) == "y"
}

// lowerDir returns the lower directory whose entries show through d: nil
// if d has none or its upper part is opaque.
func (d dirNode) lowerDir(ctx fs.Context) fs.DirNode {
	ld, ok := d.lower.(fs.DirNode)
	if !ok {
		return nil
	}
	if u := d.upperNode(); u != nil && isOpaque(ctx, u) {
		return nil
	}
	return ld
}

// lowerHas reports whether name shows through from d's lower directory
// (so removing the upper entry must leave a whiteout).
func (d dirNode) lowerHas(ctx fs.Context, name string) bool {
	ld := d.lowerDir(ctx)
	if ld == nil {
		return false
	}
	_, err := ld.Lookup(ctx, name)
	return err == nil
}

// Lookup implements fs.DirNode.
func (d dirNode) Lookup(ctx fs.Context, name string) (fs.Node, error) {
	return d.lookupWith(ctx, name, func(ld fs.DirNode) (fs.Node, error) { return ld.Lookup(ctx, name) })
}

// lookupWith is Lookup with the lookup of name in the lower directory
// (when d has one showing through) made by lower.
func (d dirNode) lookupWith(ctx fs.Context, name string, lower func(ld fs.DirNode) (fs.Node, error)) (fs.Node, error) {
	var upper fs.Node
	if ud, ok := d.upperNode().(fs.DirNode); ok {
		un, err := ud.Lookup(ctx, name)
		switch {
		case err == nil:
			if isWhiteout(ctx, un) {
				return nil, unix.ENOENT
			}
			upper = un
		case err != unix.ENOENT:
			return nil, err
		}
	}
	var lowerNode fs.Node
	if ld := d.lowerDir(ctx); ld != nil {
		ln, err := lower(ld)
		switch {
		case err == nil:
			lowerNode = ln
		case err != unix.ENOENT:
			return nil, err
		}
	}
	if upper == nil && lowerNode == nil {
		return nil, unix.ENOENT
	}
	n := &node{ofs: d.ofs, upper: upper, parent: d.node, name: name}
	if upper != nil && lowerNode != nil {
		// Only directories merge: an upper non-directory (most likely
		// a copy-up of the lower one) or an opaque upper directory hides
		// the lower node. When the types agree, the node keeps the lower
		// inode number, as a copy-up does.
		ust, err1 := upper.Stat(ctx)
		lst, err2 := lowerNode.Stat(ctx)
		if err1 == nil && err2 == nil && ust.Mode&unix.S_IFMT == lst.Mode&unix.S_IFMT {
			n.ino = lst.Ino
			if ust.IsDir() && !isOpaque(ctx, upper) {
				n.lower = lowerNode
			}
		} else {
			n.ino = ust.Ino + upperInoBase
		}
	} else if lowerNode != nil {
		n.lower = lowerNode
		st, err := lowerNode.Stat(ctx)
		if err != nil {
			return nil, err
		}
		n.ino = st.Ino
	} else {
		st, err := upper.Stat(ctx)
		if err != nil {
			return nil, err
		}
		n.ino = st.Ino + upperInoBase
	}
	return n.wrap(ctx), nil
}

// LookupPath implements fs.PathLookupDir: when the lower directory can
// look up a run of names at once (the gofer's, in one round trip), the
// lower run is fetched once and each component is merged with the upper
// layer as Lookup merges it. The walk stops where the lower run no longer
// shows through (a component that is upper-only, opaque or not a
// directory), leaving the rest to single lookups.
//
// openLast is passed on to the lower layer: the last name's file, if it
// comes from there, is what an open would open.
func (d dirNode) LookupPath(ctx fs.Context, names []string, openLast bool) ([]fs.Node, error) {
	ld := d.lowerDir(ctx)
	lpd, ok := ld.(fs.PathLookupDir)
	if !ok {
		n, err := d.Lookup(ctx, names[0])
		if err != nil {
			return nil, err
		}
		return []fs.Node{n}, nil
	}
	var (
		lowers  []fs.Node
		lerr    error
		fetched bool
	)
	out := make([]fs.Node, 0, len(names))
	cur := d
	for i, name := range names {
		n, err := cur.lookupWith(ctx, name, func(cld fs.DirNode) (fs.Node, error) {
			if i == 0 && !fetched {
				// Only now: an upper whiteout needs no lower lookup.
				fetched = true
				lowers, lerr = lpd.LookupPath(ctx, names, openLast)
			}
			if fetched && (i == 0 && cld == ld || i > 0 && i-1 < len(lowers) && fs.Node(cld) == lowers[i-1]) {
				if i < len(lowers) {
					return lowers[i], nil
				}
				if lerr != nil {
					return nil, lerr
				}
			}
			return cld.Lookup(ctx, name)
		})
		if err != nil {
			if i == 0 {
				return nil, err
			}
			return out, err
		}
		out = append(out, n)
		next, ok := n.(dirNode)
		// Go on only while the lower run says what the next name is.
		if !ok || !fetched || i+1 > len(lowers) || i+1 == len(lowers) && lerr == nil {
			break
		}
		if nld := next.lowerDir(ctx); nld == nil || fs.Node(nld) != lowers[i] {
			break
		}
		cur = next
	}
	return out, nil
}

// Readdir implements fs.DirNode: the upper entries without whiteouts, then
// the lower entries not hidden by them.
func (d dirNode) Readdir(ctx fs.Context) ([]fs.Dirent, error) {
	var out []fs.Dirent
	seen := make(map[string]bool)
	ud, _ := d.upperNode().(fs.DirNode)
	if ud != nil {
		ents, err := ud.Readdir(ctx)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			seen[e.Name] = true
			if e.Type == unix.DT_CHR {
				if un, err := ud.Lookup(ctx, e.Name); err == nil && isWhiteout(ctx, un) {
					continue
				}
			}
			e.Ino += upperInoBase
			out = append(out, e)
		}
	}
	if ld := d.lowerDir(ctx); ld != nil {
		ents, err := ld.Readdir(ctx)
		if err != nil {
			return nil, err
		}
		lowerIno := make(map[string]uint64, len(ents))
		for _, e := range ents {
			lowerIno[e.Name] = e.Ino
			if !seen[e.Name] {
				out = append(out, e)
			}
		}
		// Entries present in both layers show the lower number, as stat
		// does.
		for i := range out {
			if ino, ok := lowerIno[out[i].Name]; ok && out[i].Ino >= upperInoBase {
				out[i].Ino = ino
			}
		}
	}
	return out, nil
}

// Readlink implements fs.SymlinkNode.
func (l symlinkNode) Readlink(ctx fs.Context) (string, error) {
	sl, ok := l.current().(fs.SymlinkNode)
	if !ok {
		return "", unix.EINVAL
	}
	return sl.Readlink(ctx)
}

// Open implements fs.OpenNode for directories: the overlay lists them.
func (d dirNode) Open(ctx fs.Context, vd fs.VirtualDentry, flags uint32) (*fs.FileDescription, error) {
	return fs.NewDirFile(vd, flags), nil
}

// Open implements fs.OpenNode: the upper file if there is one; a lower
// file opened for writing (or truncation) is copied up first.
func (f fileNode) Open(ctx fs.Context, vd fs.VirtualDentry, flags uint32) (*fs.FileDescription, error) {
	target := f.current()
	if f.upperNode() == nil && (flags&unix.O_ACCMODE != unix.O_RDONLY || flags&unix.O_TRUNC != 0) {
		u, err := f.copyUp(ctx)
		if err != nil {
			return nil, err
		}
		target = u
	}
	on, ok := target.(fs.OpenNode)
	if !ok {
		return nil, unix.ENXIO
	}
	return on.Open(ctx, vd, flags)
}
