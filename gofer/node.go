package gofer

import (
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// node is one host file the gofer holds: an O_PATH fd opened without
// following symlinks, plus what it takes to reopen it.
//
// A node is reference counted: one reference per handle naming it, one per
// request using it, one per child non-directory (which reopens itself
// through its parent). The fds are closed when the last reference goes, so
// an fd is never closed while a request uses it and its number is never
// reused under a request's feet.
type node struct {
	refs atomic.Int64

	fd   int    // O_PATH|O_NOFOLLOW, owned
	mode uint32 // file type bits (S_IFMT) at walk time
	dev  uint64
	ino  uint64
	// ro marks a node of a read-only attach point (a read-only bind
	// mount): like a read-only server, it refuses every change.
	ro bool
	// mount is the attach point the node was reached from.
	mount uint32

	// idx holds the node's location; nil for the root.
	idx *nameIndex

	// parent and name locate a non-directory for reopening (a directory
	// reopens itself as "."); parent holds a reference. idx.mu guards
	// them: a rename through the gofer moves them, an unlink clears them.
	parent *node
	name   string

	// dirMu guards dirFD, a lazily opened O_RDONLY fd of a directory used
	// for paging through its entries.
	dirMu sync.Mutex
	dirFD int
}

// newNode makes a node of fd, found as name in parent, holding one
// reference. A non-directory remembers its location in idx. The node
// belongs to its parent's attach point, read-only if that is.
func newNode(fd int, st *unix.Stat_t, idx *nameIndex, parent *node, name string) *node {
	n := &node{
		fd:    fd,
		mode:  st.Mode & unix.S_IFMT,
		dev:   st.Dev,
		ino:   st.Ino,
		idx:   idx,
		dirFD: -1,
	}
	n.refs.Store(1)
	if parent != nil {
		n.ro, n.mount = parent.ro, parent.mount
	}
	if parent != nil && n.mode != unix.S_IFDIR {
		idx.add(n, parent, name)
	}
	return n
}

func (n *node) incRef() { n.refs.Add(1) }

func (n *node) decRef() {
	for n != nil {
		r := n.refs.Add(-1)
		if r > 0 {
			return
		}
		if r < 0 {
			panic("gofer: node reference count below zero")
		}
		unix.Close(n.fd)
		if n.dirFD >= 0 {
			unix.Close(n.dirFD)
		}
		var parent *node
		if n.idx != nil {
			parent = n.idx.remove(n)
		}
		n = parent // drop the reference a child held on its parent
	}
}

// same reports whether st describes n's file.
func (n *node) same(st *unix.Stat_t) bool {
	return st.Mode&unix.S_IFMT == n.mode && st.Dev == n.dev && st.Ino == n.ino
}

// nameKey is a directory entry: the directory's identity and a name.
type nameKey struct {
	dev, ino uint64
	name     string
}

// nameIndex knows where each non-directory node was found, so that a
// rename or unlink made through the gofer moves or forgets the locations
// of every node reached through that name, whichever handle found it.
//
// moveMu is held for writing across a rename or unlink and the index
// update that follows it, and for reading across a location lookup and
// the open by name that uses it, so an open never sees the host's new
// names with the index's old ones. mu guards the map and every node's
// parent and name; it is a leaf.
type nameIndex struct {
	moveMu sync.RWMutex

	mu    sync.Mutex
	nodes map[nameKey]map[*node]struct{}
}

func keyOf(dir *node, name string) nameKey { return nameKey{dir.dev, dir.ino, name} }

// add records that n is name in parent, taking a reference on parent.
func (x *nameIndex) add(n, parent *node, name string) {
	parent.incRef()
	x.mu.Lock()
	defer x.mu.Unlock()
	n.parent, n.name = parent, name
	x.insert(n)
}

// insert files n under its location.
//
// Preconditions: x.mu is held; n.parent is set.
func (x *nameIndex) insert(n *node) {
	if x.nodes == nil {
		x.nodes = make(map[nameKey]map[*node]struct{})
	}
	k := keyOf(n.parent, n.name)
	set := x.nodes[k]
	if set == nil {
		set = make(map[*node]struct{})
		x.nodes[k] = set
	}
	set[n] = struct{}{}
}

// take removes and returns every node located at k.
//
// Preconditions: x.mu is held.
func (x *nameIndex) take(k nameKey) map[*node]struct{} {
	set := x.nodes[k]
	delete(x.nodes, k)
	return set
}

// remove forgets n (whose last reference is gone) and returns its parent,
// whose reference the caller drops.
func (x *nameIndex) remove(n *node) *node {
	x.mu.Lock()
	defer x.mu.Unlock()
	p := n.parent
	if p == nil {
		return nil
	}
	k := keyOf(p, n.name)
	if set := x.nodes[k]; set != nil {
		delete(set, n)
		if len(set) == 0 {
			delete(x.nodes, k)
		}
	}
	n.parent, n.name = nil, ""
	return p
}

// location returns n's parent, with a reference the caller drops, and
// its name in it; nil if n is unknown (the root, a directory, or a file
// whose name was removed).
func (x *nameIndex) location(n *node) (*node, string) {
	if x == nil {
		return nil, ""
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if n.parent == nil {
		return nil, ""
	}
	n.parent.incRef()
	return n.parent, n.name
}

// unlinked forgets the locations of the nodes reached as name in dir, whose
// name is gone.
func (x *nameIndex) unlinked(dir *node, name string) {
	x.mu.Lock()
	var parents []*node
	for n := range x.take(keyOf(dir, name)) {
		parents = append(parents, n.parent)
		n.parent, n.name = nil, ""
	}
	x.mu.Unlock()
	for _, p := range parents {
		p.decRef()
	}
}

// renamed moves the nodes located at oldName in oldDir to newName in
// newDir. Those at the new name are swapped to the old one if exchange,
// and forgotten otherwise (the rename replaced them).
func (x *nameIndex) renamed(oldDir *node, oldName string, newDir *node, newName string, exchange bool) {
	x.mu.Lock()
	var drop []*node
	moving := x.take(keyOf(oldDir, oldName))
	replaced := x.take(keyOf(newDir, newName))
	for n := range moving {
		drop = append(drop, n.parent)
		newDir.incRef()
		n.parent, n.name = newDir, newName
		x.insert(n)
	}
	for n := range replaced {
		drop = append(drop, n.parent)
		n.parent, n.name = nil, ""
		if exchange {
			oldDir.incRef()
			n.parent, n.name = oldDir, oldName
			x.insert(n)
		}
	}
	x.mu.Unlock()
	for _, p := range drop {
		p.decRef()
	}
}

// nodeTable maps a connection's handles to nodes.
type nodeTable struct {
	mu    sync.Mutex
	next  uint64
	nodes map[uint64]*node
}

// add names n with a fresh handle, taking over the caller's reference.
func (t *nodeTable) add(n *node) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.nodes == nil {
		t.nodes = make(map[uint64]*node)
	}
	t.next++
	t.nodes[t.next] = n
	return t.next
}

// get returns the node h names with a reference the caller must drop.
func (t *nodeTable) get(h uint64) (*node, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n, ok := t.nodes[h]
	if ok {
		n.incRef()
	}
	return n, ok
}

// remove forgets h and drops its reference.
func (t *nodeTable) remove(h uint64) bool {
	t.mu.Lock()
	n, ok := t.nodes[h]
	delete(t.nodes, h)
	t.mu.Unlock()
	if ok {
		n.decRef()
	}
	return ok
}

// clear drops every handle.
func (t *nodeTable) clear() {
	t.mu.Lock()
	nodes := t.nodes
	t.nodes = nil
	t.mu.Unlock()
	for _, n := range nodes {
		n.decRef()
	}
}
