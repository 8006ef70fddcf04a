package synth

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
)

// File is a regular file whose contents are generated when it is opened
// (each open sees one consistent snapshot, as /proc files do).
type File struct {
	Attr
	// Generate returns the contents.
	Generate func(ctx fs.Context) ([]byte, error)
	// Write, if set, receives each write(2) (the file is then writable by
	// the mode bits); otherwise writes fail with EINVAL.
	Write func(ctx fs.Context, data []byte) (int, error)
	// SizeZero reports size 0 in stat, as /proc does, instead of
	// generating the contents to measure them.
	SizeZero bool
	// Check, if set, is called at every open, whatever the access mode,
	// before anything is generated; its error fails the open (Linux's
	// proc files that check access at open, as proc_mem_open does).
	Check func(ctx fs.Context) error
	// ReadError has an error from Generate returned by each read rather
	// than by the open (Linux's single-show proc files, which check
	// access when they are read).
	ReadError bool
}

// NewStaticFile returns a read-only file with fixed contents.
func NewStaticFile(mode uint32, data []byte) *File {
	return &File{Attr: Attr{Mode: mode}, Generate: func(fs.Context) ([]byte, error) { return data, nil }}
}

// NewGenFile returns a read-only file generated on open with size 0 in
// stat.
func NewGenFile(mode uint32, gen func(ctx fs.Context) ([]byte, error)) *File {
	return &File{Attr: Attr{Mode: mode}, Generate: gen, SizeZero: true}
}

// Stat implements fs.Node.
func (f *File) Stat(ctx fs.Context) (fs.Stat, error) {
	st := f.stat(unix.S_IFREG)
	if !f.SizeZero {
		data, err := f.Generate(ctx)
		if err != nil {
			return st, err
		}
		st.Size = int64(len(data))
		st.Blocks = (st.Size + 511) / 512
	}
	return st, nil
}

// Open implements fs.OpenNode.
func (f *File) Open(ctx fs.Context, vd fs.VirtualDentry, flags uint32) (*fs.FileDescription, error) {
	if f.Check != nil {
		if err := f.Check(ctx); err != nil {
			return nil, err
		}
	}
	g := &genFile{node: f}
	if flags&unix.O_ACCMODE != unix.O_WRONLY {
		var err error
		if g.data, err = f.Generate(ctx); err != nil {
			if !f.ReadError {
				return nil, err
			}
			g.err = err
		}
	}
	return fs.NewFileDescription(g, vd, flags, fs.FDOptions{}), nil
}

type genFile struct {
	fs.FileDefaults
	fs.NotPollable
	node *File
	data []byte
	err  error // Generate's, for each read (File.ReadError)
}

// Read implements fs.FileImpl.
func (g *genFile) Read(_ fs.Context, _ *fs.FileDescription, dst []byte, off int64) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if off >= int64(len(g.data)) {
		return 0, nil
	}
	return copy(dst, g.data[off:]), nil
}

// Write implements fs.FileImpl.
func (g *genFile) Write(ctx fs.Context, _ *fs.FileDescription, src []byte, _ int64) (int, error) {
	if g.node.Write == nil {
		return 0, unix.EINVAL
	}
	return g.node.Write(ctx, src)
}

// Seek implements fs.FileImpl.
func (g *genFile) Seek(_ fs.Context, _ *fs.FileDescription, cur, offset int64, whence int) (int64, error) {
	return fs.SeekWithSize(cur, offset, whence, int64(len(g.data)))
}

// Device is a character device whose opened files are of a kind the
// builder supplies (/dev/null, /dev/tty...).
type Device struct {
	Attr
	// Rdev is the device number, unix.Mkdev(major, minor).
	Rdev uint64
	// OpenFile returns the file of an open of the device.
	OpenFile func(ctx fs.Context, vd fs.VirtualDentry, flags uint32) (*fs.FileDescription, error)
}

// Stat implements fs.Node.
func (d *Device) Stat(fs.Context) (fs.Stat, error) {
	st := d.stat(unix.S_IFCHR)
	st.Rdev = d.Rdev
	return st, nil
}

// Open implements fs.OpenNode.
func (d *Device) Open(ctx fs.Context, vd fs.VirtualDentry, flags uint32) (*fs.FileDescription, error) {
	return d.OpenFile(ctx, vd, flags)
}
