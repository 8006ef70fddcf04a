package auth

import (
	"fmt"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// This file is the writing and reading of /proc/[pid]/uid_map, gid_map
// and setgroups, with Linux's rules (kernel/user_namespace.c map_write,
// new_idmap_permitted, proc_setgroups_write; user_namespaces(7)).

// pageSize bounds a map write: Linux refuses a write of a page or more.
const pageSize = 4096

// isSpace is the kernel's isspace: its ctype marks NBSP (0xa0) too.
func isSpace(c byte) bool {
	return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xa0
}

// skipSpaces returns s past its leading spaces.
func skipSpaces(s string) string {
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	return s
}

// strtoul parses leading decimal digits as the kernel's simple_strtoul
// does into a u32: no sign, overflow wraps silently, no digits is 0.
func strtoul(s string) (uint32, string) {
	var v uint64
	for len(s) > 0 && s[0] >= '0' && s[0] <= '9' {
		v = v*10 + uint64(s[0]-'0')
		s = s[1:]
	}
	return uint32(v), s
}

// ParseIDMap parses the text written to uid_map or gid_map: up to
// MaxIDMapLines lines of "first lower count", ranges neither empty nor
// wrapping nor overlapping another line's in either id space. Lower ids
// are as the writer gave them (in the parent namespace's terms). Any
// fault is EINVAL, as Linux's.
func ParseIDMap(data []byte) ([]IDMapEntry, error) {
	if len(data) >= pageSize {
		return nil, unix.EINVAL
	}
	text := string(data)
	if i := strings.IndexByte(text, 0); i >= 0 {
		// The kernel's copy is a C string.
		text = text[:i]
	}
	var m []IDMapEntry
	for pos, more := text, true; more; {
		line := pos
		more = false
		if i := strings.IndexByte(pos, '\n'); i >= 0 {
			line = pos[:i]
			pos = pos[i+1:]
			more = pos != ""
		}
		var e IDMapEntry
		s := skipSpaces(line)
		e.First, s = strtoul(s)
		if s == "" || !isSpace(s[0]) {
			return nil, unix.EINVAL
		}
		e.Lower, s = strtoul(skipSpaces(s))
		if s == "" || !isSpace(s[0]) {
			return nil, unix.EINVAL
		}
		e.Count, s = strtoul(skipSpaces(s))
		if s != "" && !isSpace(s[0]) {
			return nil, unix.EINVAL
		}
		if skipSpaces(s) != "" {
			return nil, unix.EINVAL
		}
		if e.First == NoID || e.Lower == NoID {
			return nil, unix.EINVAL
		}
		if e.First+e.Count <= e.First || e.Lower+e.Count <= e.Lower {
			return nil, unix.EINVAL
		}
		for _, p := range m {
			if p.First <= e.First+e.Count-1 && p.First+p.Count-1 >= e.First {
				return nil, unix.EINVAL
			}
			if p.Lower <= e.Lower+e.Count-1 && p.Lower+p.Count-1 >= e.Lower {
				return nil, unix.EINVAL
			}
		}
		if len(m)+1 == MaxIDMapLines && more {
			return nil, unix.EINVAL
		}
		m = append(m, e)
	}
	if len(m) == 0 {
		return nil, unix.EINVAL
	}
	return m, nil
}

// WriteUIDMap implements a write of ns's /proc/[pid]/uid_map: opener
// holds the credentials the file was opened with, writer those of the
// task writing to it. As Linux's map_write, almost every check is of the
// opener (so that a privileged writer, such as a setuid program handed
// the descriptor as its stdout, lends nothing to an unprivileged opener:
// CVE-2013-1959), and a map beyond the opener's own id needs CAP_SETUID
// over the parent namespace in both.
func (ns *UserNamespace) WriteUIDMap(opener, writer *Credentials, data []byte) error {
	return ns.writeMap(opener, writer, data, false)
}

// WriteGIDMap implements a write of ns's /proc/[pid]/gid_map, as
// WriteUIDMap with CAP_SETGID.
func (ns *UserNamespace) WriteGIDMap(opener, writer *Credentials, data []byte) error {
	return ns.writeMap(opener, writer, data, true)
}

// writeMap is proc_uid_map_write and map_write: checks in Linux's order,
// so that the errno of a write failing several ways is Linux's.
func (ns *UserNamespace) writeMap(opener, writer *Credentials, data []byte, gid bool) error {
	// proc_uid_map_write: the initial map is fixed, and only a file
	// opened in the namespace or its parent writes it.
	if ns == nil {
		return unix.EPERM
	}
	if opener.UserNamespace != ns && opener.UserNamespace != ns.parent {
		return unix.EPERM
	}
	// map_write: a page or more is EINVAL before anything else.
	if len(data) >= pageSize {
		return unix.EINVAL
	}
	ns.mu.Lock()
	defer ns.mu.Unlock()
	slot, parentMap := &ns.uidMap, ns.parent.UIDMap
	capSetID := uint(unix.CAP_SETUID)
	if gid {
		slot, parentMap = &ns.gidMap, ns.parent.GIDMap
		capSetID = unix.CAP_SETGID
	}
	if slot.Load() != nil {
		return unix.EPERM
	}
	// Adjusting the namespace takes CAP_SYS_ADMIN in it (file_ns_capable:
	// the opener's).
	if !opener.HasCapabilityIn(unix.CAP_SYS_ADMIN, ns) {
		return unix.EPERM
	}
	m, err := ParseIDMap(data)
	if err != nil {
		return err
	}
	if !ns.idMapPermitted(opener, writer, m, gid, capSetID) {
		return unix.EPERM
	}
	// The lower ids are the parent's: make them global. Each line must
	// fall within one line of the parent's map.
	parent := idMap(parentMap())
	out := make(idMap, len(m))
	for i, e := range m {
		lower := e.Lower
		if ns.parent != nil {
			var ok bool
			if lower, ok = parent.down(e.Lower, e.Count); !ok {
				return unix.EPERM
			}
		}
		out[i] = IDMapEntry{First: e.First, Lower: lower, Count: e.Count}
	}
	slices.SortFunc(out, func(a, b IDMapEntry) int { return int(int64(a.First) - int64(b.First)) })
	slot.Store(&out)
	return nil
}

// idMapPermitted is new_idmap_permitted: may a file opened with opener
// and written by writer install m?
func (ns *UserNamespace) idMapPermitted(opener, writer *Credentials, m []IDMapEntry, gid bool, capSetID uint) bool {
	if !gid && !ns.verifyRootMap(opener, m) {
		return false
	}
	// One line of one id, the opener's own euid (or egid, once
	// setgroups is denied), opened by the namespace's owner: nothing it
	// could not do without the namespace.
	if len(m) == 1 && m[0].Count == 1 && ns.owner == opener.EffectiveUID {
		id := m[0].Lower
		if !gid {
			if k, ok := ns.parent.MapToKUID(id); ok && k == opener.EffectiveUID {
				return true
			}
		} else if ns.setgroupsDenied.Load() {
			if k, ok := ns.parent.MapToKGID(id); ok && k == opener.EffectiveGID {
				return true
			}
		}
	}
	// Otherwise the writer and the opener both need CAP_SETUID
	// (CAP_SETGID) over the parent.
	return writer.HasCapabilityIn(capSetID, ns.parent) && opener.HasCapabilityIn(capSetID, ns.parent)
}

// verifyRootMap is verify_root_map: mapping the parent's uid 0 needs
// the opener to hold CAP_SETFCAP over the parent; for an opener inside
// the namespace itself, the creator must have held it when it made the
// namespace.
func (ns *UserNamespace) verifyRootMap(opener *Credentials, m []IDMapEntry) bool {
	for _, e := range m {
		if e.Lower != 0 {
			continue
		}
		if opener.UserNamespace == ns {
			return ns.parentCouldSetFCap
		}
		return opener.HasCapabilityIn(unix.CAP_SETFCAP, ns.parent)
	}
	return true
}

// SetgroupsOpenForWrite is the check of an open of ns's
// /proc/[pid]/setgroups for writing by credentials c (Linux's
// proc_setgroups_open): CAP_SYS_ADMIN in ns, else EACCES.
func (ns *UserNamespace) SetgroupsOpenForWrite(c *Credentials) error {
	if !c.HasCapabilityIn(unix.CAP_SYS_ADMIN, ns) {
		return unix.EACCES
	}
	return nil
}

// WriteSetgroups implements a write of /proc/[pid]/setgroups opened for
// writing by credentials opener: "allow" or "deny" and spaces. Denying
// is only possible before gid_map is written, allowing only while not
// denied. Linux checks the opener when the file is opened, not the
// writer; the opener's check is repeated here (SetgroupsOpenForWrite).
func (ns *UserNamespace) WriteSetgroups(opener *Credentials, data []byte) error {
	if err := ns.SetgroupsOpenForWrite(opener); err != nil {
		return err
	}
	if len(data) >= 8 {
		return unix.EINVAL
	}
	s := string(data)
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	var allow bool
	switch {
	case strings.HasPrefix(s, "allow"):
		allow, s = true, s[5:]
	case strings.HasPrefix(s, "deny"):
		s = s[4:]
	default:
		return unix.EINVAL
	}
	if skipSpaces(s) != "" {
		return unix.EINVAL
	}
	if ns == nil {
		// The initial namespace's gid map is set: only "allow",
		// which it is, succeeds.
		if allow {
			return nil
		}
		return unix.EPERM
	}
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if allow {
		if ns.setgroupsDenied.Load() {
			return unix.EPERM
		}
		return nil
	}
	if ns.gidMap.Load() != nil {
		return unix.EPERM
	}
	ns.setgroupsDenied.Store(true)
	return nil
}

// SetgroupsText is what /proc/[pid]/setgroups reads for ns.
func (ns *UserNamespace) SetgroupsText() string {
	if ns.SetgroupsDenied() {
		return "deny\n"
	}
	return "allow\n"
}

// IDMapText is what a reader in namespace reader sees in ns's uid_map
// (gid_map if gid): each line's lower id in the reader's terms, or, when
// the reader is in ns itself, in ns's parent's terms (unmapped: -1).
func (ns *UserNamespace) IDMapText(reader *UserNamespace, gid bool) string {
	m := ns.UIDMap()
	if gid {
		m = ns.GIDMap()
	}
	if ns == nil {
		m = []IDMapEntry{{First: 0, Lower: 0, Count: NoID}}
	}
	lowerNS := reader
	if lowerNS == ns && ns != nil {
		lowerNS = ns.parent
	}
	var b strings.Builder
	for _, e := range m {
		var lower uint32
		var ok bool
		if gid {
			lower, ok = lowerNS.MapFromKGID(KGID(e.Lower))
		} else {
			lower, ok = lowerNS.MapFromKUID(KUID(e.Lower))
		}
		if !ok {
			lower = NoID
		}
		fmt.Fprintf(&b, "%10d %10d %10d\n", e.First, lower, e.Count)
	}
	return b.String()
}
