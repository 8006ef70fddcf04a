package proc

// This file is /proc/[pid]/mem: a process's address space as a file whose
// offsets are addresses.

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/synth"
)

// MemAccessTask is implemented by processes whose memory
// /proc/[pid]/mem reads and writes. Both force access as Linux does
// (FOLL_FORCE): PROT_NONE memory is read, read-only private mappings are
// written through copy on write, shared read-only ones are not.
type MemAccessTask interface {
	// BoundMemory returns access to the address space the process has
	// now. A /proc/[pid]/mem descriptor keeps it from its open, as
	// Linux's keeps the mm: once the process has exec'd (or exited), the
	// descriptor reads and writes nothing, so a descriptor opened while
	// the process was dumpable never reaches the image of a later execve.
	BoundMemory() MemAccess
}

// MemAccess is one address space, as BoundMemory gives it.
type MemAccess interface {
	// ReadMemory copies memory at addr into dst: the count copied, and
	// an error if it stopped short; 0 and no error once the address
	// space is gone.
	ReadMemory(addr uint64, dst []byte) (int, error)
	// WriteMemory copies src to memory at addr, likewise.
	WriteMemory(addr uint64, src []byte) (int, error)
}

// PtraceTask is implemented by processes whose memory only those that
// pass Linux's ptrace access check (with their filesystem ids) may see:
// mem, environ, auxv and maps are EACCES at open for others, whatever
// the mode bits (a root without CAP_SYS_PTRACE reads no other user's
// memory, as Linux's mm_access).
type PtraceTask interface {
	MayPtrace(ctx fs.Context) bool
}

// mayPtrace is EACCES when ctx may not look into t's memory.
func mayPtrace(t any, ctx fs.Context) error {
	if pt, ok := t.(PtraceTask); ok && !pt.MayPtrace(ctx) {
		return unix.EACCES
	}
	return nil
}

// ptraceCheck is mayPtrace for t as a synth.File's or synth.MagicLink's
// Check.
func ptraceCheck(t any) func(fs.Context) error {
	return func(ctx fs.Context) error { return mayPtrace(t, ctx) }
}

// memNode is /proc/[pid]/mem.
type memNode struct {
	*synth.File
	mt MemAccessTask
}

func newMemNode(mt MemAccessTask, attr synth.Attr) memNode {
	f := &synth.File{Attr: attr, SizeZero: true, Generate: func(fs.Context) ([]byte, error) { return nil, nil }}
	return memNode{File: f, mt: mt}
}

// Open implements fs.OpenNode.
func (n memNode) Open(ctx fs.Context, vd fs.VirtualDentry, flags uint32) (*fs.FileDescription, error) {
	if err := mayPtrace(n.mt, ctx); err != nil {
		return nil, err
	}
	return fs.NewFileDescription(&memFile{ma: n.mt.BoundMemory()}, vd, flags, fs.FDOptions{}), nil
}

type memFile struct {
	fs.FileDefaults
	fs.NotPollable
	// ma is the address space the process had at open; nil if none.
	ma MemAccess
}

// Read implements fs.FileImpl: nothing readable at the offset is EIO, a
// read stopping at an unreadable page returns what it got.
func (f *memFile) Read(_ fs.Context, _ *fs.FileDescription, dst []byte, off int64) (int, error) {
	if len(dst) == 0 || f.ma == nil {
		return 0, nil
	}
	n, err := f.ma.ReadMemory(uint64(off), dst)
	if n == 0 && err != nil {
		return 0, unix.EIO
	}
	return n, nil
}

// Write implements fs.FileImpl, as Read.
func (f *memFile) Write(_ fs.Context, _ *fs.FileDescription, src []byte, off int64) (int, error) {
	if len(src) == 0 || f.ma == nil {
		return 0, nil
	}
	n, err := f.ma.WriteMemory(uint64(off), src)
	if n == 0 && err != nil {
		return 0, unix.EIO
	}
	return n, nil
}

// Seek implements fs.FileImpl: any address may be the offset; there is
// no end to seek from.
func (f *memFile) Seek(_ fs.Context, _ *fs.FileDescription, cur, offset int64, whence int) (int64, error) {
	switch whence {
	case unix.SEEK_SET:
		return offset, nil
	case unix.SEEK_CUR:
		return cur + offset, nil
	}
	return 0, unix.EINVAL
}
