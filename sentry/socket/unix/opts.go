package unix

import (
	sys "golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/socket"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

// GetSockOpt implements socket.Socket: the SOL_SOCKET options; other
// levels are EOPNOTSUPP, as Unix sockets have none.
func (s *Socket) GetSockOpt(ctx socket.Context, level, name int, _ int) ([]byte, error) {
	if level != sys.SOL_SOCKET {
		return nil, sys.EOPNOTSUPP
	}
	switch name {
	case sys.SO_TYPE:
		return socket.Int(s.typ), nil
	case sys.SO_DOMAIN:
		return socket.Int(sys.AF_UNIX), nil
	case sys.SO_PROTOCOL:
		return socket.Int(0), nil
	case sys.SO_ERROR:
		s.mu.Lock()
		err := s.err
		s.err = 0
		s.mu.Unlock()
		return socket.Int(int(err)), nil
	case sys.SO_ACCEPTCONN:
		s.mu.Lock()
		defer s.mu.Unlock()
		return socket.Bool(s.state == stateListening), nil
	case sys.SO_PEERCRED:
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.hasPeerCred {
			return socket.EncodeCredentials(socket.NoCredentials), nil
		}
		cr := s.peerCred
		cr.PID = pidForReader(ctx, cr.PID)
		// The peer's ids as the reader's user namespace sees them.
		if c := ctx.Credentials(); c != nil {
			cr.UID, cr.GID = auth.KUID(c.UserNamespace.UIDOf(cr.UID)), auth.KGID(c.UserNamespace.GIDOf(cr.GID))
		}
		return socket.EncodeCredentials(cr), nil
	}
	if v, ok := s.opts.Get(name); ok {
		return v, nil
	}
	return nil, sys.ENOPROTOOPT
}

// Timeouts implements socket.TimeoutKeeper.
func (s *Socket) Timeouts() (rcv, snd socket.Timeout) { return s.opts.Timeouts() }

// SetSockOpt implements socket.Socket.
func (s *Socket) SetSockOpt(ctx socket.Context, level, name int, val []byte) error {
	if level != sys.SOL_SOCKET {
		return sys.EOPNOTSUPP
	}
	ok, err := s.opts.Set(name, val, ctx.Credentials().HasCapability(sys.CAP_NET_ADMIN))
	if !ok {
		return sys.ENOPROTOOPT
	}
	if err == nil && (name == sys.SO_SNDBUF || name == sys.SO_SNDBUFFORCE) {
		s.queue.Notify(waiter.EventOut)
	}
	return err
}

// Ioctl implements fs.FileImpl: SIOCINQ (FIONREAD), SIOCOUTQ and
// SIOCATMARK.
func (s *Socket) Ioctl(ctx fs.Context, _ *fs.FileDescription, cmd uint32, arg uintptr) (uintptr, error) {
	var n int
	if h := s.hostConnOf(); h != nil {
		switch cmd {
		case sys.SIOCINQ:
			return h.file.Ioctl(ctx, cmd, arg)
		case sys.SIOCOUTQ:
			// The host's count is not reachable under the Sentry's
			// seccomp filter; nothing is queued on the sandbox side.
		default:
			return 0, sys.ENOTTY
		}
		if _, err := ctx.CopyOutBytes(arg, socket.Int(0)); err != nil {
			return 0, sys.EFAULT
		}
		return 0, nil
	}
	switch cmd {
	case sys.SIOCINQ:
		s.mu.Lock()
		switch {
		case s.state == stateListening:
			s.mu.Unlock()
			return 0, sys.EINVAL
		case s.typ == sys.SOCK_DGRAM:
			if s.recv.len() > 0 {
				n = len(s.recv.msgs[0].data)
			}
		default:
			n = s.recv.bytes()
		}
		s.mu.Unlock()
	case sys.SIOCOUTQ:
		// A listener answers 0, as on Linux.
		n = int(s.wmem.Load())
	case sys.SIOCATMARK:
		if s.atMark() {
			n = 1
		}
	default:
		return 0, sys.ENOTTY
	}
	b := socket.Int(n)
	if _, err := ctx.CopyOutBytes(arg, b); err != nil {
		return 0, sys.EFAULT
	}
	return 0, nil
}

// Readiness implements waiter.Waitable, as Linux's unix_poll and
// unix_dgram_poll.
func (s *Socket) Readiness(mask waiter.EventMask) waiter.EventMask {
	if h := s.hostConnOf(); h != nil {
		return h.file.Readiness(mask)
	}
	var r waiter.EventMask
	s.mu.Lock()
	if s.err != 0 {
		r |= waiter.EventErr
	}
	if s.rcvShutdown && s.sndShutdown {
		r |= waiter.EventHUp
	}
	if s.rcvShutdown {
		r |= waiter.EventRdHUp | waiter.EventIn | waiter.EventRdNorm
	}
	if s.oob != nil {
		r |= waiter.EventPri
	}
	listening := s.state == stateListening
	if s.recv.len() > 0 || (listening && len(s.acceptQ) > 0) || (listening && s.hostL.Load() != nil && s.hostL.Load().pending()) {
		r |= waiter.EventIn | waiter.EventRdNorm
	}
	if s.connectionOriented() && s.state == stateUnconnected {
		r |= waiter.EventHUp
	}
	writable := s.state != stateListening && s.wmem.Load()*4 <= int64(s.opts.SndBuf())
	peer := s.peer
	s.mu.Unlock()
	if writable && !s.connectionOriented() && peer != nil && peer != s && mask&(waiter.EventOut|waiter.EventWrNorm|waiter.EventWrBand) != 0 {
		peer.mu.Lock()
		if peer.peer != s && peer.recv.len() > MaxDgramQueue {
			writable = false
		}
		peer.mu.Unlock()
	}
	if writable {
		r |= waiter.EventOut | waiter.EventWrNorm | waiter.EventWrBand
	}
	return r & mask
}

// EventRegister implements waiter.Waitable.
func (s *Socket) EventRegister(e *waiter.Entry) { s.queue.EventRegister(e) }

// EventUnregister implements waiter.Waitable.
func (s *Socket) EventUnregister(e *waiter.Entry) { s.queue.EventUnregister(e) }
