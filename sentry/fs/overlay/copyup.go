package overlay

import (
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
)

// copyChunk is how much file data a copy-up moves at once.
const copyChunk = 1 << 20

// copyUp gives n an upper part, copying its ancestors first, and returns
// it.
func (n *node) copyUp(ctx fs.Context) (fs.Node, error) {
	n.ofs.mu.Lock()
	defer n.ofs.mu.Unlock()
	return n.copyUpLocked(ctx)
}

// copyUpLocked is copyUp with filesystem.mu held.
func (n *node) copyUpLocked(ctx fs.Context) (fs.Node, error) {
	n.mu.Lock()
	u, parent, name := n.upper, n.parent, n.name
	n.mu.Unlock()
	if u != nil {
		return u, nil
	}
	if parent == nil || n.lower == nil {
		return nil, fmt.Errorf("overlay: node %q has neither an upper part nor a parent: %w", name, unix.EIO)
	}
	pu, err := parent.copyUpLocked(ctx)
	if err != nil {
		return nil, err
	}
	pd, ok := pu.(fs.MutableDir)
	if !ok {
		return nil, unix.EIO
	}
	st, err := n.lower.Stat(ctx)
	if err != nil {
		return nil, err
	}
	opts := fs.CreateOptions{Mode: st.Mode, UID: st.UID, GID: st.GID, Rdev: st.Rdev}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		u, err = pd.Mkdir(ctx, name, opts)
	case unix.S_IFLNK:
		sl, ok := n.lower.(fs.SymlinkNode)
		if !ok {
			return nil, unix.EIO
		}
		var target string
		if target, err = sl.Readlink(ctx); err == nil {
			u, err = pd.Symlink(ctx, name, target, opts)
		}
	default:
		u, err = pd.Mknod(ctx, name, opts)
		if err == nil && st.IsRegular() {
			if err = copyData(ctx, n.lower, u, st.Size); err != nil {
				pd.Unlink(ctx, name, u)
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("overlay: copying up %q: %w", name, err)
	}
	copyXattrs(ctx, n.lower, u)
	// Times last: creating children and writing data moved them.
	if sa, ok := u.(fs.SetAttrNode); ok {
		sa.SetAttr(ctx, &fs.SetAttrOptions{
			Mask:  fs.SetAttrMode | fs.SetAttrUID | fs.SetAttrGID | fs.SetAttrAtime | fs.SetAttrMtime,
			Mode:  st.Mode & 07777,
			UID:   st.UID,
			GID:   st.GID,
			Atime: st.Atime,
			Mtime: st.Mtime,
		})
	}
	n.mu.Lock()
	n.upper = u
	n.mu.Unlock()
	return u, nil
}

// copyData copies size bytes of the regular file lower into the empty
// regular file upper, leaving holes where the data is all zeros.
func copyData(ctx fs.Context, lower, upper fs.Node, size int64) error {
	lo, ok1 := lower.(fs.OpenNode)
	uo, ok2 := upper.(fs.OpenNode)
	if !ok1 || !ok2 {
		return unix.EIO
	}
	src, err := lo.Open(ctx, fs.VirtualDentry{}, unix.O_RDONLY)
	if err != nil {
		return err
	}
	defer src.DecRef()
	dst, err := uo.Open(ctx, fs.VirtualDentry{}, unix.O_WRONLY)
	if err != nil {
		return err
	}
	defer dst.DecRef()
	buf := make([]byte, min(size, copyChunk))
	var off int64
	for off < size {
		n, err := src.PRead(ctx, buf[:min(int64(len(buf)), size-off)], off)
		if err != nil {
			return err
		}
		if n == 0 {
			break
		}
		if !allZero(buf[:n]) {
			if _, err := dst.PWrite(ctx, buf[:n], off); err != nil {
				return err
			}
		}
		off += int64(n)
	}
	// Trailing holes: the size is what the lower file said.
	if sa, ok := upper.(fs.SetAttrNode); ok {
		return sa.SetAttr(ctx, &fs.SetAttrOptions{Mask: fs.SetAttrSize, Size: off})
	}
	return nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// copyXattrs copies the extended attributes the upper layer can hold;
// failures (a lower layer without xattrs, a name the upper refuses) are
// not errors, as overlayfs ignores them too.
func copyXattrs(ctx fs.Context, lower, upper fs.Node) {
	lx, ok1 := lower.(fs.XattrNode)
	ux, ok2 := upper.(fs.XattrNode)
	if !ok1 || !ok2 {
		return
	}
	names, err := lx.ListXattr(ctx)
	if err != nil {
		return
	}
	for _, name := range names {
		if strings.HasPrefix(name, reservedPrefix) {
			continue
		}
		if v, err := lx.GetXattr(ctx, name); err == nil {
			ux.SetXattr(ctx, name, v, 0)
		}
	}
}
