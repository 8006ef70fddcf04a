package fs

import (
	"reflect"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// File change notification (inotify's source of events). Watches are
// kept per node, in a table of the node's Filesystem, so every name and
// mount of a node (hard links, bind mounts) sees the same events, as
// Linux's inode marks do. The VFS reports events where the operations
// happen: namespace changes in mutate.go and open.go, attribute changes
// in attr.go and xattr.go, opens, reads, writes and closes in open.go and
// file.go. With no watch on a file system the cost is one atomic load.
//
// Events follow Linux's fsnotify: an event on a node goes to the node's
// watches and, with the node's name, to its parent directory's watches
// (the parent's first); IN_ISDIR marks events whose subject is a
// directory; the link count changes of link, unlink and rename give
// IN_ATTRIB on the node; a node whose last name went gives
// IN_DELETE_SELF (at once, where Linux waits for the last open file to
// close).

// Watch is one watch on a node (an inotify watch). Notify must not call
// back into the VFS other than RemoveWatch.
type Watch interface {
	// Notify reports an event: mask holds the IN_* event bits, with
	// IN_ISDIR when the subject is a directory; name is the child's
	// name for events a directory sees about an entry, "" for events on
	// the watched node; cookie ties IN_MOVED_FROM to IN_MOVED_TO;
	// unlinked says the child's name was removed (IN_EXCL_UNLINK).
	Notify(mask uint32, name string, cookie uint32, unlinked bool)
}

// watchTable holds the watches of a file system's nodes.
type watchTable struct {
	mu sync.Mutex
	m  map[Node][]Watch
}

var moveCookie atomic.Uint32

// watchable reports whether n can key the watch table (its dynamic type
// is comparable, as the pointer types of nodes are).
func watchable(n Node) bool {
	return n != nil && reflect.TypeOf(n).Comparable()
}

// AddWatch adds w to the watches of n, a node of f. EINVAL if n cannot
// be watched.
func (f *Filesystem) AddWatch(n Node, w Watch) error {
	if !watchable(n) {
		return unix.EINVAL
	}
	f.watchMu.Lock()
	defer f.watchMu.Unlock()
	t := f.watches.Load()
	if t == nil {
		t = &watchTable{m: make(map[Node][]Watch)}
		f.watches.Store(t)
	}
	t.mu.Lock()
	t.m[n] = append(t.m[n], w)
	t.mu.Unlock()
	f.watchCount.Add(1)
	return nil
}

// RemoveWatch removes w from the watches of n; it reports whether w was
// there.
func (f *Filesystem) RemoveWatch(n Node, w Watch) bool {
	t := f.watches.Load()
	if t == nil || !watchable(n) {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	ws := t.m[n]
	for i, x := range ws {
		if x == w {
			ws = append(ws[:i:i], ws[i+1:]...)
			if len(ws) == 0 {
				delete(t.m, n)
			} else {
				t.m[n] = ws
			}
			f.watchCount.Add(-1)
			return true
		}
	}
	return false
}

// watchesOf returns a copy of the watches of n.
func (f *Filesystem) watchesOf(n Node) []Watch {
	if f == nil || f.watchCount.Load() == 0 || !watchable(n) {
		return nil
	}
	t := f.watches.Load()
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	ws := t.m[n]
	if len(ws) == 0 {
		return nil
	}
	return append([]Watch(nil), ws...)
}

// watched reports whether any node of d's file system has a watch.
func watched(d *Dentry) bool {
	return d != nil && d.fs != nil && d.fs.watchCount.Load() != 0
}

// isDirNode reports whether n is a directory.
func isDirNode(ctx Context, n Node) bool {
	st, err := n.Stat(ctx)
	return err == nil && st.IsDir()
}

// notifyEvent reports an event on d's node to its parent's watches (with
// d's name) and to its own, as Linux's fsnotify_dentry. isDir adds
// IN_ISDIR.
func notifyEvent(d *Dentry, mask uint32, isDir bool) {
	if !watched(d) {
		return
	}
	parent, name := d.Parent(), d.Name()
	var pws []Watch
	if parent != nil {
		pws = d.fs.watchesOf(parent.node)
	}
	ws := d.fs.watchesOf(d.node)
	if pws == nil && ws == nil {
		return
	}
	if isDir {
		mask |= unix.IN_ISDIR
	}
	dead := d.IsDead()
	for _, w := range pws {
		w.Notify(mask, name, 0, dead)
	}
	for _, w := range ws {
		w.Notify(mask, "", 0, false)
	}
}

// notifyDentry is notifyEvent finding out whether d is a directory.
func notifyDentry(ctx Context, d *Dentry, mask uint32) {
	if !watched(d) {
		return
	}
	notifyEvent(d, mask, isDirNode(ctx, d.node))
}

// notifyChild reports an event about the entry name of the directory d
// (creation, removal, moves) to d's watches.
func notifyChild(d *Dentry, mask uint32, name string, cookie uint32) {
	if !watched(d) {
		return
	}
	for _, w := range d.fs.watchesOf(d.node) {
		w.Notify(mask, name, cookie, false)
	}
}

// notifyNode reports an event on the node n of f to n's own watches
// (IN_ATTRIB of a link count change, IN_DELETE_SELF, IN_MOVE_SELF).
func notifyNode(f *Filesystem, n Node, mask uint32) {
	if f == nil || f.watchCount.Load() == 0 {
		return
	}
	for _, w := range f.watchesOf(n) {
		w.Notify(mask, "", 0, false)
	}
}

// notifyGone reports IN_DELETE_SELF on the node of the removed dentry d
// if its last link went.
func notifyGone(ctx Context, d *Dentry) {
	if !watched(d) {
		return
	}
	if st, err := d.node.Stat(ctx); err == nil && st.Nlink == 0 {
		deleteSelf(d)
	}
}

// deleteSelf reports IN_DELETE_SELF on the node of the removed dentry d
// now, or, while files opened through d are open, when the last one
// closes (Linux reports it when the inode goes).
func deleteSelf(d *Dentry) {
	if !watched(d) {
		return
	}
	d.deletePending.Store(true)
	if d.opens.Load() == 0 && d.deletePending.Swap(false) {
		notifyNode(d.fs, d.node, unix.IN_DELETE_SELF)
	}
}

// closed is the VFS's part of the last close of a file it opened.
func closed(d *Dentry) {
	if d.opens.Add(-1) == 0 && d.deletePending.Load() && d.deletePending.Swap(false) {
		notifyNode(d.fs, d.node, unix.IN_DELETE_SELF)
	}
}

// notifyUnmount reports IN_UNMOUNT to every watch on f's nodes (which
// then go, with IN_IGNORED).
func (f *Filesystem) notifyUnmount() {
	if f.watchCount.Load() == 0 {
		return
	}
	t := f.watches.Load()
	if t == nil {
		return
	}
	t.mu.Lock()
	var all []Watch
	for _, ws := range t.m {
		all = append(all, ws...)
	}
	t.mu.Unlock()
	for _, w := range all {
		w.Notify(unix.IN_UNMOUNT, "", 0, false)
	}
}

// dirBit is IN_ISDIR if isDir.
func dirBit(isDir bool) uint32 {
	if isDir {
		return unix.IN_ISDIR
	}
	return 0
}

// attrEvents returns the events an attribute change of opts.Mask makes,
// as Linux's fsnotify_change.
func attrEvents(mask uint32) uint32 {
	var ev uint32
	if mask&(SetAttrUID|SetAttrGID|SetAttrMode) != 0 {
		ev |= unix.IN_ATTRIB
	}
	if mask&SetAttrSize != 0 {
		ev |= unix.IN_MODIFY
	}
	switch {
	case mask&(SetAttrAtime|SetAttrMtime) == SetAttrAtime|SetAttrMtime:
		ev |= unix.IN_ATTRIB
	case mask&SetAttrAtime != 0:
		ev |= unix.IN_ACCESS
	case mask&SetAttrMtime != 0:
		ev |= unix.IN_MODIFY
	}
	return ev
}

// NotifyAccess reports IN_ACCESS on fd's file for reads outside
// FileDescription.Read (getdents).
func NotifyAccess(fd *FileDescription) {
	if fd.vd.Mount != nil && watched(fd.vd.Dentry) {
		notifyEvent(fd.vd.Dentry, unix.IN_ACCESS, fd.isDir)
	}
}
