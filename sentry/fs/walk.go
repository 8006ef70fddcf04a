package fs

import (
	"strings"

	"golang.org/x/sys/unix"
)

// Linux's limits on paths.
const (
	// PathMax is PATH_MAX: a path of this length or more is ENAMETOOLONG.
	PathMax = 4096
	// NameMax is NAME_MAX: the longest component.
	NameMax = 255
	// MaxSymlinks is how many symlinks one resolution follows before ELOOP.
	MaxSymlinks = 40
)

// Lookup describes one path resolution.
type Lookup struct {
	// Root is the task's root: absolute paths start there and ".." never
	// goes above it.
	Root VirtualDentry
	// Start is where relative paths start (the cwd or a directory fd).
	Start VirtualDentry
	// Path is the path to resolve.
	Path string
	// FollowFinal follows a symlink in the last component.
	FollowFinal bool
	// EmptyPath allows an empty Path, which names Start (AT_EMPTY_PATH).
	EmptyPath bool
	// Resolve holds openat2's RESOLVE_* flags.
	Resolve uint64
	// OpenHint says the caller means to open the result for reading: a
	// file system that looks up runs of names may open the last file
	// along with the lookup (PathLookupDir).
	OpenHint bool
}

type resolver struct {
	ctx   Context
	root  VirtualDentry
	cur   VirtualDentry
	links int
	flags uint64
	// parentOnly says the last component is not to be looked up
	// (ResolveParent).
	parentOnly bool
	// miss is a name found missing while looking up a run of
	// components (walkpath.go).
	miss pathMiss
	// openHint is Lookup.OpenHint.
	openHint bool
}

func newResolver(ctx Context, l *Lookup) (*resolver, error) {
	if len(l.Path) >= PathMax {
		return nil, unix.ENAMETOOLONG
	}
	r := &resolver{ctx: ctx, root: l.Root, cur: l.Start, flags: l.Resolve, openHint: l.OpenHint}
	if l.Resolve&(unix.RESOLVE_BENEATH|unix.RESOLVE_IN_ROOT) != 0 {
		r.root = l.Start
		// Scoped lookups never follow magic links.
		r.flags |= unix.RESOLVE_NO_MAGICLINKS
	}
	if !r.cur.Ok() {
		r.cur = r.root
	}
	return r, nil
}

// Resolve returns the position path l names.
func Resolve(ctx Context, l *Lookup) (VirtualDentry, error) {
	if l.Path == "" {
		if l.EmptyPath {
			return l.Start, nil
		}
		return VirtualDentry{}, unix.ENOENT
	}
	r, err := newResolver(ctx, l)
	if err != nil {
		return VirtualDentry{}, err
	}
	if err := r.walk(l.Path, l.FollowFinal); err != nil {
		return VirtualDentry{}, err
	}
	return r.cur, nil
}

// Parent is the result of ResolveParent.
type Parent struct {
	// Dir is the directory holding the last component.
	Dir VirtualDentry
	// Name is the last component: "" for "/", or "." or "..".
	Name string
	// TrailingSlash says the path ended with "/".
	TrailingSlash bool
}

// IsNormal reports whether Name is an ordinary name (not "", "." or "..").
func (p *Parent) IsNormal() bool { return p.Name != "" && p.Name != "." && p.Name != ".." }

// ResolveParent resolves every component of l.Path but the last, which is
// returned unresolved (for mkdir, unlink, rename, O_CREAT).
func ResolveParent(ctx Context, l *Lookup) (Parent, error) {
	if l.Path == "" {
		return Parent{}, unix.ENOENT
	}
	r, err := newResolver(ctx, l)
	if err != nil {
		return Parent{}, err
	}
	var p Parent
	r.parentOnly = true
	p.Name, p.TrailingSlash, err = r.walkParent(l.Path)
	p.Dir = r.cur
	return p, err
}

func (r *resolver) checkDir() error {
	st, err := r.cur.Stat(r.ctx)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return unix.ENOTDIR
	}
	return nodePermission(r.ctx, r.cur.Dentry, &st, MayExec)
}

// next splits rest into its first component and what follows.
func next(rest string) (name, after string, isLast, trailing bool) {
	rest = strings.TrimLeft(rest, "/")
	i := strings.IndexByte(rest, '/')
	if i < 0 {
		return rest, "", true, false
	}
	name, after = rest[:i], rest[i:]
	if strings.TrimLeft(after, "/") == "" {
		return name, after, true, true
	}
	return name, after, false, false
}

func (r *resolver) startPath(path string) error {
	if path[0] == '/' {
		if r.flags&unix.RESOLVE_BENEATH != 0 {
			return unix.EXDEV
		}
		r.cur = r.root
	}
	return nil
}

