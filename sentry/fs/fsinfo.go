package fs

// MountInfo is what /proc/[pid]/mounts and mountinfo show of a file
// system beyond its type.
type MountInfo struct {
	// Source is the "device" mount(2) was given (the spec mount's
	// source, "shm" for a runtime's /dev/shm). Empty: the type is shown,
	// as Linux shows it for file systems mounted with "none" or their type.
	Source string
	// Root is the path of the file system's root within the file system
	// it was taken from, for a bind of a host directory (mountinfo's
	// fourth field, "/etc" for a bind of the host's /etc). Empty: "/".
	Root string
}

// SetMountInfo records what mountinfo shows of f. It is meant to be
// called once, before f is mounted.
func (f *Filesystem) SetMountInfo(i MountInfo) { f.info.Store(&i) }

// MountInfo returns what SetMountInfo recorded, or the zero MountInfo.
func (f *Filesystem) MountInfo() MountInfo {
	if i := f.info.Load(); i != nil {
		return *i
	}
	return MountInfo{}
}
