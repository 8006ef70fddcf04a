package gofer

import (
	"encoding/binary"

	"github.com/moat-sandbox/moat/gofer/proto"
	"golang.org/x/sys/unix"
)

// fstat stats the file fd refers to; for an O_PATH|O_NOFOLLOW fd of a
// symlink that is the symlink itself.
func fstat(fd int, st *unix.Stat_t) error {
	return unix.Fstatat(fd, "", st, unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW)
}

// checkName refuses anything but a single path component.
func checkName(name string) error {
	if len(name) > proto.NameMax {
		return unix.ENAMETOOLONG
	}
	if !proto.ValidName(name) {
		return unix.EINVAL
	}
	return nil
}

// walk looks up name in dir without following a symlink and returns a new
// node holding one reference. The name is one component (checkName), so
// the lookup cannot leave dir; O_NOFOLLOW keeps a final symlink unresolved.
func walk(dir *node, name string) (*node, proto.Attr, error) {
	if err := checkName(name); err != nil {
		return nil, proto.Attr{}, err
	}
	if dir.mode != unix.S_IFDIR {
		return nil, proto.Attr{}, unix.ENOTDIR
	}
	fd, err := unix.Openat(dir.fd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, proto.Attr{}, err
	}
	var st unix.Stat_t
	if err := fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, proto.Attr{}, err
	}
	return newNode(fd, &st, dir.idx, dir, name), proto.AttrFromStat(&st), nil
}

