package overlay

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
)

// Host unix sockets under the overlay (issue #3). A socket file only the
// lower layer has is the host's: connect(2) reaches a host process
// listening on it through the lower file system, as it does without the
// overlay (sentry/socket/unix's HostSocketNode; the gofer decides with
// --host-uds=open). A socket file in the upper layer, which bind(2) in
// the overlay makes whatever --host-uds says, or one copied up, is the
// sandbox's own: no host process can reach it, since the overlay never
// writes the host's tree.

// hostSocketNode is sentry/socket/unix.HostSocketNode's method, which
// lower file systems that serve host sockets implement.
type hostSocketNode interface {
	ConnectHostSocket(ctx fs.Context, dir fs.Node, name string, sockType int) (int, error)
}

// ConnectHostSocket implements sentry/socket/unix.HostSocketNode: the
// lower layer's host socket while the node has no upper part; dir is
// the overlay directory holding it as name. ECONNREFUSED otherwise, as
// for a socket file nothing listens on.
func (f fileNode) ConnectHostSocket(ctx fs.Context, dir fs.Node, name string, sockType int) (int, error) {
	if f.upperNode() != nil {
		return -1, unix.ECONNREFUSED
	}
	ln, ok := f.lower.(hostSocketNode)
	if !ok {
		return -1, unix.ECONNREFUSED
	}
	d := unwrap(dir)
	if d == nil || d.ofs != f.ofs {
		return -1, unix.ECONNREFUSED
	}
	if u := d.upperNode(); u != nil && isOpaque(ctx, u) {
		// The lower directory is hidden: its sockets are too.
		return -1, unix.ECONNREFUSED
	}
	if d.lower == nil {
		return -1, unix.ECONNREFUSED
	}
	return ln.ConnectHostSocket(ctx, d.lower, name, sockType)
}
