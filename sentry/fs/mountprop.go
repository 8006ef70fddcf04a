package fs

import (
	"slices"

	"golang.org/x/sys/unix"
)

// Mount propagation (man 7 mount_namespaces): a shared mount belongs to a
// peer group whose members receive each other's mount and unmount events
// below them; a slave mount receives the events of one peer group (its
// master) without sending its own back; a private mount neither sends nor
// receives; an unbindable one is private and cannot be bind-mounted.
//
// Each peerGroup lists its members (peers) and the mounts that are its
// slaves. A slave may be shared too (a member of another group): events
// then flow on to that group's members and slaves. Copies of a namespace
// (CLONE_NEWNS) join the groups and masters of the mounts they copy, as a
// bind mount does; a mount made (or moved, with its submounts) below a
// shared mount becomes shared (a new group) and is copied to every
// receiver of its parent's group where the mountpoint is visible, under
// any mount already there. A copy for a new user namespace makes slaves
// of shared mounts instead (mountns.go). An unmount below a shared mount takes away
// the matching copies that have no mounts of their own below them.
//
// Everything here is guarded by treeMu.

// peerGroup is a set of shared mounts and the slaves they send to.
type peerGroup struct {
	id     int
	ids    *mountIDs
	peers  map[*Mount]struct{}
	slaves map[*Mount]struct{}
}

// newGroup returns an empty peer group with the smallest free id.
//
// Preconditions: treeMu is held.
func (ids *mountIDs) newGroup() *peerGroup {
	if ids.groups == nil {
		ids.groups = make(map[int]bool)
	}
	id := 1
	for ids.groups[id] {
		id++
	}
	ids.groups[id] = true
	return &peerGroup{id: id, ids: ids, peers: make(map[*Mount]struct{}), slaves: make(map[*Mount]struct{})}
}

// free gives g's id back.
func (g *peerGroup) free() { delete(g.ids.groups, g.id) }

// sorted returns the mounts of set by id, so propagation is
// deterministic.
func sorted(set map[*Mount]struct{}) []*Mount {
	out := make([]*Mount, 0, len(set))
	for m := range set {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b *Mount) int { return a.id - b.id })
	return out
}

// Propagation is what /proc/[pid]/mountinfo's optional fields show of a
// mount: the id of its peer group (shared:N, 0 if not shared), of its
// master's (master:N, 0 if not a slave), and whether it is unbindable.
type Propagation struct {
	Shared, Master int
	Unbindable     bool
}

// Propagation returns m's propagation state.
func (m *Mount) Propagation() Propagation {
	treeMu.Lock()
	defer treeMu.Unlock()
	var p Propagation
	if m.group != nil {
		p.Shared = m.group.id
	}
	if m.master != nil {
		p.Master = m.master.id
	}
	p.Unbindable = m.unbindable
	return p
}

// joinGroup makes m a member of g (nil: none).
func (m *Mount) joinGroup(g *peerGroup) {
	m.group = g
	if g != nil {
		g.peers[m] = struct{}{}
	}
}

// joinMaster makes m a slave of g (nil: none).
func (m *Mount) joinMaster(g *peerGroup) {
	m.master = g
	if g != nil {
		g.slaves[m] = struct{}{}
	}
}

// leaveGroup takes m out of its peer group. The last member's leaving
// hands the group's slaves to m's master (or frees them, if m has none),
// as Linux's do_make_slave.
func (m *Mount) leaveGroup() {
	g := m.group
	if g == nil {
		return
	}
	delete(g.peers, m)
	m.group = nil
	if len(g.peers) > 0 {
		return
	}
	for s := range g.slaves {
		delete(g.slaves, s)
		s.master = nil
		if s != m {
			s.joinMaster(m.master)
		}
	}
	g.free()
}

// leaveMaster stops m being a slave.
func (m *Mount) leaveMaster() {
	if m.master != nil {
		delete(m.master.slaves, m)
		m.master = nil
	}
}

// makePrivate stops all propagation to and from m (an unmounted mount
// is private).
func (m *Mount) makePrivate() {
	m.leaveGroup()
	m.leaveMaster()
	m.unbindable = false
}

// copyPropagation makes m, a bind mount or a namespace copy of src, a
// peer of src if src is shared and a slave of src's master if src is a
// slave (Linux's clone_mnt).
func (m *Mount) copyPropagation(src *Mount) {
	m.joinGroup(src.group)
	m.joinMaster(src.master)
}

// setPropagation applies one propagation type to m, as mount(2)'s
// MS_SHARED, MS_SLAVE, MS_PRIVATE and MS_UNBINDABLE.
func (m *Mount) setPropagation(typ uint64) {
	switch typ {
	case unix.MS_SHARED:
		if m.group == nil {
			m.joinGroup(m.ns.ids.newGroup())
		}
		m.unbindable = false
	case unix.MS_SLAVE:
		if g := m.group; g != nil && len(g.peers) > 1 {
			// A slave of the group it leaves.
			delete(g.peers, m)
			m.group = nil
			m.leaveMaster()
			m.joinMaster(g)
		} else {
			// Alone in its group: the group's slaves go to m's
			// master; m stays a slave of that master, if any.
			m.leaveGroup()
		}
	case unix.MS_PRIVATE:
		m.makePrivate()
	case unix.MS_UNBINDABLE:
		m.makePrivate()
		m.unbindable = true
	}
}