// openFile returns a new fd of n for donation, opened with the access
// mode and the O_APPEND, O_TRUNC, O_SYNC and O_DSYNC of flags; other
// flags are the caller's business. A read-only server refuses write access
// and O_TRUNC with EROFS.
//
// A directory is reopened through its own O_PATH fd as "." (no name is
// looked up again, so nothing can be swapped in). A regular file is
// reopened by name in its parent (reopen).
func openFile(n *node, flags int, readOnly bool) (int, error) {
	acc := flags & unix.O_ACCMODE
	trunc := flags&unix.O_TRUNC != 0
	write := acc != unix.O_RDONLY || trunc
	switch n.mode {
	case unix.S_IFDIR:
		if write {
			return -1, unix.EISDIR
		}
		return unix.Openat(n.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	case unix.S_IFREG:
		if write && readOnly {
			return -1, unix.EROFS
		}
	case unix.S_IFLNK:
		return -1, unix.ELOOP
	case unix.S_IFSOCK:
		return -1, unix.ENXIO
	default:
		// Devices and FIFOs: the Sentry serves its own /dev and pipes; a
		// host device or FIFO is never handed out.
		return -1, unix.EACCES
	}
	if acc == unix.O_ACCMODE {
		return -1, unix.EINVAL
	}
	fd, err := reopen(n, acc|flags&(unix.O_APPEND|unix.O_SYNC|unix.O_DSYNC))
	if err != nil {
		return -1, err
	}
	if trunc {
		// Truncate only once the file is known to be n's, never by name.
		tfd := fd
		if acc == unix.O_RDONLY {
			if tfd, err = reopen(n, unix.O_WRONLY); err != nil {
				unix.Close(fd)
				return -1, err
			}
			defer unix.Close(tfd)
		}
		if err := unix.Ftruncate(tfd, 0); err != nil {
			unix.Close(fd)
			return -1, err
		}
	}
	return fd, nil
}

// reopen opens the regular file n with flags (an access mode and status
// flags), by its name in its parent with O_NOFOLLOW and O_NONBLOCK (so a
// FIFO swapped in meanwhile cannot block us). The result must be the same
// file (device and inode) or the open fails with ESTALE; O_NONBLOCK is
// cleared before returning.
func reopen(n *node, flags int) (int, error) {
	n.idx.moveMu.RLock()
	parent, name := n.idx.location(n)
	if parent == nil {
		n.idx.moveMu.RUnlock()
		return -1, unix.ESTALE
	}
	fd, err := unix.Openat(parent.fd, name,
		flags|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	n.idx.moveMu.RUnlock()
	parent.decRef()
	if err != nil {
		return -1, err
	}
	var st unix.Stat_t
	if err := fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, err
	}
	if !n.same(&st) {
		unix.Close(fd)
		return -1, unix.ESTALE
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFL, flags&(unix.O_APPEND|unix.O_DIRECT|unix.O_NOATIME)); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// readlink returns the target of the symlink n.
func readlink(n *node) (string, error) {
	if n.mode != unix.S_IFLNK {
		return "", unix.EINVAL
	}
	buf := make([]byte, proto.PathMax)
	r, err := unix.Readlinkat(n.fd, "", buf)
	if err != nil {
		return "", err
	}
	if r >= len(buf) {
		return "", unix.ENAMETOOLONG
	}
	return string(buf[:r]), nil
}

// getdentsBufSize is the buffer for one getdents64 call.
const getdentsBufSize = 32 << 10

// getdents returns the page of entries of directory n that starts at the
// cookie off (0 for the start), as many as fit in one message. Next is the
// d_off of the last entry returned, so the following page starts right
// after it. "." and ".." are left out.
func getdents(n *node, off uint64) (*proto.Rgetdents, error) {
	if n.mode != unix.S_IFDIR {
		return nil, unix.ENOTDIR
	}
	n.dirMu.Lock()
	defer n.dirMu.Unlock()
	if n.dirFD < 0 {
		fd, err := unix.Openat(n.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, err
		}
		n.dirFD = fd
	}
	if _, err := unix.Seek(n.dirFD, int64(off), unix.SEEK_SET); err != nil {
		return nil, err
	}
	r := &proto.Rgetdents{Next: off}
	size := proto.RgetdentsOverhead
	buf := make([]byte, getdentsBufSize)
	for {
		cnt, err := unix.Getdents(n.dirFD, buf)
		if err != nil {
			return nil, err
		}
		if cnt == 0 {
			r.EOF = true
			return r, nil
		}
		for b := buf[:cnt]; len(b) > 0; {
			ent, next, reclen, ok := parseDirent64(b)
			if !ok {
				return nil, unix.EIO
			}
			b = b[reclen:]
			if !proto.ValidName(ent.Name) { // "." and "..", or a broken filesystem
				r.Next = next
				continue
			}
			if size+ent.EncodedSize() > proto.MaxMessage {
				return r, nil // the rest is read again for the next page
			}
			if ent.Type == unix.DT_UNKNOWN {
				ent.Type = direntType(n.dirFD, ent.Name)
			}
			size += ent.EncodedSize()
			r.Entries = append(r.Entries, ent)
			r.Next = next
		}
	}
}

// parseDirent64 decodes the struct linux_dirent64 at the start of b:
// d_ino u64, d_off s64, d_reclen u16, d_type u8, then the NUL-terminated
// name, in host byte order.
func parseDirent64(b []byte) (ent proto.Dirent, off uint64, reclen int, ok bool) {
	const nameOff = 19
	if len(b) < nameOff {
		return ent, 0, 0, false
	}
	reclen = int(binary.NativeEndian.Uint16(b[16:18]))
	if reclen <= nameOff || reclen > len(b) {
		return ent, 0, 0, false
	}
	name := b[nameOff:reclen]
	for i, c := range name {
		if c == 0 {
			name = name[:i]
			break
		}
	}
	ent = proto.Dirent{
		Name: string(name),
		Ino:  binary.NativeEndian.Uint64(b[0:8]),
		Type: b[18],
	}
	return ent, binary.NativeEndian.Uint64(b[8:16]), reclen, true
}

// direntType finds the DT_* type of name in dir with lstat, for
// filesystems that leave d_type unknown.
func direntType(dirFD int, name string) uint8 {
	var st unix.Stat_t
	if err := unix.Fstatat(dirFD, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return unix.DT_UNKNOWN
	}
	return uint8((st.Mode & unix.S_IFMT) >> 12)
}
