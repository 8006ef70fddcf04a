package gofer

import (
	"strings"

	"github.com/moat-sandbox/moat/gofer/proto"
	"golang.org/x/sys/unix"
)

// Extended attributes are served in the user.* and trusted.* namespaces
// (trusted.* where the gofer holds CAP_SYS_ADMIN), on directories and
// regular files, through an fd reopened for the call: the f*xattr calls
// refuse O_PATH fds. Other namespaces (security.*, system.*) are the
// Sentry's own business and are refused with EOPNOTSUPP.

// checkXattrName refuses names outside the served namespaces.
func checkXattrName(name string) error {
	if name == "" || len(name) > proto.XattrNameMax {
		return unix.ERANGE
	}
	if strings.IndexByte(name, 0) >= 0 {
		return unix.EINVAL
	}
	if !servedXattr(name) {
		return unix.EOPNOTSUPP
	}
	return nil
}

func servedXattr(name string) bool {
	return (strings.HasPrefix(name, "user.") && len(name) > len("user.")) ||
		(strings.HasPrefix(name, "trusted.") && len(name) > len("trusted."))
}

// xattrFD opens n for an f*xattr call; ok is false for the types whose
// attributes are not served.
func xattrFD(n *node) (fd int, ok bool, err error) {
	if n.mode != unix.S_IFDIR && n.mode != unix.S_IFREG {
		return -1, false, nil
	}
	fd, err = reopenAny(n, unix.O_RDONLY)
	return fd, err == nil, err
}

func getxattr(n *node, name string) (any, error) {
	if err := checkXattrName(name); err != nil {
		return nil, err
	}
	fd, ok, err := xattrFD(n)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, unix.ENODATA
	}
	defer unix.Close(fd)
	for {
		size, err := unix.Fgetxattr(fd, name, nil)
		if err != nil {
			return nil, err
		}
		if size > proto.XattrValueMax {
			return nil, unix.E2BIG
		}
		buf := make([]byte, size)
		got, err := unix.Fgetxattr(fd, name, buf)
		if err == unix.ERANGE {
			continue // grew meanwhile
		}
		if err != nil {
			return nil, err
		}
		return &proto.Rgetxattr{Value: string(buf[:got])}, nil
	}
}

func setxattr(n *node, m *proto.Tsetxattr) (any, error) {
	if err := checkXattrName(m.Name); err != nil {
		return nil, err
	}
	if m.Flags&^(unix.XATTR_CREATE|unix.XATTR_REPLACE) != 0 {
		return nil, unix.EINVAL
	}
	fd, ok, err := xattrFD(n)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, unix.EPERM
	}
	defer unix.Close(fd)
	if err := unix.Fsetxattr(fd, m.Name, []byte(m.Value), int(m.Flags)); err != nil {
		return nil, err
	}
	return &proto.Rsetxattr{}, nil
}

func removexattr(n *node, name string) (any, error) {
	if err := checkXattrName(name); err != nil {
		return nil, err
	}
	fd, ok, err := xattrFD(n)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, unix.EPERM
	}
	defer unix.Close(fd)
	if err := unix.Fremovexattr(fd, name); err != nil {
		return nil, err
	}
	return &proto.Rremovexattr{}, nil
}

// listxattr returns the served names among n's attributes.
func listxattr(n *node) (any, error) {
	fd, ok, err := xattrFD(n)
	if err != nil {
		return nil, err
	}
	if !ok {
		return &proto.Rlistxattr{}, nil
	}
	defer unix.Close(fd)
	var buf []byte
	for {
		size, err := unix.Flistxattr(fd, nil)
		if err != nil {
			return nil, err
		}
		buf = make([]byte, size)
		got, err := unix.Flistxattr(fd, buf)
		if err == unix.ERANGE {
			continue
		}
		if err != nil {
			return nil, err
		}
		buf = buf[:got]
		break
	}
	r := &proto.Rlistxattr{}
	total := 0
	for _, name := range strings.Split(string(buf), "\x00") {
		if !servedXattr(name) || len(name) > proto.XattrNameMax {
			continue
		}
		total += 2 + len(name)
		if total > proto.XattrValueMax {
			return nil, unix.E2BIG
		}
		r.Names = append(r.Names, name)
	}
	return r, nil
}
