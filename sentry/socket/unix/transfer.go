package unix

import (
	sys "golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/socket"
	"github.com/moat-sandbox/moat/sentry/syserror"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

// message is one send: its bytes (a stream reader may take a prefix),
// its sender and the sender's credentials, and SCM_RIGHTS files.
type message struct {
	data []byte
	off  int
	from *Socket
	// creds are the sender's, recorded when the sender gave them or
	// either end had SO_PASSCRED at the send (hasCreds), as Linux's
	// maybe_add_creds.
	creds    socket.Credentials
	hasCreds bool
	rights   []*fs.FileDescription
	// rightsUID is the user the rights are counted against in flight.
	rightsUID auth.KUID
}

func (m *message) unread() int { return len(m.data) - m.off }

// overflowID is the kernel's overflowuid and overflowgid.
const overflowID = 65534

// recvCreds returns what SCM_CREDENTIALS reports for m: pid 0 and the
// overflow ids when no credentials were recorded.
func (m *message) recvCreds() socket.Credentials {
	if !m.hasCreds {
		return socket.Credentials{PID: 0, UID: overflowID, GID: overflowID}
	}
	return m.creds
}

// msgOverhead is what each queued message costs its sender's send
// buffer besides its bytes, as a Linux skb's truesize exceeds its data: it
// bounds the queue of tiny or empty messages.
const msgOverhead = 512

// discard drops an unread message: its rights go, its bytes and overhead
// no longer count against the sender.
func (m *message) discard(ns *Namespace) {
	ns.uncountRights(m.rightsUID, len(m.rights))
	for _, f := range m.rights {
		f.DecRef()
	}
	m.rights = nil
	n := m.unread()
	m.off = len(m.data)
	m.from.uncharge(n + msgOverhead)
}

// uncharge gives n bytes back to the send buffer.
func (s *Socket) uncharge(n int) {
	s.wmem.Add(-int64(n))
	s.queue.Notify(waiter.EventOut | waiter.EventWrNorm)
}

// msgQueue is a receive queue.
type msgQueue struct {
	msgs []*message
}

func (q *msgQueue) len() int { return len(q.msgs) }

func (q *msgQueue) push(m *message) { q.msgs = append(q.msgs, m) }

func (q *msgQueue) pop() {
	q.msgs[0] = nil
	q.msgs = q.msgs[1:]
}

func (q *msgQueue) drain() []*message {
	m := q.msgs
	q.msgs = nil
	return m
}

// bytes returns the unread bytes of every message.
func (q *msgQueue) bytes() int {
	n := 0
	for _, m := range q.msgs {
		n += m.unread()
	}
	return n
}

// countRights counts n descriptors in flight for uid: ETOOMANYREFS above
// limit (0: no limit).
func (ns *Namespace) countRights(uid auth.KUID, n, limit int) error {
	if n == 0 {
		return nil
	}
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if limit > 0 && ns.inflight[uid]+n > limit {
		return sys.ETOOMANYREFS
	}
	ns.inflight[uid] += n
	return nil
}

func (ns *Namespace) uncountRights(uid auth.KUID, n int) {
	if n == 0 {
		return
	}
	ns.mu.Lock()
	if ns.inflight[uid] -= n; ns.inflight[uid] <= 0 {
		delete(ns.inflight, uid)
	}
	ns.mu.Unlock()
}

// block runs try until it returns something other than ErrWouldBlock,
// waiting between tries for mask on the queues if blocking.
func block(ctx fs.Context, q *waiter.Queue, mask waiter.EventMask, blocking bool, timeout socket.Timeout, try func() error, more ...*waiter.Queue) error {
	err := try()
	if err != syserror.ErrWouldBlock || !blocking {
		return err
	}
	e, ch := waiter.NewChannelEntry(mask)
	q.EventRegister(e)
	defer q.EventUnregister(e)
	for _, mq := range more {
		me := &waiter.Entry{Mask: mask, Callback: e.Callback}
		mq.EventRegister(me)
		defer mq.EventUnregister(me)
	}
	deadline, hasDeadline := timeout.Deadline()
	for {
		if err := try(); err != syserror.ErrWouldBlock {
			return err
		}
		if err := ctx.BlockOn(ch, deadline, hasDeadline); err != nil {
			if err == sys.ETIMEDOUT {
				return syserror.ErrWouldBlock
			}
			return err
		}
	}
}

// SendMsg implements socket.Socket.
func (s *Socket) SendMsg(ctx socket.Context, data []byte, o socket.SendOptions) (int, error) {
	return s.send(ctx, data, o)
}

func (s *Socket) send(ctx fs.Context, data []byte, o socket.SendOptions) (int, error) {
	creds := credsOf(ctx)
	if o.Control.Creds != nil {
		creds = *o.Control.Creds
	}
	// Rights the send does not keep go now.
	defer o.Control.Release()
	if err := s.autobindIfPassCred(); err != nil {
		return 0, err
	}
	if o.Flags&sys.MSG_OOB != 0 && (s.typ != sys.SOCK_STREAM || len(data) == 0 || s.hostConnOf() != nil) {
		return 0, sys.EOPNOTSUPP
	}
	switch s.typ {
	case sys.SOCK_STREAM:
		if o.To != nil {
			s.mu.Lock()
			connected := s.state == stateConnected
			s.mu.Unlock()
			if connected {
				return 0, sys.EISCONN
			}
			return 0, sys.EOPNOTSUPP
		}
		if h := s.hostConnOf(); h != nil {
			return h.send(ctx, s, data, &o)
		}
		return s.sendStream(ctx, data, &o, creds)
	case sys.SOCK_SEQPACKET:
		if h := s.hostConnOf(); h != nil {
			return h.send(ctx, s, data, &o)
		}
		return s.sendPacket(ctx, nil, data, &o, creds)
	default:
		if h := s.hostConnOf(); h != nil && o.To == nil {
			return h.send(ctx, s, data, &o)
		}
		var to *Socket
		if o.To != nil {
			a, err := parseAddress(o.To, false)
			if err != nil {
				return 0, err
			}
			sc, ok := ctx.(socket.Context)
			if !ok {
				return 0, sys.EINVAL
			}
			if to, err = s.find(sc, a); err != nil {
				return 0, err
			}
		}
		return s.sendPacket(ctx, to, data, &o, creds)
	}
}

// takeRights moves the rights of o into a message, counting them in
// flight.
func (s *Socket) takeRights(ctx fs.Context, m *message, o *socket.SendOptions) error {
	if len(o.Control.Rights) == 0 {
		return nil
	}
	uid := ctx.Credentials().EffectiveUID
	if err := s.ns.countRights(uid, len(o.Control.Rights), o.MaxInflight); err != nil {
		return err
	}
	m.rights, m.rightsUID = o.Control.Rights, uid
	o.Control.Rights = nil
	return nil
}

// sendStream sends on a stream socket, as much as the send buffer takes
// each time. With MSG_OOB the last byte goes alone, as the peer's urgent
// byte (oob.go).
func (s *Socket) sendStream(ctx fs.Context, data []byte, o *socket.SendOptions, creds socket.Credentials) (int, error) {
	sent := 0
	oob := o.Flags&sys.MSG_OOB != 0
	try := func() error {
		s.mu.Lock()
		peer := s.peer
		if s.state != stateConnected || peer == nil {
			s.mu.Unlock()
			return sys.ENOTCONN
		}
		if s.sndShutdown {
			s.mu.Unlock()
			return sys.EPIPE
		}
		s.mu.Unlock()
		if sent == len(data) {
			return nil // a zero-length send
		}
		room := s.opts.SndBuf() - int(s.wmem.Load())
		if room <= 0 {
			return syserror.ErrWouldBlock
		}
		n := min(room, len(data)-sent)
		urgent := false
		if oob {
			if sent < len(data)-1 {
				n = min(room, len(data)-1-sent)
			} else {
				n, urgent = 1, true
			}
		}
		m := &message{data: append([]byte(nil), data[sent:sent+n]...), from: s, creds: creds,
			hasCreds: o.Control.Creds != nil || s.opts.PassCred() || peer.opts.PassCred()}
		peer.mu.Lock()
		if peer.released || peer.rcvShutdown {
			peer.mu.Unlock()
			return sys.EPIPE
		}
		if sent == 0 {
			if err := s.takeRights(ctx, m, o); err != nil {
				peer.mu.Unlock()
				return err
			}
		}
		s.wmem.Add(int64(n + msgOverhead))
		peer.recv.push(m)
		ev := waiter.EventIn | waiter.EventRdNorm
		if urgent {
			peer.oob = m
			ev |= waiter.EventPri
		}
		peer.mu.Unlock()
		peer.queue.Notify(ev)
		if urgent {
			peer.sendURG()
		}
		sent += n
		if sent < len(data) {
			return syserror.ErrWouldBlock
		}
		return nil
	}
	err := block(ctx, &s.queue, waiter.EventOut, o.Blocking, s.opts.SndTimeout(), func() error {
		err := try()
		// The urgent byte follows its prefix at once if there is room.
		if err == syserror.ErrWouldBlock && oob && sent == len(data)-1 && s.opts.SndBuf() > int(s.wmem.Load()) {
			err = try()
		}
		return err
	})
	if sent > 0 {
		return sent, nil
	}
	return 0, err
}

// sendPacket sends one datagram or seqpacket record to to, or to the
// peer if to is nil.
func (s *Socket) sendPacket(ctx fs.Context, to *Socket, data []byte, o *socket.SendOptions, creds socket.Credentials) (int, error) {
	sndbuf := s.opts.SndBuf()
	if len(data) > sndbuf-32 {
		return 0, sys.EMSGSIZE
	}
	var more []*waiter.Queue
	if to != nil {
		more = append(more, &to.queue)
	} else {
		s.mu.Lock()
		if s.peer != nil {
			more = append(more, &s.peer.queue)
		}
		s.mu.Unlock()
	}
	err := block(ctx, &s.queue, waiter.EventOut, o.Blocking, s.opts.SndTimeout(), func() error {
		s.mu.Lock()
		if s.sndShutdown {
			s.mu.Unlock()
			return sys.EPIPE
		}
		dst := to
		if dst == nil {
			dst = s.peer
			if s.state != stateConnected || dst == nil {
				s.mu.Unlock()
				return sys.ENOTCONN
			}
		}
		connectedTo := s.peer == dst
		s.mu.Unlock()
		if int(s.wmem.Load()) >= sndbuf {
			return syserror.ErrWouldBlock
		}
		dst.mu.Lock()
		if dst.released {
			dst.mu.Unlock()
			if s.typ == sys.SOCK_SEQPACKET {
				return sys.EPIPE
			}
			if connectedTo {
				s.mu.Lock()
				if s.peer == dst {
					s.peer = nil
					s.state = stateUnconnected
				}
				s.mu.Unlock()
			}
			return sys.ECONNREFUSED
		}
		if s.typ == sys.SOCK_DGRAM && dst.peer != nil && dst.peer != s {
			dst.mu.Unlock()
			return sys.EPERM
		}
		if dst.rcvShutdown {
			dst.mu.Unlock()
			return sys.EPIPE
		}
		if s.typ == sys.SOCK_DGRAM && dst.peer != s && dst.recv.len() > MaxDgramQueue {
			dst.mu.Unlock()
			return syserror.ErrWouldBlock
		}
		m := &message{data: append([]byte(nil), data...), from: s, creds: creds,
			hasCreds: o.Control.Creds != nil || s.opts.PassCred() || dst.opts.PassCred()}
		if err := s.takeRights(ctx, m, o); err != nil {
			dst.mu.Unlock()
			return err
		}
		s.wmem.Add(int64(len(data) + msgOverhead))
		dst.recv.push(m)
		dst.mu.Unlock()
		dst.queue.Notify(waiter.EventIn | waiter.EventRdNorm)
		return nil
	}, more...)
	if err != nil {
		return 0, err
	}
	return len(data), nil
}

// RecvMsg implements socket.Socket.
func (s *Socket) RecvMsg(ctx socket.Context, dst []byte, o socket.RecvOptions) (socket.RecvResult, error) {
	return s.recvMsg(ctx, dst, o, o.Blocking)
}

// recvMsg is RecvMsg; waits says whether the caller waits when nothing
// is queued (read(2) waits outside, in fs.ReadBlocking).
func (s *Socket) recvMsg(ctx fs.Context, dst []byte, o socket.RecvOptions, waits bool) (socket.RecvResult, error) {
	if o.Flags&sys.MSG_OOB != 0 {
		return s.recvOOB(dst, o.Flags&sys.MSG_PEEK != 0)
	}
	if h := s.hostConnOf(); h != nil {
		return h.recv(ctx, s, dst, o)
	}
	var res socket.RecvResult
	var from *Socket
	peek := o.Flags&sys.MSG_PEEK != 0
	stream := s.typ == sys.SOCK_STREAM
	waitAll := stream && o.Flags&sys.MSG_WAITALL != 0 && !peek
	err := block(ctx, &s.queue, waiter.EventIn|waiter.EventRdHUp, o.Blocking, s.opts.RcvTimeout(), func() error {
		if !stream {
			return s.recvPacketOnce(dst, peek, waits, &res, &from)
		}
		n, stop, err := s.recvStreamOnce(dst[res.N:], peek, &res, &from)
		res.N += n
		switch {
		case err == syserror.ErrWouldBlock:
			if res.N > 0 && !waitAll {
				return nil
			}
			return err
		case err != nil:
			if res.N > 0 {
				return nil
			}
			return err
		case n == 0 || stop || !waitAll || res.N == len(dst):
			return nil
		}
		return syserror.ErrWouldBlock
	})
	if stream {
		res.MsgLen = res.N
		if res.N > 0 {
			err = nil
		}
	}
	if err != nil {
		res.Control.Release()
		return socket.RecvResult{}, err
	}
	if o.WantAddr && from != nil {
		res.From = from.boundAddr()
		if len(res.From) == 0 {
			res.From = nil
		}
	}
	return res, nil
}

// recvStreamOnce copies what a stream socket has queued into dst. stop
// says a control-message boundary ended the read.
func (s *Socket) recvStreamOnce(dst []byte, peek bool, res *socket.RecvResult, from **Socket) (n int, stop bool, err error) {
	type charge struct {
		s *Socket
		n int
	}
	var charges []charge
	s.mu.Lock()
	if s.state != stateConnected {
		s.mu.Unlock()
		return 0, false, sys.EINVAL
	}
	if s.recv.len() == 0 {
		defer s.mu.Unlock()
		if s.err != 0 {
			err, s.err = s.err, 0
			return 0, false, err
		}
		if s.rcvShutdown {
			return 0, false, nil
		}
		// Even a zero-length read waits for data, as Linux's target
		// of at least one byte has it.
		return 0, false, syserror.ErrWouldBlock
	}
	passCred := s.opts.PassCred()
	// SO_OOBINLINE matters only at an urgent byte: not looked up (a lock
	// and an allocation) on reads without one.
	inline := s.oob != nil && s.oobInline()
	for i := 0; i < len(s.recv.msgs) && n < len(dst); i++ {
		m := s.recv.msgs[i]
		if m.unread() == 0 {
			// A taken urgent byte's place (oob.go).
			if n > 0 && s.oob == nil {
				stop = true
				break
			}
			if !peek {
				s.recv.pop()
				i--
				charges = append(charges, charge{m.from, msgOverhead})
			}
			continue
		}
		if m == s.oob {
			if n > 0 {
				stop = true
				break
			}
			if !peek {
				s.oob = nil
				if !inline {
					m.off = len(m.data)
					s.recv.pop()
					i--
					charges = append(charges, charge{m.from, len(m.data) + msgOverhead})
					continue
				}
			} else if !inline {
				continue
			}
		}
		if passCred {
			if res.Control.Creds == nil {
				c := m.recvCreds()
				res.Control.Creds = &c
			} else if *res.Control.Creds != m.recvCreds() {
				stop = true
				break
			}
		}
		if *from == nil {
			*from = m.from
		}
		start := m.off
		k := copy(dst[n:], m.data[start:])
		n += k
		hadRights := len(m.rights) > 0
		if hadRights {
			s.takeMessageRights(m, peek, res)
		}
		if !peek {
			m.off += k
			if m.unread() == 0 {
				s.recv.pop()
				i--
				k += msgOverhead
			}
			charges = append(charges, charge{m.from, k})
		}
		if hadRights {
			stop = true
			break
		}
	}
	if n == 0 && !stop && len(dst) > 0 {
		// Only urgent bytes' places were queued: as an empty queue.
		switch {
		case s.err != 0:
			err, s.err = s.err, 0
		case !s.rcvShutdown:
			err = syserror.ErrWouldBlock
		}
	}
	s.mu.Unlock()
	for _, c := range charges {
		c.s.uncharge(c.n)
	}
	return n, stop, err
}

// takeMessageRights moves (or, peeking, duplicates) the rights of m into
// res.
//
// Preconditions: s.mu is held.
func (s *Socket) takeMessageRights(m *message, peek bool, res *socket.RecvResult) {
	if peek {
		for _, f := range m.rights {
			f.IncRef()
		}
		res.Control.Rights = append(res.Control.Rights, m.rights...)
		return
	}
	res.Control.Rights = append(res.Control.Rights, m.rights...)
	s.ns.uncountRights(m.rightsUID, len(m.rights))
	m.rights = nil
}

// recvPacketOnce takes one datagram or record. Once reception is shut
// down an empty queue reads as end of file, except that a datagram socket
// says EAGAIN to a caller that would not wait, as Linux has it.
func (s *Socket) recvPacketOnce(dst []byte, peek, blocking bool, res *socket.RecvResult, from **Socket) error {
	s.mu.Lock()
	if s.typ == sys.SOCK_SEQPACKET && s.state != stateConnected {
		s.mu.Unlock()
		return sys.ENOTCONN
	}
	if s.recv.len() == 0 {
		defer s.mu.Unlock()
		if s.err != 0 {
			err := s.err
			s.err = 0
			return err
		}
		if s.rcvShutdown && (blocking || s.typ == sys.SOCK_SEQPACKET) {
			return nil
		}
		return syserror.ErrWouldBlock
	}
	m := s.recv.msgs[0]
	res.N = copy(dst, m.data)
	res.MsgLen = len(m.data)
	if res.N < len(m.data) {
		res.Flags |= sys.MSG_TRUNC
	}
	if s.opts.PassCred() {
		c := m.recvCreds()
		res.Control.Creds = &c
	}
	s.takeMessageRights(m, peek, res)
	*from = m.from
	if !peek {
		s.recv.pop()
		m.off = len(m.data)
	}
	s.mu.Unlock()
	if !peek {
		m.from.uncharge(len(m.data) + msgOverhead)
		// A datagram sender may wait for room in this queue.
		s.queue.Notify(waiter.EventOut)
	}
	return nil
}

// Read implements fs.FileImpl: recv(2) without flags, never waiting.
func (s *Socket) Read(ctx fs.Context, fd *fs.FileDescription, dst []byte, _ int64) (int, error) {
	res, err := s.recvMsg(ctx, dst, socket.RecvOptions{}, !fd.NonBlocking())
	if err != nil {
		return 0, err
	}
	res.Control.Release()
	return res.N, nil
}

// Write implements fs.FileImpl: send(2) without flags, never waiting.
func (s *Socket) Write(ctx fs.Context, _ *fs.FileDescription, src []byte, _ int64) (int, error) {
	return s.send(ctx, src, socket.SendOptions{})
}
