package unix

import (
	sys "golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/socket"
)

// Out-of-band data on stream sockets (Linux 5.15+'s CONFIG_AF_UNIX_OOB).
//
// send(MSG_OOB) queues all but the last byte as ordinary data and the
// last byte as a message of its own, which becomes the receiver's urgent
// message (Socket.oob); a newer one replaces it, and the older byte is
// ordinary data from then on. recv(MSG_OOB) takes the urgent byte and
// leaves its message, empty, in the queue. Ordinary reads
// (recvStreamOnce) treat both as marks:
//
//   - an urgent byte stops a read that has read something; a read that
//     starts at it drops it (reads it, with SO_OOBINLINE), the urgent
//     byte being gone either way, and goes on;
//   - an empty message stops a read that has read something when no
//     urgent byte waits; otherwise the read drops it (a peek skips it).
//
// SIOCATMARK says whether the next read starts at a mark, POLLPRI that an
// urgent byte waits; each urgent byte sends SIGURG to the owner of the
// receiver's file (F_SETOWN). Sockets connected to host sockets refuse
// MSG_OOB (EOPNOTSUPP).

// oobInline reports SO_OOBINLINE.
func (s *Socket) oobInline() bool {
	v, ok := s.opts.Get(sys.SO_OOBINLINE)
	return ok && len(v) >= 4 && v[0]|v[1]|v[2]|v[3] != 0
}

// recvOOB implements recv(MSG_OOB): EOPNOTSUPP but on stream sockets,
// EINVAL with SO_OOBINLINE or without an urgent byte.
func (s *Socket) recvOOB(dst []byte, peek bool) (socket.RecvResult, error) {
	if s.typ != sys.SOCK_STREAM || s.hostConnOf() != nil {
		return socket.RecvResult{}, sys.EOPNOTSUPP
	}
	inline := s.oobInline()
	s.mu.Lock()
	m := s.oob
	if s.state != stateConnected || inline || m == nil || m.unread() == 0 {
		s.mu.Unlock()
		return socket.RecvResult{}, sys.EINVAL
	}
	var res socket.RecvResult
	res.N = copy(dst, m.data[m.off:])
	res.MsgLen = res.N
	res.Flags |= sys.MSG_OOB
	if !peek {
		m.off = len(m.data)
		s.oob = nil
	}
	s.mu.Unlock()
	if !peek {
		// The empty message's overhead goes when a read drops it.
		m.from.uncharge(1)
	}
	return res, nil
}

// atMark implements SIOCATMARK: whether the next read starts at an
// urgent byte, or at a taken one's place with no other urgent byte
// waiting or the waiting one next.
func (s *Socket) atMark() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.recv.len() == 0 {
		return false
	}
	m := s.recv.msgs[0]
	var next *message
	if s.recv.len() > 1 {
		next = s.recv.msgs[1]
	}
	return m == s.oob || (m.unread() == 0 && (s.oob == nil || next == s.oob))
}

// urgentOwner is a file owner that takes SIGURG (the kernel's F_SETOWN
// owner).
type urgentOwner interface {
	// SendURG sends SIGURG, as Linux's send_sigurg.
	SendURG()
}

// sendURG signals the owner of s's file that urgent data arrived.
func (s *Socket) sendURG() {
	f := s.file.Load()
	if f == nil {
		return
	}
	if o, ok := f.Owner().(urgentOwner); ok {
		o.SendURG()
	}
}
