package fs

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// OpenOptions are the arguments of open(2) after the path.
type OpenOptions struct {
	Flags uint32
	Mode  uint32
}

// Open resolves l.Path (l.FollowFinal is ignored: the flags decide) and
// opens it with the checks and in the order Linux's open makes them,
// creating a regular file for O_CREAT (opts.Mode has the umask applied)
// and truncating for O_TRUNC.
func Open(ctx Context, l Lookup, opts OpenOptions) (*FileDescription, error) {
	fd, err := open(ctx, l, opts)
	if err != nil {
		return nil, err
	}
	if fd.opener == nil && fd.refs.Load() == 1 {
		fd.opener = ctx.Credentials()
	}
	return fd, nil
}

func open(ctx Context, l Lookup, opts OpenOptions) (*FileDescription, error) {
	flags := opts.Flags
	if flags&unix.O_PATH != 0 {
		flags &= unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	}
	if flags&unix.O_TMPFILE == unix.O_TMPFILE {
		return openTmpfile(ctx, &l, flags, opts.Mode)
	}
	if flags&unix.O_CREAT != 0 {
		return openCreate(ctx, &l, flags, opts.Mode)
	}
	l.FollowFinal = flags&unix.O_NOFOLLOW == 0
	l.OpenHint = flags&unix.O_ACCMODE == unix.O_RDONLY && flags&(unix.O_PATH|unix.O_DIRECTORY|unix.O_TRUNC) == 0
	vd, err := Resolve(ctx, &l)
	if err != nil {
		return nil, err
	}
	return OpenAt(ctx, vd, flags)
}

// openCreate is an O_CREAT open: the last component is created when
// missing; a symlink there is followed (unless O_EXCL or O_NOFOLLOW) and
// its target's last component is created in turn.
func openCreate(ctx Context, l *Lookup, flags, mode uint32) (*FileDescription, error) {
	if l.Path == "" {
		return nil, unix.ENOENT
	}
	r, err := newResolver(ctx, l)
	if err != nil {
		return nil, err
	}
	// The last component is looked up (or created) on its own, never in a
	// batched run: a miss recorded there would be stale once another task
	// creates the file before this one does, and the open would fail with
	// ENOENT, which Linux never gives an O_CREAT open.
	r.parentOnly = true
	path := l.Path
	for {
		name, trailing, err := r.walkParent(path)
		if err != nil {
			return nil, err
		}
		if name == "" || name == "." || name == ".." || trailing {
			return nil, unix.EISDIR
		}
		dir := r.cur
		fd, found, err := createRegular(ctx, dir, name, flags, mode)
		if err != nil || !found {
			return fd, err
		}
		if flags&unix.O_EXCL != 0 {
			return nil, unix.EEXIST
		}
		follow := flags&unix.O_NOFOLLOW == 0
		rest, err := r.step(name, follow, "")
		if err != nil {
			return nil, err
		}
		if rest == "" {
			return OpenAt(ctx, r.cur, flags)
		}
		path = rest
	}
}

// createRegular creates name in dir and opens it if it is missing (found
// false); found true means it exists and nothing was done.
func createRegular(ctx Context, dir VirtualDentry, name string, flags, mode uint32) (*FileDescription, bool, error) {
	d := dir.Dentry
	d.dirMu.Lock()
	if _, err := d.lookupLocked(ctx, name); err == nil {
		d.dirMu.Unlock()
		return nil, true, nil
	} else if err != unix.ENOENT {
		d.dirMu.Unlock()
		return nil, false, err
	}
	if err := missing(d); err != nil {
		d.dirMu.Unlock()
		return nil, false, err
	}
	if dir.Mount.ReadOnly() {
		d.dirMu.Unlock()
		return nil, false, unix.EROFS
	}
	dirSt, err := mayCreate(ctx, d)
	if err != nil {
		d.dirMu.Unlock()
		return nil, false, err
	}
	md, ok := d.node.(MutableDir)
	if !ok {
		d.dirMu.Unlock()
		// Linux: a directory without ->create.
		return nil, false, unix.EACCES
	}
	n, err := md.Mknod(ctx, name, newOwner(ctx.Credentials(), &dirSt, unix.S_IFREG|mode&0o7777))
	if err != nil {
		d.dirMu.Unlock()
		return nil, false, err
	}
	child := d.addChild(name, n)
	notifyChild(d, unix.IN_CREATE, name, 0)
	d.dirMu.Unlock()
	fd, err := openNode(ctx, VirtualDentry{Mount: dir.Mount, Dentry: child}, flags&^unix.O_TRUNC, true)
	return fd, false, err
}

