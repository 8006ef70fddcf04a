package gofer

import (
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// node is one host file the gofer holds: an O_PATH fd opened without
// following symlinks, plus what it takes to reopen it for reading.
//
// A node is reference counted: one reference per handle naming it, one per
// request using it, one per child regular file (which reopens itself
// through its parent). The fds are closed when the last reference goes, so
// an fd is never closed while a request uses it and its number is never
// reused under a request's feet.
type node struct {
	refs atomic.Int64

	fd   int    // O_PATH|O_NOFOLLOW, owned
	mode uint32 // file type bits (S_IFMT) at walk time
	dev  uint64
	ino  uint64

	// parent and name locate a regular file for reopening; parent holds a
	// reference. Both are unset for the root and for non-regular files.
	parent *node
	name   string

	// dirMu guards dirFD, a lazily opened O_RDONLY fd of a directory used
	// for paging through its entries.
	dirMu sync.Mutex
	dirFD int
}

func newNode(fd int, st *unix.Stat_t, parent *node, name string) *node {
	n := &node{
		fd:    fd,
		mode:  st.Mode & unix.S_IFMT,
		dev:   st.Dev,
		ino:   st.Ino,
		dirFD: -1,
	}
	if parent != nil && n.mode == unix.S_IFREG {
		parent.incRef()
		n.parent = parent
		n.name = name
	}
	n.refs.Store(1)
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
		n = n.parent // drop the reference a regular file held on its parent
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
