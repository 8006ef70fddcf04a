package fs

import (
	"time"

	"golang.org/x/sys/unix"
)

// anonNode is the one inode every anonymous file shares, as Linux's
// anon_inodefs has (eventfd, epoll, timerfd, signalfd...).
type anonNode struct {
	ino  uint64
	time unix.Timespec
}

func (a *anonNode) Stat(Context) (Stat, error) {
	return Stat{Mode: 0o600, Nlink: 1, Ino: a.ino, Blksize: 4096, Atime: a.time, Mtime: a.time, Ctime: a.time}, nil
}

type anonFS struct{}

// AnonInodeFSMagic is statfs's f_type for anonymous files.
const AnonInodeFSMagic = 0x09041934

func (anonFS) StatFS(Context) (StatFS, error) {
	return StatFS{Type: AnonInodeFSMagic, Bsize: 4096, Frsize: 4096, NameLen: NameMax}, nil
}

var (
	theAnonNode = &anonNode{ino: NewIno(), time: unix.NsecToTimespec(time.Now().UnixNano())}
	anonFSys    = NewFilesystem("anon_inodefs", anonFS{}, theAnonNode, false)
)

// NewAnonFile returns a file description of an anonymous file whose
// /proc/self/fd link reads "anon_inode:[kind]" (kind: "eventfd",
// "eventpoll"...).
func NewAnonFile(kind string, impl FileImpl, flags uint32, opts FDOptions) *FileDescription {
	d := NewAnonDentry(anonFSys, "anon_inode:["+kind+"]", theAnonNode)
	return NewFileDescription(impl, VirtualDentry{Dentry: d}, flags, opts)
}

// NewAnonFileNamed is NewAnonFile for kinds whose link reads
// "anon_inode:name" without brackets (inotify).
func NewAnonFileNamed(name string, impl FileImpl, flags uint32, opts FDOptions) *FileDescription {
	d := NewAnonDentry(anonFSys, "anon_inode:"+name, theAnonNode)
	return NewFileDescription(impl, VirtualDentry{Dentry: d}, flags, opts)
}
