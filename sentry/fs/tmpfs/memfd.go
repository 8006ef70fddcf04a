package tmpfs

import (
	"sync"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/mm"
)

// MemfdNameMax is the longest name memfd_create accepts (NAME_MAX less
// the "memfd:" prefix).
const MemfdNameMax = fs.NameMax - len("memfd:")

// memfd flags beyond those of golang.org/x/sys/unix's older releases.
const (
	mfdNoexecSeal = 0x8
	mfdExec       = 0x10
)

// memfdFS is the unmounted tmpfs that holds every memfd of one memory
// file, as Linux keeps them on an internal shmem mount.
var memfdFS struct {
	mu  sync.Mutex
	fss map[*mm.MemoryFile]*fs.Filesystem
}

func memfdFilesystem(mf *mm.MemoryFile) *fs.Filesystem {
	memfdFS.mu.Lock()
	defer memfdFS.mu.Unlock()
	if f, ok := memfdFS.fss[mf]; ok {
		return f
	}
	if memfdFS.fss == nil {
		memfdFS.fss = make(map[*mm.MemoryFile]*fs.Filesystem)
	}
	// No limits: Linux's internal mount has none (statfs reports zeros).
	f := New(mf, Options{}, nil)
	memfdFS.fss[mf] = f
	return f
}

// NewMemfd returns the file description of a new memfd (memfd_create):
// an unlinked tmpfs file called name, owned by creds, read-write. flags
// are memfd_create's; the caller has checked them. MFD_ALLOW_SEALING lifts
// the initial F_SEAL_SEAL; MFD_NOEXEC_SEAL makes the file non-executable
// and seals that (F_SEAL_EXEC), allowing other seals.
func NewMemfd(mf *mm.MemoryFile, name string, flags uint32, creds *auth.Credentials) *fs.FileDescription {
	fsys := memfdFilesystem(mf)
	tfs := fsys.Impl().(*filesystem)
	mode := uint32(0o777)
	seals := unix.F_SEAL_SEAL
	switch {
	case flags&mfdNoexecSeal != 0:
		mode = 0o666
		seals = unix.F_SEAL_EXEC
	case flags&unix.MFD_ALLOW_SEALING != 0:
		seals = 0
	}
	f := tfs.newRegular(fs.CreateOptions{Mode: unix.S_IFREG | mode, UID: creds.FilesystemUID, GID: creds.FilesystemGID})
	f.obj.SetSeals(seals)
	f.nlink = 0
	tfs.mu.Lock()
	tfs.inodes++
	tfs.mu.Unlock()
	d := fs.NewAnonDentry(fsys, "/memfd:"+name+" (deleted)", f)
	fd, _ := f.Open(nil, fs.VirtualDentry{Dentry: d}, unix.O_RDWR|fs.OLargeFile)
	return fd
}

// AddSeals implements fcntl(F_ADD_SEALS) on a tmpfs file or memfd: EPERM
// unless fd is open for writing, EINVAL for a file that cannot be sealed
// (not tmpfs) or an unknown seal, then the object's rules. F_SEAL_EXEC on
// an executable file implies the write, shrink and grow seals.
func AddSeals(fd *fs.FileDescription, seals int) error {
	if !fd.Writable() {
		return unix.EPERM
	}
	r, ok := fd.Impl().(*regularFD)
	if !ok {
		return unix.EINVAL
	}
	r.f.mu.Lock()
	exec := r.f.mode&0o111 != 0
	r.f.mu.Unlock()
	return r.f.obj.AddSeals(seals, exec)
}

// Seals implements fcntl(F_GET_SEALS): EINVAL for files that are not
// tmpfs files or memfds.
func Seals(fd *fs.FileDescription) (int, error) {
	r, ok := fd.Impl().(*regularFD)
	if !ok {
		return 0, unix.EINVAL
	}
	return r.f.obj.Seals(), nil
}