// openTmpfile is open(O_TMPFILE) of the directory l.Path names.
func openTmpfile(ctx Context, l *Lookup, flags, mode uint32) (*FileDescription, error) {
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
	if vd.Mount.ReadOnly() {
		return nil, unix.EROFS
	}
	d := vd.Dentry
	d.dirMu.Lock()
	dirSt, err := mayCreate(ctx, d)
	if err != nil {
		d.dirMu.Unlock()
		return nil, err
	}
	td, ok := d.node.(TmpfileDir)
	if !ok {
		d.dirMu.Unlock()
		return nil, unix.EOPNOTSUPP
	}
	n, err := td.Tmpfile(ctx, newOwner(ctx.Credentials(), &dirSt, unix.S_IFREG|mode&0o7777))
	d.dirMu.Unlock()
	if err != nil {
		return nil, err
	}
	nst, err := n.Stat(ctx)
	if err != nil {
		return nil, err
	}
	child := &Dentry{fs: d.fs, parent: d, name: fmt.Sprintf("#%d", nst.Ino), node: n}
	child.dead.Store(true)
	if flags&unix.O_EXCL != 0 {
		child.noLink.Store(true)
	}
	return openNode(ctx, VirtualDentry{Mount: vd.Mount, Dentry: child}, flags&^(unix.O_TRUNC|unix.O_TMPFILE), true)
}

// OpenAt opens the resolved position vd with open(2) flags: the checks of
// Linux's do_open and may_open, then the node's Open, then O_TRUNC.
func OpenAt(ctx Context, vd VirtualDentry, flags uint32) (*FileDescription, error) {
	return openNode(ctx, vd, flags, false)
}

// OpenForExec opens the regular file at vd for reading by the kernel
// itself, to load it for execve: the caller has checked that the task
// may execute it, and, as Linux's open_exec, read permission is not
// needed (an execute-only program runs, and is then not dumpable).
func OpenForExec(ctx Context, vd VirtualDentry) (*FileDescription, error) {
	return openNode(ctx, vd, unix.O_RDONLY, true)
}

// openNode is OpenAt; a file the open just created (created) is not
// checked against its mode bits.
func openNode(ctx Context, vd VirtualDentry, flags uint32, created bool) (*FileDescription, error) {
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
	if flags&unix.O_TRUNC != 0 {
		// Truncation needs write access, even with O_RDONLY (Linux's
		// build_open_flags), so a directory gives EISDIR.
		ats |= MayWrite
	}
	switch st.Type() {
	case unix.S_IFLNK:
		return nil, unix.ELOOP
	case unix.S_IFDIR:
		if ats&MayWrite != 0 {
			return nil, unix.EISDIR
		}
	case unix.S_IFBLK, unix.S_IFCHR:
		if vd.Mount != nil && vd.Mount.Flags().NoDev {
			return nil, unix.EACCES
		}
		flags &^= unix.O_TRUNC
	case unix.S_IFIFO, unix.S_IFSOCK:
		flags &^= unix.O_TRUNC
	}
	if flags&unix.O_TRUNC != 0 {
		ats |= MayWrite
	}
	if !created {
		if err := mayAccessStat(ctx, vd, &st, ats); err != nil {
			return nil, err
		}
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
		// The truncation itself follows the node's Open.
		if vd.Mount.ReadOnly() {
			return nil, unix.EROFS
		}
	}
	flags |= OLargeFile
	on, ok := vd.Dentry.node.(OpenNode)
	if !ok {
		if st.IsDir() {
			return opened(NewDirFile(vd, flags), true), nil
		}
		return nil, unix.ENXIO
	}
	// A regular file being executed cannot be opened for writing, nor
	// truncated (textbusy.go); a writer is counted until it is released.
	writer := st.IsRegular() && flags&unix.O_ACCMODE != unix.O_RDONLY
	if writer {
		if err := getWriteAccess(textKeyOf(vd.Dentry, &st)); err != nil {
			return nil, err
		}
	} else if flags&unix.O_TRUNC != 0 {
		if err := checkWriteAccess(vd.Dentry, &st); err != nil {
			return nil, err
		}
	}
	fd, err := on.Open(ctx, vd, flags)
	if err != nil {
		if writer {
			addText(textKeyOf(vd.Dentry, &st), -1)
		}
		return nil, err
	}
	if writer {
		k := textKeyOf(vd.Dentry, &st)
		fd.AddReleaseHook(writeAccessHook{}, func() { addText(k, -1) })
	}
	opened(fd, st.IsDir())
	if flags&unix.O_TRUNC != 0 && st.IsRegular() {
		if err := truncateNode(ctx, vd.Dentry, 0); err != nil {
			fd.DecRef()
			return nil, err
		}
	}
	return fd, nil
}

// opened marks a file the VFS opened and reports IN_OPEN for it.
func opened(fd *FileDescription, isDir bool) *FileDescription {
	if fd.vd.Dentry == nil {
		return fd
	}
	if fd.refs.Load() == 1 && !fd.counted {
		fd.isDir = isDir
		if fd.Flags()&unix.O_PATH == 0 {
			fd.counted = true
			fd.vd.Dentry.opens.Add(1)
		}
	}
	if watched(fd.vd.Dentry) {
		notifyEvent(fd.vd.Dentry, unix.IN_OPEN, isDir)
	}
	return fd
}
