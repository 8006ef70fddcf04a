package proc

// This file is /proc/[pid]/uid_map, gid_map and setgroups. As Linux's
// (proc_id_map_open, proc_setgroups_open), an open file names the user
// namespace the process was in when it was opened and remembers who
// opened it: a write changes that namespace, checked against the opener
// as well as the writer (kernel/auth's WriteUIDMap).

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/synth"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// idMapFileKind says which of the three files an idMapNode is.
type idMapFileKind int

const (
	uidMapFile idMapFileKind = iota
	gidMapFile
	setgroupsFile
)

// idMapNode is one of /proc/[pid]/{uid_map,gid_map,setgroups}.
type idMapNode struct {
	*synth.File
	t    Task
	kind idMapFileKind
}

func newIDMapNode(t Task, kind idMapFileKind, attr synth.Attr) idMapNode {
	f := &synth.File{Attr: attr, SizeZero: true, Generate: func(ctx fs.Context) ([]byte, error) {
		return idMapFileText(t, kind, ctx), nil
	}}
	return idMapNode{File: f, t: t, kind: kind}
}

// idMapFileText is what the file reads for a reader with ctx's
// credentials.
func idMapFileText(t Task, kind idMapFileKind, ctx fs.Context) []byte {
	ns := taskUserNS(t)
	if kind == setgroupsFile {
		return []byte(ns.SetgroupsText())
	}
	gid := kind == gidMapFile
	reader := readerUserNS(ctx)
	if ns.IsInitial() && reader.IsInitial() {
		// The sandbox's namespace shows the container's maps.
		if st, ok := t.(SettingsTask); ok {
			return []byte(st.Settings().idMapText(gid))
		}
	}
	return []byte(ns.IDMapText(reader, gid))
}

// Open implements fs.OpenNode: the namespace and the opener's
// credentials are fixed here; setgroups opened for writing takes
// CAP_SYS_ADMIN in the namespace (EACCES).
func (n idMapNode) Open(ctx fs.Context, vd fs.VirtualDentry, flags uint32) (*fs.FileDescription, error) {
	f := &idMapFile{ns: taskUserNS(n.t), opener: ctx.Credentials(), kind: n.kind}
	if flags&unix.O_ACCMODE != unix.O_RDONLY {
		if f.opener == nil {
			// No credentials to check writes against.
			return nil, unix.EACCES
		}
		if n.kind == setgroupsFile {
			if err := f.ns.SetgroupsOpenForWrite(f.opener); err != nil {
				return nil, err
			}
		}
	}
	if flags&unix.O_ACCMODE != unix.O_WRONLY {
		f.data = idMapFileText(n.t, n.kind, ctx)
	}
	// Linux's are seq files: pwrite is ESPIPE.
	return fs.NewFileDescription(f, vd, flags, fs.FDOptions{NoPwrite: true}), nil
}

// idMapFile is an open uid_map, gid_map or setgroups.
type idMapFile struct {
	fs.FileDefaults
	fs.NotPollable
	ns     *auth.UserNamespace
	opener *auth.Credentials
	kind   idMapFileKind
	data   []byte
}

// Read implements fs.FileImpl.
func (f *idMapFile) Read(_ fs.Context, _ *fs.FileDescription, dst []byte, off int64) (int, error) {
	if off >= int64(len(f.data)) {
		return 0, nil
	}
	return copy(dst, f.data[off:]), nil
}

// Write implements fs.FileImpl: one write at offset 0 (Linux refuses
// others with EINVAL), checked against the opener and the writer.
func (f *idMapFile) Write(ctx fs.Context, _ *fs.FileDescription, src []byte, off int64) (int, error) {
	var err error
	switch f.kind {
	case setgroupsFile:
		if off != 0 {
			// Linux's proc_setgroups_write: one write, at 0 (a
			// successful one moves the offset past it).
			return 0, unix.EINVAL
		}
		err = f.ns.WriteSetgroups(f.opener, src)
	case uidMapFile, gidMapFile:
		if off != 0 {
			// Linux's map_write refuses anything but offset 0, after
			// the checks of proc_uid_map_write.
			if f.ns == nil || (f.opener.UserNamespace != f.ns && f.opener.UserNamespace != f.ns.Parent()) {
				return 0, unix.EPERM
			}
			return 0, unix.EINVAL
		}
		if f.kind == gidMapFile {
			err = f.ns.WriteGIDMap(f.opener, ctx.Credentials(), src)
		} else {
			err = f.ns.WriteUIDMap(f.opener, ctx.Credentials(), src)
		}
	}
	if err != nil {
		return 0, err
	}
	return len(src), nil
}

// Seek implements fs.FileImpl.
func (f *idMapFile) Seek(_ fs.Context, _ *fs.FileDescription, cur, offset int64, whence int) (int64, error) {
	return fs.SeekWithSize(cur, offset, whence, int64(len(f.data)))
}