// SetPropagation changes the propagation type of m (one of MS_SHARED,
// MS_SLAVE, MS_PRIVATE, MS_UNBINDABLE) and, with rec (MS_REC), of every
// mount below it in its namespace.
func (ns *MountNamespace) SetPropagation(m *Mount, typ uint64, rec bool) error {
	treeMu.Lock()
	defer treeMu.Unlock()
	if m.ns != ns {
		return unix.EINVAL
	}
	targets := []*Mount{m}
	if rec {
		ns.mu.RLock()
		sub := ns.subtreeLocked(m)
		targets = targets[:0]
		for _, c := range ns.all {
			if sub[c] {
				targets = append(targets, c)
			}
		}
		ns.mu.RUnlock()
	}
	for _, c := range targets {
		c.setPropagation(typ)
	}
	return nil
}

// copyAt makes a copy of m (its file system, root and flags) at point in
// r, below the mounts there, joining group into and master master, unless
// point is not visible in r. It returns the copy, nil if none was made.
//
// Preconditions: treeMu is held; no MountNamespace.mu is.
func (m *Mount) copyAt(r *Mount, point *Dentry, into, master *peerGroup) *Mount {
	if !isUnder(point, r.root) {
		return nil
	}
	ns := r.ns
	c := &Mount{ns: ns, fs: m.fs, root: m.root, id: ns.ids.mountID(), fsOwner: m.fsOwner}
	c.flags.Store(m.flags.Load())
	ns.mu.Lock()
	if ns.dead {
		ns.mu.Unlock()
		return nil
	}
	// A mount already there goes on top of the copy (Linux tucks the
	// copy under it).
	key := mountKey{r, point}
	if x, ok := ns.mounts[key]; ok {
		x.parent, x.mountpoint = c, c.root
		ns.mounts[mountKey{c, c.root}] = x
		c.root.mounts.Add(1)
		point.mounts.Add(-1)
	}
	c.parent, c.mountpoint = r, point
	ns.mounts[key] = c
	point.mounts.Add(1)
	ns.all = append(ns.all, c)
	ns.mu.Unlock()
	fsMountsAdd(m.fs, 1)
	c.joinGroup(into)
	c.joinMaster(master)
	return c
}

// propagateMount copies m, just mounted, to the receivers of its
// parent's peer group: the parent's peers get peers of m, the group's
// slaves get slaves of m (shared among themselves where the slaves are
// shared), and so on down the slaves of slaves. A mount made below a
// shared mount is shared.
//
// Preconditions: treeMu is held; no MountNamespace.mu is.
func (m *Mount) propagateMount() {
	p, point := m.parent, m.mountpoint
	if p == nil || p.group == nil {
		return
	}
	if m.group == nil {
		m.joinGroup(m.ns.ids.newGroup())
		m.unbindable = false
	}
	visited := map[*peerGroup]bool{}
	made := map[*Mount]bool{m: true}
	// walk copies m to the members of g (joining into, slaves of
	// master) and then to g's slaves (slaves of into, or of master if
	// into got no member).
	var walk func(g, into, master *peerGroup)
	walk = func(g, into, master *peerGroup) {
		visited[g] = true
		for _, r := range sorted(g.peers) {
			if r == p || made[r] {
				continue
			}
			if c := m.copyAt(r, point, into, master); c != nil {
				made[c] = true
			}
		}
		to := into
		if to == nil || len(to.peers) == 0 {
			to = master
		}
		for _, s := range sorted(g.slaves) {
			if made[s] {
				continue
			}
			if s.group == nil {
				if c := m.copyAt(s, point, nil, to); c != nil {
					made[c] = true
				}
				continue
			}
			if visited[s.group] {
				continue
			}
			ng := m.ns.ids.newGroup()
			walk(s.group, ng, to)
			if len(ng.peers) == 0 {
				ng.free()
			}
		}
	}
	walk(p.group, m.group, m.master)
}

// receivers returns the mounts that receive the events of p's peer
// group, p excepted: its peers, the group's slaves, and on through the
// groups of slaves that are shared.
//
// Preconditions: treeMu is held.
func (p *Mount) receivers() []*Mount {
	if p.group == nil {
		return nil
	}
	var out []*Mount
	visited := map[*peerGroup]bool{}
	var walk func(g *peerGroup)
	walk = func(g *peerGroup) {
		visited[g] = true
		for _, r := range sorted(g.peers) {
			if r != p {
				out = append(out, r)
			}
		}
		for _, s := range sorted(g.slaves) {
			if s.group == nil {
				out = append(out, s)
			} else if !visited[s.group] {
				walk(s.group)
			}
		}
	}
	walk(p.group)
	return out
}

// propagateUmount takes away, from the receivers of parent's group, the
// copies of m (same file system and root) mounted directly at point,
// unless mounts sit on or below them (with detach, those go too). It
// returns the file systems left without a mount.
//
// Preconditions: treeMu is held; no MountNamespace.mu is.
func (m *Mount) propagateUmount(parent *Mount, point *Dentry, detach bool) []*Filesystem {
	var unused []*Filesystem
	for _, r := range parent.receivers() {
		ns := r.ns
		ns.mu.Lock()
		c, ok := ns.mounts[mountKey{r, point}]
		if !ok || c.fs != m.fs || c.root != m.root {
			ns.mu.Unlock()
			continue
		}
		gone, err := ns.umountLocked(c, detach)
		ns.mu.Unlock()
		if err != nil {
			continue
		}
		unused = append(unused, releaseMounts(gone)...)
	}
	return unused
}

// releaseMounts makes the mounts just taken off their trees private and
// returns their file systems that are left without a mount.
//
// Preconditions: treeMu is held.
func releaseMounts(gone []*Mount) []*Filesystem {
	var unused []*Filesystem
	for _, c := range gone {
		c.makePrivate()
		if fsMountsAdd(c.fs, -1) {
			unused = append(unused, c.fs)
		}
	}
	return unused
}
