package gofer

import (
	"github.com/moat-sandbox/moat/gofer/proto"
	"golang.org/x/sys/unix"
)

// Unix sockets on host paths, served only with Config.HostUDS (or
// HostUDSBind for bind, HostUDSConnect for connect): a socket
// in the tree may lead to a host daemon. bind(2) and connect(2) take a path, not a
// directory fd and a name, so the gofer moves its working directory into
// the directory's O_PATH fd (fchdir), names the socket by its single
// component, and moves back, all under Server.cwdMu. connect follows a
// symlink in the final component: the name is checked to be a socket
// first, and a symlink swapped in after the check resolves inside the
// gofer's confined root (Confine), never outside it.

// sunPathMax is the room for a path in struct sockaddr_un, less the NUL.
const sunPathMax = 107

func checkSockType(t uint32) error {
	switch t {
	case unix.SOCK_STREAM, unix.SOCK_DGRAM, unix.SOCK_SEQPACKET:
		return nil
	}
	return unix.ESOCKTNOSUPPORT
}

// inDir runs fn with the working directory set to dir.
func (s *Server) inDir(dir *node, fn func() error) error {
	s.cwdMu.Lock()
	defer s.cwdMu.Unlock()
	if err := unix.Fchdir(dir.fd); err != nil {
		return err
	}
	err := fn()
	if cerr := unix.Fchdir(s.cwdFD); cerr != nil && err == nil {
		err = cerr
	}
	return err
}

// bind serves Tbind: a new socket bound to name in dir.
func (s *Server) bind(dir *node, m *proto.Tbind) (any, error) {
	if !s.hostBind {
		return nil, unix.EPERM
	}
	if err := checkSockType(m.SockType); err != nil {
		return nil, err
	}
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	if len(m.Name) > sunPathMax {
		return nil, unix.ENAMETOOLONG
	}
	fd, err := unix.Socket(unix.AF_UNIX, int(m.SockType)|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	err = s.inDir(dir, func() error {
		return unix.Bind(fd, &unix.SockaddrUnix{Name: m.Name})
	})
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	r, err := s.finishNew(dir, m.Name, unix.S_IFSOCK, m.Mode&07777, m.UID, m.GID, -1)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	r.fd = fd
	return r, nil
}

// connect serves Tconnect: a new socket connected to the socket file name
// in dir.
func (s *Server) connect(dir *node, m *proto.Tconnect) (any, error) {
	if !s.hostConnect {
		return nil, unix.EPERM
	}
	if err := checkSockType(m.SockType); err != nil {
		return nil, err
	}
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	if len(m.Name) > sunPathMax {
		return nil, unix.ENAMETOOLONG
	}
	var st unix.Stat_t
	if err := unix.Fstatat(dir.fd, m.Name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return nil, unix.ECONNREFUSED
	}
	// Non-blocking, so a full backlog cannot stall the gofer under cwdMu.
	fd, err := unix.Socket(unix.AF_UNIX, int(m.SockType)|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	err = s.inDir(dir, func() error {
		return unix.Connect(fd, &unix.SockaddrUnix{Name: m.Name})
	})
	if err == nil {
		_, err = unix.FcntlInt(uintptr(fd), unix.F_SETFL, 0)
	}
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &proto.Rconnect{FD: fd}, nil
}
