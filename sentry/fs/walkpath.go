package fs

import "golang.org/x/sys/unix"

// PathLookupDir is implemented by directories that can look up several
// components in a row for the cost of one (the gofer's, in one round
// trip). The path walk uses it for a run of components it has not
// cached, and caches what it returns.
type PathLookupDir interface {
	DirNode
	// LookupPath looks up names[0] in the directory, names[1] in the
	// node that was, and so on, never following a symlink (each name is
	// an ordinary component). It returns the nodes found, in order:
	// none, and err is names[0]'s error; or some, and err is nil when it
	// stopped after a non-directory, walked every name, or stopped early
	// for its own reasons, and is names[len(nodes)]'s error otherwise.
	// With openLast, the caller means to open the last name's file for
	// reading: the file system may open it along with the lookup, so
	// that the node's next open is cheaper.
	LookupPath(ctx Context, names []string, openLast bool) ([]Node, error)
}

// maxPathRun bounds the components looked up in one LookupPath.
const maxPathRun = 32

// pathMiss is a name a LookupPath found missing, remembered for the rest
// of one resolution so that the walk does not ask again.
type pathMiss struct {
	dir  *Dentry
	name string
}

// pathRun returns name followed by the ordinary components at the start
// of rest (up to the first ".", "..", over-long name or the end), and
// without the path's last component when withLast is false. toEnd says
// the run ends with the path's last component (not followed by a
// slash).
func pathRun(name, rest string, withLast bool) (names []string, toEnd bool) {
	names = []string{name}
	if withLast && rest == "" {
		return names, true
	}
	for len(names) < maxPathRun {
		n, after, isLast, trailing := next(rest)
		if n == "" || n == "." || n == ".." || len(n) > NameMax || (isLast && !withLast) {
			break
		}
		names = append(names, n)
		rest = after
		if isLast {
			return names, !trailing
		}
	}
	return names, false
}

// lookup returns the child name of r.cur. When the child is not cached
// and r.cur's directory can look up several components at once, it
// looks up name and the run of components after it in rest together and
// caches them all, so that the steps that follow find them; for an
// OpenHint lookup whose run ends the path, even a single name goes that
// way, so that the file system may open the file with the lookup.
func (r *resolver) lookup(name, rest string) (*Dentry, error) {
	d := r.cur.Dentry
	if r.miss.dir == d && r.miss.name == name {
		return nil, unix.ENOENT
	}
	pd, ok := d.node.(PathLookupDir)
	if !ok {
		return d.Lookup(r.ctx, name)
	}
	if _, uncached := d.node.(UncachedDir); uncached || d.cachedChild(name) != nil {
		return d.Lookup(r.ctx, name)
	}
	names, toEnd := pathRun(name, rest, !r.parentOnly)
	open := r.openHint && toEnd
	if len(names) < 2 && !open {
		return d.Lookup(r.ctx, name)
	}
	return d.lookupPath(r.ctx, pd, names, open, &r.miss)
}

// lookupPath looks up the run names from d with pd.LookupPath and caches
// every dentry found, as a chain of new children under d. It returns the
// dentry of names[0]. A name found missing after the first is recorded
// in miss.
func (d *Dentry) lookupPath(ctx Context, pd PathLookupDir, names []string, openLast bool, miss *pathMiss) (*Dentry, error) {
	d.mu.Lock()
	gen := d.gen
	d.mu.Unlock()
	nodes, err := pd.LookupPath(ctx, names, openLast)
	if len(nodes) == 0 {
		if err == nil {
			err = unix.EIO
		}
		return nil, err
	}
	first := &Dentry{fs: d.fs, parent: d, name: names[0], node: nodes[0]}
	last, built := first, 1
	for ; built < len(nodes); built++ {
		if _, ok := last.node.(DirNode); !ok {
			break
		}
		c := &Dentry{fs: d.fs, parent: last, name: names[built], node: nodes[built]}
		last.children = map[string]*Dentry{names[built]: c}
		last = c
	}
	// Only ENOENT is remembered: another error is looked up again, so
	// that the walk reports what a single lookup says.
	if built == len(nodes) && built < len(names) && err == unix.ENOENT {
		*miss = pathMiss{dir: last, name: names[built]}
	}
	d.mu.Lock()
	if d.gen != gen {
		// A change of d raced with the lookup: forget the run.
		d.mu.Unlock()
		*miss = pathMiss{}
		return d.Lookup(ctx, names[0])
	}
	if c, ok := d.children[names[0]]; ok {
		d.mu.Unlock()
		*miss = pathMiss{}
		return c, nil
	}
	if d.children == nil {
		d.children = make(map[string]*Dentry)
	}
	d.children[names[0]] = first
	d.mu.Unlock()
	return first, nil
}
