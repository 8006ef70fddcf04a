package kernel

import "github.com/moat-sandbox/moat/sentry/fs"

// FilesystemType makes a new instance of a file system for mount(2):
// source and data are mount's arguments, readOnly its MS_RDONLY.
type FilesystemType func(ctx fs.Context, source string, readOnly bool, data string) (*fs.Filesystem, error)

// RegisterFilesystem makes the file system type name mountable with
// mount(2). The boot code registers the types the sandbox offers.
func (k *Kernel) RegisterFilesystem(name string, typ FilesystemType) {
	k.fsTypes.Store(name, typ)
}

// Filesystem returns the registered file system type name.
func (k *Kernel) Filesystem(name string) (FilesystemType, bool) {
	v, ok := k.fsTypes.Load(name)
	if !ok {
		return nil, false
	}
	return v.(FilesystemType), true
}