// walk resolves path from r.cur, leaving the result in r.cur.
func (r *resolver) walk(path string, followFinal bool) error {
	if err := r.startPath(path); err != nil {
		return err
	}
	rest := path
	mustDir := false
	for {
		if strings.TrimLeft(rest, "/") == "" {
			break
		}
		name, after, isLast, trailing := next(rest)
		rest = after
		if err := r.checkDir(); err != nil {
			return err
		}
		if isLast && trailing {
			mustDir = true
		}
		follow := !isLast || followFinal || trailing
		newRest, err := r.step(name, follow, rest)
		if err != nil {
			return err
		}
		rest = newRest
	}
	if mustDir {
		st, err := r.cur.Stat(r.ctx)
		if err != nil {
			return err
		}
		if !st.IsDir() {
			return unix.ENOTDIR
		}
	}
	return nil
}

// walkParent resolves all but the last component of path.
func (r *resolver) walkParent(path string) (string, bool, error) {
	if err := r.startPath(path); err != nil {
		return "", false, err
	}
	rest := path
	for {
		if strings.TrimLeft(rest, "/") == "" {
			// The path is "/" (or became it through a symlink).
			return "", false, nil
		}
		name, after, isLast, trailing := next(rest)
		if err := r.checkDir(); err != nil {
			return "", false, err
		}
		if isLast {
			if len(name) > NameMax {
				return "", false, unix.ENAMETOOLONG
			}
			return name, trailing, nil
		}
		newRest, err := r.step(name, true, after)
		if err != nil {
			return "", false, err
		}
		rest = newRest
	}
}

// step moves r.cur through the component name (r.cur is a searchable
// directory). If name is a symlink to follow, r.cur stays and the returned
// rest has the link's target in front.
func (r *resolver) step(name string, follow bool, rest string) (string, error) {
	switch name {
	case ".":
		return rest, nil
	case "..":
		return rest, r.dotdot()
	}
	if len(name) > NameMax {
		return "", unix.ENAMETOOLONG
	}
	child, err := r.lookup(name, rest)
	if err != nil {
		return "", err
	}
	nvd := followMounts(VirtualDentry{Mount: r.cur.Mount, Dentry: child})
	if nvd.Mount != r.cur.Mount && r.flags&unix.RESOLVE_NO_XDEV != 0 {
		return "", unix.EXDEV
	}
	link, isLink := nvd.Dentry.node.(SymlinkNode)
	if !isLink || !follow {
		r.cur = nvd
		return rest, nil
	}
	r.links++
	if r.links > MaxSymlinks || r.flags&unix.RESOLVE_NO_SYMLINKS != 0 {
		return "", unix.ELOOP
	}
	if magic, ok := link.(MagicLinkNode); ok {
		if r.flags&unix.RESOLVE_NO_MAGICLINKS != 0 {
			return "", unix.ELOOP
		}
		vd, fd, err := magic.Target(r.ctx)
		if err != nil {
			return "", err
		}
		if fd != nil {
			vd = fd.vd
			fd.DecRef()
		}
		if vd.Mount == nil {
			// Anonymous files (pipes...) are reached only as the last
			// component, through OpenMagic.
			if strings.TrimLeft(rest, "/") != "" {
				return "", unix.ENOTDIR
			}
		}
		r.cur = vd
		return rest, nil
	}
	target, err := link.Readlink(r.ctx)
	if err != nil {
		return "", err
	}
	if target == "" {
		return "", unix.ENOENT
	}
	if target[0] == '/' {
		if r.flags&unix.RESOLVE_BENEATH != 0 {
			return "", unix.EXDEV
		}
		r.cur = r.root
	}
	// rest is empty or starts with "/", keeping any trailing slash.
	return target + rest, nil
}

// dotdot moves r.cur to its parent, never above the root and crossing
// mounts upwards.
func (r *resolver) dotdot() error {
	for {
		if r.cur == r.root {
			if r.flags&unix.RESOLVE_BENEATH != 0 {
				return unix.EXDEV
			}
			return nil
		}
		m := r.cur.Mount
		if m != nil && r.cur.Dentry == m.root {
			if parent, point := m.Parent(); parent != nil {
				if r.flags&unix.RESOLVE_NO_XDEV != 0 {
					return unix.EXDEV
				}
				r.cur = VirtualDentry{Mount: parent, Dentry: point}
				continue
			}
		}
		break
	}
	if p := r.cur.Dentry.Parent(); p != nil && r.cur.Dentry != r.cur.Mount.root {
		r.cur = followMounts(VirtualDentry{Mount: r.cur.Mount, Dentry: p})
	}
	return nil
}
