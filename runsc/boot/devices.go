package boot

import (
	"fmt"
	"log/slog"
	"path"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel"
)

// SpecDevice is one entry of an OCI spec's linux.devices.
type SpecDevice struct {
	Path string `json:"path"`
	// Type is "c" or "u" (character), "b" (block) or "p" (FIFO).
	Type     string  `json:"type"`
	Major    int64   `json:"major,omitempty"`
	Minor    int64   `json:"minor,omitempty"`
	FileMode *uint32 `json:"fileMode,omitempty"`
	UID      *uint32 `json:"uid,omitempty"`
	GID      *uint32 `json:"gid,omitempty"`
}

// deviceMode returns the node type of a spec device type.
func deviceMode(typ string) (uint32, error) {
	switch typ {
	case "c", "u":
		return unix.S_IFCHR, nil
	case "b":
		return unix.S_IFBLK, nil
	case "p":
		return unix.S_IFIFO, nil
	}
	return 0, fmt.Errorf("device type %q is not c, u, b or p", typ)
}

// makeDevices makes the spec's device nodes, as runc does after the
// mounts: the node (mode 0666 when the spec gives none) with its owner,
// its missing parent directories, and nothing where a file already is.
// The Sentry serves its own devices through such nodes (null, zero,
// tty, ...); others open with ENXIO, as a device without a driver does.
// A node that cannot be made (a /dev that takes no new names) is logged.
func makeDevices(mns *fs.MountNamespace, devs []SpecDevice, log *slog.Logger) error {
	ctx := kernel.Background()
	root := mns.Root()
	for i, d := range devs {
		typ, err := deviceMode(d.Type)
		if err != nil {
			return fmt.Errorf("linux.devices[%d]: %w", i, err)
		}
		p := path.Clean("/" + d.Path)
		perm := uint32(0o666)
		if d.FileMode != nil {
			perm = *d.FileMode & 0o7777
		}
		at := &fs.Lookup{Root: root, Start: root, Path: p}
		if dir := path.Dir(p); dir != "/" {
			err = mkdirAll(ctx, root, dir)
		}
		if err == nil {
			err = fs.Mknod(ctx, at, typ|perm, unix.Mkdev(uint32(d.Major), uint32(d.Minor)))
		}
		if err == unix.EEXIST {
			continue
		}
		if err != nil {
			log.Warn("spec device not made", "index", i, "path", p, "err", err)
			continue
		}
		vd, err := fs.Resolve(ctx, at)
		if err != nil {
			return fmt.Errorf("linux.devices[%d] (%s): %w", i, p, err)
		}
		// The mode without the creator's umask, then the owner.
		if err := fs.Chmod(ctx, vd, perm); err != nil {
			return fmt.Errorf("linux.devices[%d] (%s): %w", i, p, err)
		}
		if d.UID != nil || d.GID != nil {
			uid, gid := uint32(fs.NoID), uint32(fs.NoID)
			if d.UID != nil {
				uid = *d.UID
			}
			if d.GID != nil {
				gid = *d.GID
			}
			if err := fs.Chown(ctx, vd, uid, gid); err != nil {
				return fmt.Errorf("linux.devices[%d] (%s): %w", i, p, err)
			}
		}
	}
	return nil
}
