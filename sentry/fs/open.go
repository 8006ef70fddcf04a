package fs

import (
	"golang.org/x/sys/unix"
)

// OpenOptions are the arguments of open(2) after the path.
type OpenOptions struct {
	Flags uint32
	Mode  uint32
}

// Open resolves l.Path (l.FollowFinal is ignored: the flags decide) and
// opens it with the checks and in the order Linux's open makes them.
// Files are never created: an O_CREAT of a missing file fails with EROFS
// on read-only mounts and EPERM on file systems that cannot create.
func Open(ctx Context, l Lookup, opts OpenOptions) (*FileDescription, error) {
	flags := opts.Flags
	if flags&unix.O_PATH != 0 {
		flags &= unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	}
	if flags&unix.O_TMPFILE == unix.O_TMPFILE {
		return openTmpfile(ctx, &l, flags)
	}
	var vd VirtualDentry
	var err error
	if flags&unix.O_CREAT != 0 {
		vd, err = openCreateLookup(ctx, &l, flags)
	} else {
		l.FollowFinal = flags&unix.O_NOFOLLOW == 0
		vd, err = Resolve(ctx, &l)
	}
	if err != nil {
		return nil, err
	}
	return OpenAt(ctx, vd, flags)
}

// openCreateLookup finds the file an O_CREAT open names.
func openCreateLookup(ctx Context, l *Lookup, flags uint32) (VirtualDentry, error) {
	p, err := ResolveParent(ctx, l)
	if err != nil {
		return VirtualDentry{}, err
	}
	if !p.IsNormal() || p.TrailingSlash {
		return VirtualDentry{}, unix.EISDIR
	}
	r := &resolver{ctx: ctx, root: l.Root, cur: p.Dir, flags: l.Resolve}
	if l.Resolve&(unix.RESOLVE_BENEATH|unix.RESOLVE_IN_ROOT) != 0 {
		r.root = l.Start
		r.flags |= unix.RESOLVE_NO_MAGICLINKS
	}
	follow := flags&(unix.O_EXCL|unix.O_NOFOLLOW) == 0
	if err := r.walk(p.Name, follow); err != nil {
		if err == unix.ENOENT {
			return VirtualDentry{}, createMissing(ctx, r.cur)
		}
		return VirtualDentry{}, err
	}
	if flags&unix.O_EXCL != 0 {
		return VirtualDentry{}, unix.EEXIST
	}
	return r.cur, nil
}

// createMissing is what creating a file in dir gives: this VFS has no
// file system that creates files yet.
func createMissing(ctx Context, dir VirtualDentry) error {
	if dir.Mount.ReadOnly() {
		return unix.EROFS
	}
	if err := MayAccess(ctx, dir, MayWrite|MayExec); err != nil {
		return err
	}
	return unix.EPERM
}

func openTmpfile(ctx Context, l *Lookup, flags uint32) (*FileDescription, error) {
	if a := flags & unix.O_ACCMODE; a != unix.O_WRONLY && a != unix.O_RDWR {
		return nil, unix.EINVAL
	}
	l.FollowFinal = true
	vd, err := Resolve(ctx, l)
	if err != nil {
		return nil, err
	}
	st, err := vd.Stat(ctx)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, unix.ENOTDIR
	}
	return nil, createMissing(ctx, vd)
}

// OpenAt opens the resolved position vd with open(2) flags: the checks of
// Linux's do_open and may_open, then the node's Open.
func OpenAt(ctx Context, vd VirtualDentry, flags uint32) (*FileDescription, error) {
	st, err := vd.Stat(ctx)
	if err != nil {
		return nil, err
	}
	if flags&unix.O_CREAT != 0 && st.IsDir() {
		return nil, unix.EISDIR
	}
	if flags&unix.O_DIRECTORY != 0 && !st.IsDir() {
		return nil, unix.ENOTDIR
	}
	if flags&unix.O_PATH != 0 {
		return NewFileDescription(&pathFile{}, vd, flags, FDOptions{}), nil
	}
	ats := 0
	switch flags & unix.O_ACCMODE {
	case unix.O_RDONLY:
		ats = MayRead
	case unix.O_WRONLY:
		ats = MayWrite
	default:
		ats = MayRead | MayWrite
	}
	switch st.Type() {
	case unix.S_IFLNK:
		return nil, unix.ELOOP
	case unix.S_IFDIR:
		if ats&MayWrite != 0 {
			return nil, unix.EISDIR
		}
	case unix.S_IFBLK, unix.S_IFCHR:
		if vd.Mount != nil && vd.Mount.flags.NoDev {
			return nil, unix.EACCES
		}
		flags &^= unix.O_TRUNC
	case unix.S_IFIFO, unix.S_IFSOCK:
		flags &^= unix.O_TRUNC
	}
	if flags&unix.O_TRUNC != 0 {
		ats |= MayWrite
	}
	if err := mayAccessStat(ctx, vd, &st, ats); err != nil {
		return nil, err
	}
	if flags&unix.O_NOATIME != 0 {
		c := ctx.Credentials()
		if c.FilesystemUID != st.UID && !c.HasCapability(unix.CAP_FOWNER) {
			return nil, unix.EPERM
		}
	}
	if st.Type() == unix.S_IFSOCK {
		return nil, unix.ENXIO
	}
	if flags&unix.O_TRUNC != 0 && st.IsRegular() {
		// Writable file systems truncate in their Open.
		if vd.Mount.ReadOnly() {
			return nil, unix.EROFS
		}
	}
	flags |= OLargeFile
	if on, ok := vd.Dentry.node.(OpenNode); ok {
		return on.Open(ctx, vd, flags)
	}
	if st.IsDir() {
		return NewDirFile(vd, flags), nil
	}
	return nil, unix.ENXIO
}
