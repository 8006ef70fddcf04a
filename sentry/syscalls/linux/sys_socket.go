package linux

import (
	"encoding/binary"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/socket"
	unixsock "github.com/moat-sandbox/moat/sentry/socket/unix"
	"github.com/moat-sandbox/moat/sentry/syserror"
)

// Socket ABI sizes and flags (amd64).
const (
	sockTypeMask    = 0xf
	sockMax         = 11 // SOCK_MAX: types at or above are EINVAL
	sockaddrMax     = 128
	msghdrSize      = 56
	mmsghdrSize     = 64
	cmsghdrSize     = 16
	ucredSize       = 12
	afMax           = 46 // NPROTO
	maxOptLen       = 1 << 16
	maxSocketBuffer = 4 << 20
)

// unixNamespaces maps each kernel to its sandbox's Unix socket names.
var unixNamespaces sync.Map // *kernel.Kernel -> *unixsock.Namespace

func unixNamespace(t *kernel.Task) *unixsock.Namespace {
	if ns, ok := unixNamespaces.Load(t.Kernel()); ok {
		return ns.(*unixsock.Namespace)
	}
	ns, _ := unixNamespaces.LoadOrStore(t.Kernel(), unixsock.NewNamespace())
	return ns.(*unixsock.Namespace)
}

// sockFile returns the socket open at fd: EBADF, or ENOTSOCK for another
// file.
func sockFile(t *kernel.Task, fd int32) (*fs.FileDescription, socket.Socket, error) {
	f, err := vfsIOFile(t, fd)
	if err != nil {
		return nil, nil, err
	}
	s := socket.FromFile(f)
	if s == nil {
		f.DecRef()
		return nil, nil, unix.ENOTSOCK
	}
	return f, s, nil
}

// sockErr maps an interrupted wait to ERESTARTSYS, or to EINTR when the
// socket has a timeout for the direction (SO_SNDTIMEO if send, else
// SO_RCVTIMEO), as Linux's sock_intr_errno. Only then does it look at
// the timeouts.
func sockErr(t *kernel.Task, s socket.Socket, err error, send bool) error {
	if err != syserror.ErrInterrupted {
		return err
	}
	rcv, snd := timeouts(t, s)
	if send && snd != 0 || !send && rcv != 0 {
		return unix.EINTR
	}
	return syserror.ERESTARTSYS
}

// timeouts returns SO_RCVTIMEO and SO_SNDTIMEO of s, zero if it has none.
func timeouts(t *kernel.Task, s socket.Socket) (rcv, snd socket.Timeout) {
	if tk, ok := s.(socket.TimeoutKeeper); ok {
		return tk.Timeouts()
	}
	get := func(name int) socket.Timeout {
		b, err := s.GetSockOpt(t, unix.SOL_SOCKET, name, 16)
		if err != nil || len(b) < 16 {
			return 0
		}
		return socket.Timeout(time.Duration(int64(le64(b)))*time.Second + time.Duration(int64(le64(b[8:])))*time.Microsecond)
	}
	return get(unix.SO_RCVTIMEO), get(unix.SO_SNDTIMEO)
}

// checkSockType splits socket(2)'s type into the type and its flags.
func checkSockType(typ int32) (int, uint32, error) {
	flags := typ &^ sockTypeMask
	if flags&^(unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC) != 0 {
		return 0, 0, unix.EINVAL
	}
	return int(typ & sockTypeMask), uint32(flags), nil
}

// newUnixType checks socket(2)'s arguments for AF_UNIX and returns the
// type: SOCK_RAW is a datagram socket, as on Linux.
func newUnixType(typ int, protocol int32) (int, error) {
	if typ >= sockMax {
		return 0, unix.EINVAL
	}
	if protocol != 0 && protocol != unix.AF_UNIX {
		return 0, unix.EPROTONOSUPPORT
	}
	if typ == unix.SOCK_RAW {
		typ = unix.SOCK_DGRAM
	}
	if !unixsock.ValidType(typ) {
		return 0, unix.ESOCKTNOSUPPORT
	}
	return typ, nil
}

// Socket implements socket(2).
func Socket(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	domain, typ, protocol := a[0].Int(), a[1].Int(), a[2].Int()
	base, flags, err := checkSockType(typ)
	if err != nil {
		return 0, err
	}
	if domain != unix.AF_UNIX {
		if domain < 0 || domain >= afMax {
			return 0, unix.EAFNOSUPPORT
		}
		t.Log().Info("socket: address family not supported", "family", domain)
		return 0, unix.EAFNOSUPPORT
	}
	base, err = newUnixType(base, protocol)
	if err != nil {
		return 0, err
	}
	f := unixsock.New(t, unixNamespace(t), base, flags&unix.SOCK_NONBLOCK)
	defer f.DecRef()
	fd, err := t.FDTable().NewFD(0, f, fs.FDFlags{CloseOnExec: flags&unix.SOCK_CLOEXEC != 0}, vfsNoFile(t))
	return uintptr(fd), err
}

// Socketpair implements socketpair(2).
func Socketpair(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	domain, typ, protocol, addr := a[0].Int(), a[1].Int(), a[2].Int(), a[3].Pointer()
	base, flags, err := checkSockType(typ)
	if err != nil {
		return 0, err
	}
	switch domain {
	case unix.AF_UNIX:
	case unix.AF_INET, unix.AF_INET6, unix.AF_NETLINK:
		// These families exist on Linux but have no socketpair.
		if base >= sockMax {
			return 0, unix.EINVAL
		}
		return 0, unix.EOPNOTSUPP
	default:
		return 0, unix.EAFNOSUPPORT
	}
	base, err = newUnixType(base, protocol)
	if err != nil {
		return 0, err
	}
	x, y := unixsock.NewPair(t, unixNamespace(t), base, flags&unix.SOCK_NONBLOCK)
	defer x.DecRef()
	defer y.DecRef()
	fds, err := t.FDTable().NewFDs(0, []*fs.FileDescription{x, y}, fs.FDFlags{CloseOnExec: flags&unix.SOCK_CLOEXEC != 0}, vfsNoFile(t))
	if err != nil {
		return 0, err
	}
	var b [8]byte
	putLE32(b[0:], uint32(fds[0]))
	putLE32(b[4:], uint32(fds[1]))
	if _, err := t.CopyOutBytes(addr, b[:]); err != nil {
		t.FDTable().Remove(fds[0])
		t.FDTable().Remove(fds[1])
		return 0, unix.EFAULT
	}
	return 0, nil
}

// copyInSockaddr reads a socket address of addrlen bytes.
func copyInSockaddr(t *kernel.Task, addr uintptr, addrlen int32) ([]byte, error) {
	if addrlen < 0 || addrlen > sockaddrMax {
		return nil, unix.EINVAL
	}
	b := make([]byte, addrlen)
	if addrlen > 0 {
		if _, err := t.CopyInBytes(addr, b); err != nil {
			return nil, unix.EFAULT
		}
	}
	return b, nil
}

// copyOutSockaddr writes a socket address to addr, cut to the length at
// lenAddr, and stores its full length there (move_addr_to_user).
func copyOutSockaddr(t *kernel.Task, sa []byte, addr, lenAddr uintptr) error {
	if addr == 0 {
		return nil
	}
	l, err := copyInUint32(t, lenAddr)
	if err != nil {
		return unix.EFAULT
	}
	if int32(l) < 0 {
		return unix.EINVAL
	}
	n := min(int(l), len(sa))
	if n > 0 {
		if _, err := t.CopyOutBytes(addr, sa[:n]); err != nil {
			return unix.EFAULT
		}
	}
	if err := copyOutUint32(t, lenAddr, uint32(len(sa))); err != nil {
		return unix.EFAULT
	}
	return nil
}

// Bind implements bind(2).
func Bind(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	f, s, err := sockFile(t, a[0].Int())
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	sa, err := copyInSockaddr(t, a[1].Pointer(), a[2].Int())
	if err != nil {
		return 0, err
	}
	return 0, s.Bind(t, sa)
}

// Listen implements listen(2).
func Listen(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	f, s, err := sockFile(t, a[0].Int())
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	return 0, s.Listen(t, int(a[1].Int()))
}

// accept4 is accept and accept4.
func accept4(t *kernel.Task, fd int32, addr, lenAddr uintptr, flags int32) (uintptr, error) {
	if flags&^(unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC) != 0 {
		return 0, unix.EINVAL
	}
	f, s, err := sockFile(t, fd)
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	nf, peer, err := s.Accept(t, uint32(flags&unix.SOCK_NONBLOCK), !f.NonBlocking())
	if err != nil {
		return 0, sockErr(t, s, err, false)
	}
	defer nf.DecRef()
	if err := copyOutSockaddr(t, peer, addr, lenAddr); err != nil {
		return 0, err
	}
	nfd, err := t.FDTable().NewFD(0, nf, fs.FDFlags{CloseOnExec: flags&unix.SOCK_CLOEXEC != 0}, vfsNoFile(t))
	return uintptr(nfd), err
}

// Accept implements accept(2).
func Accept(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return accept4(t, a[0].Int(), a[1].Pointer(), a[2].Pointer(), 0)
}

// Accept4 implements accept4(2).
func Accept4(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return accept4(t, a[0].Int(), a[1].Pointer(), a[2].Pointer(), a[3].Int())
}

// Connect implements connect(2).
func Connect(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	f, s, err := sockFile(t, a[0].Int())
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	sa, err := copyInSockaddr(t, a[1].Pointer(), a[2].Int())
	if err != nil {
		return 0, err
	}
	return 0, sockErr(t, s, s.Connect(t, sa, !f.NonBlocking()), true)
}

// sockName is getsockname and getpeername.
func sockName(t *kernel.Task, a arch.SyscallArguments, peer bool) (uintptr, error) {
	f, s, err := sockFile(t, a[0].Int())
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	var sa []byte
	if peer {
		sa, err = s.PeerName(t)
	} else {
		sa, err = s.SockName(t)
	}
	if err != nil {
		return 0, err
	}
	if a[1].Pointer() == 0 {
		return 0, unix.EFAULT
	}
	return 0, copyOutSockaddr(t, sa, a[1].Pointer(), a[2].Pointer())
}

// Getsockname implements getsockname(2).
func Getsockname(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return sockName(t, a, false)
}

// Getpeername implements getpeername(2).
func Getpeername(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return sockName(t, a, true)
}

// Shutdown implements shutdown(2).
func Shutdown(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	f, s, err := sockFile(t, a[0].Int())
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	return 0, s.Shutdown(t, int(a[1].Int()))
}

// Getsockopt implements getsockopt(2).
func Getsockopt(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	f, s, err := sockFile(t, a[0].Int())
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	level, name, valAddr, lenAddr := int(a[1].Int()), int(a[2].Int()), a[3].Pointer(), a[4].Pointer()
	l, err := copyInUint32(t, lenAddr)
	if err != nil {
		return 0, unix.EFAULT
	}
	if int32(l) < 0 {
		return 0, unix.EINVAL
	}
	v, err := s.GetSockOpt(t, level, name, int(l))
	if err != nil {
		return 0, err
	}
	n := min(int(l), len(v))
	if n > 0 {
		if _, err := t.CopyOutBytes(valAddr, v[:n]); err != nil {
			return 0, unix.EFAULT
		}
	}
	return 0, copyOutUint32(t, lenAddr, uint32(n))
}

// Setsockopt implements setsockopt(2).
func Setsockopt(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	f, s, err := sockFile(t, a[0].Int())
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	level, name, valAddr, l := int(a[1].Int()), int(a[2].Int()), a[3].Pointer(), a[4].Int()
	if l < 0 {
		return 0, unix.EINVAL
	}
	v := make([]byte, min(int(l), maxOptLen))
	if len(v) > 0 {
		if _, err := t.CopyInBytes(valAddr, v); err != nil {
			return 0, unix.EFAULT
		}
	}
	return 0, s.SetSockOpt(t, level, name, v)
}

// Sendto implements sendto(2).
func Sendto(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	fd, buf, n, flags, addr, addrlen := a[0].Int(), a[1].Pointer(), a[2].Uint64(), int(a[3].Int()), a[4].Pointer(), a[5].Int()
	f, s, err := sockFile(t, fd)
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	var to []byte
	if addr != 0 && addrlen != 0 {
		if to, err = copyInSockaddr(t, addr, addrlen); err != nil {
			return 0, err
		}
	} else if addrlen < 0 {
		return 0, unix.EINVAL
	}
	iovs := []iovec{{buf, min(n, maxRWCount)}}
	if n > 0 && (buf >= arch.MaxUserAddress || n > arch.MaxUserAddress-uint64(buf)) {
		return 0, unix.EFAULT
	}
	return sendIovecs(t, f, s, iovs, to, socket.ControlMessages{}, flags)
}

// Recvfrom implements recvfrom(2).
func Recvfrom(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	fd, buf, n, flags, addr, lenAddr := a[0].Int(), a[1].Pointer(), a[2].Uint64(), int(a[3].Int()), a[4].Pointer(), a[5].Pointer()
	f, s, err := sockFile(t, fd)
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	iovs := []iovec{{buf, min(n, maxRWCount)}}
	res, err := recvIovecs(t, f, s, iovs, flags, addr != 0)
	if err != nil {
		return 0, err
	}
	defer res.Control.Release()
	if addr != 0 {
		if err := copyOutSockaddr(t, res.From, addr, lenAddr); err != nil {
			return 0, err
		}
	}
	return recvCount(s, res, flags), nil
}

// recvCount is recv's return value: the full length of a datagram with
// MSG_TRUNC.
func recvCount(s socket.Socket, res socket.RecvResult, flags int) uintptr {
	if flags&unix.MSG_TRUNC != 0 && s.Type() != unix.SOCK_STREAM {
		return uintptr(res.MsgLen)
	}
	return uintptr(res.N)
}

// oobSocket reports whether s takes MSG_OOB: Unix stream sockets do
// (Linux 5.15+), the others say EOPNOTSUPP.
func oobSocket(s socket.Socket) bool {
	return s.Family() == unix.AF_UNIX && s.Type() == unix.SOCK_STREAM
}

// sendFlags are the send flags Unix sockets accept; MSG_OOB is
// EOPNOTSUPP but on stream sockets.
const sendFlagsIgnored = unix.MSG_DONTROUTE | unix.MSG_EOR | unix.MSG_MORE | unix.MSG_CONFIRM | unix.MSG_FASTOPEN | unix.MSG_ZEROCOPY

// sendIovecs sends the application's iovs on s.
//
// The rights of ctl go to the socket, which releases them if it does not
// keep them.
func sendIovecs(t *kernel.Task, f *fs.FileDescription, s socket.Socket, iovs []iovec, to []byte, ctl socket.ControlMessages, flags int) (uintptr, error) {
	if flags&unix.MSG_OOB != 0 && !oobSocket(s) {
		ctl.Release()
		return 0, unix.EOPNOTSUPP
	}
	o := socket.SendOptions{
		Flags: flags, To: to, Control: ctl,
		Blocking: !f.NonBlocking() && flags&unix.MSG_DONTWAIT == 0,
	}
	if c := t.Credentials(); !c.HasCapability(unix.CAP_SYS_ADMIN) && !c.HasCapability(unix.CAP_SYS_RESOURCE) {
		o.MaxInflight = int(min(vfsNoFile(t), 1<<30))
	}
	total := iovTotal(iovs)
	cur := iovCursor{iovs: iovs}
	stream := s.Type() == unix.SOCK_STREAM
	bp := rwBufs.Get().(*[]byte)
	defer rwBufs.Put(bp)
	if !stream {
		// One record: the socket copies it, so the pooled buffer serves
		// all but records larger than it. Linux raises no SIGPIPE for
		// datagram or seqpacket sockets.
		if total > maxSocketBuffer {
			ctl.Release()
			return 0, unix.EMSGSIZE
		}
		buf := (*bp)[:min(total, uint64(len(*bp)))]
		if total > uint64(len(buf)) {
			buf = make([]byte, total)
		}
		if _, err := cur.copyIn(t, buf); err != nil {
			ctl.Release()
			return 0, err
		}
		n, err := s.SendMsg(t, buf, o)
		return uintptr(n), sockErr(t, s, err, true)
	}
	var done uint64
	for first := true; first || done < total; first = false {
		buf := (*bp)[:min(total-done, rwChunk)]
		k, cerr := cur.copyIn(t, buf)
		n, err := s.SendMsg(t, buf[:k], o)
		o.Control.Rights = nil // the first send took them
		done += uint64(n)
		if err == unix.EPIPE && flags&unix.MSG_NOSIGNAL == 0 {
			t.SendSignal(kernel.NewSignalInfo(kernel.Signal(unix.SIGPIPE), kernel.SI_USER))
		}
		if err != nil {
			return vfsPartial(done, sockErr(t, s, err, true))
		}
		if cerr != nil {
			return vfsPartial(done, cerr)
		}
		if n < k || !o.Blocking && n < len(buf) {
			break
		}
	}
	return uintptr(done), nil
}

// recvIovecs receives into the application's iovs from s. The caller
// owns the references of the result's rights.
func recvIovecs(t *kernel.Task, f *fs.FileDescription, s socket.Socket, iovs []iovec, flags int, wantAddr bool) (socket.RecvResult, error) {
	if flags&unix.MSG_OOB != 0 && !oobSocket(s) {
		return socket.RecvResult{}, unix.EOPNOTSUPP
	}
	total := iovTotal(iovs)
	size := min(total, maxSocketBuffer)
	if w := writablePrefix(t, iovs); w < size && s.Type() == unix.SOCK_STREAM {
		if w == 0 && size > 0 {
			return socket.RecvResult{}, unix.EFAULT
		}
		size = w
	}
	var buf []byte
	if size <= rwChunk {
		bp := rwBufs.Get().(*[]byte)
		defer rwBufs.Put(bp)
		buf = (*bp)[:size]
	} else {
		buf = make([]byte, size)
	}
	res, err := s.RecvMsg(t, buf, socket.RecvOptions{
		Flags:    flags,
		Blocking: !f.NonBlocking() && flags&unix.MSG_DONTWAIT == 0,
		WantAddr: wantAddr,
	})
	if err != nil {
		return res, sockErr(t, s, err, false)
	}
	cur := iovCursor{iovs: iovs}
	if _, err := cur.copyOut(t, buf[:res.N]); err != nil {
		res.Control.Release()
		return socket.RecvResult{}, err
	}
	return res, nil
}

// sockRead is read(2), readv(2) and preadv2(-1) on a socket: recvmsg(2)
// without flags but MSG_DONTWAIT for RWF_NOWAIT, so SO_RCVTIMEO applies,
// as Linux's sock_read_iter. Asking for nothing returns 0 at once.
func sockRead(t *kernel.Task, f *fs.FileDescription, s socket.Socket, iovs []iovec, noWait bool) (uintptr, error) {
	if iovTotal(iovs) == 0 {
		return 0, nil
	}
	flags := 0
	if noWait {
		flags = unix.MSG_DONTWAIT
	}
	res, err := recvIovecs(t, f, s, iovs, flags, false)
	if err != nil {
		return 0, err
	}
	res.Control.Release()
	return uintptr(res.N), nil
}

// sockWrite is write(2), writev(2) and pwritev2(-1) on a socket:
// sendmsg(2) without flags but MSG_DONTWAIT for RWF_NOWAIT, as Linux's
// sock_write_iter: SO_SNDTIMEO applies, and only stream sockets raise
// SIGPIPE.
func sockWrite(t *kernel.Task, f *fs.FileDescription, s socket.Socket, iovs []iovec, noWait bool) (uintptr, error) {
	flags := 0
	if noWait {
		flags = unix.MSG_DONTWAIT
	}
	return sendIovecs(t, f, s, iovs, nil, socket.ControlMessages{}, flags)
}

// msghdr is struct msghdr.
type msghdr struct {
	name       uintptr
	namelen    uint32
	iov        uintptr
	iovlen     uint64
	control    uintptr
	controllen uint64
	flags      int32
}

func copyInMsghdr(t *kernel.Task, addr uintptr) (msghdr, error) {
	var b [msghdrSize]byte
	if _, err := t.CopyInBytes(addr, b[:]); err != nil {
		return msghdr{}, unix.EFAULT
	}
	return msghdr{
		name: uintptr(le64(b[0:])), namelen: le32(b[8:]), iov: uintptr(le64(b[16:])),
		iovlen: le64(b[24:]), control: uintptr(le64(b[32:])), controllen: le64(b[40:]),
		flags: int32(le32(b[48:])),
	}, nil
}

// parseControl reads the control messages of a sendmsg: SCM_RIGHTS and
// SCM_CREDENTIALS at SOL_SOCKET; other levels are ignored, as Linux's
// __scm_send does.
func parseControl(t *kernel.Task, b []byte) (socket.ControlMessages, error) {
	var c socket.ControlMessages
	for off := 0; off+cmsghdrSize <= len(b); {
		clen := le64(b[off:])
		if clen < cmsghdrSize || clen > uint64(len(b)-off) {
			c.Release()
			return socket.ControlMessages{}, unix.EINVAL
		}
		level, typ := int32(le32(b[off+8:])), int32(le32(b[off+12:]))
		data := b[off+cmsghdrSize : off+int(clen)]
		off += int((clen + 7) &^ 7)
		if level != unix.SOL_SOCKET {
			continue
		}
		switch typ {
		case unix.SCM_RIGHTS:
			n := len(data) / 4
			if len(c.Rights)+n > unixsock.MaxRights {
				c.Release()
				return socket.ControlMessages{}, unix.EINVAL
			}
			for i := 0; i < n; i++ {
				rf := t.FDTable().GetFile(int32(le32(data[4*i:])))
				if rf == nil {
					c.Release()
					return socket.ControlMessages{}, unix.EBADF
				}
				c.Rights = append(c.Rights, rf)
			}
		case unix.SCM_CREDENTIALS:
			if clen != cmsghdrSize+ucredSize {
				c.Release()
				return socket.ControlMessages{}, unix.EINVAL
			}
			cr, err := sendCreds(t, int32(le32(data[0:])), le32(data[4:]), le32(data[8:]))
			if err != nil {
				c.Release()
				return socket.ControlMessages{}, err
			}
			if err := checkSendCreds(t, cr); err != nil {
				c.Release()
				return socket.ControlMessages{}, err
			}
			// The pid is the sender's namespace's; sockets keep root
			// ids. One that names nobody is ESRCH (Linux's
			// find_get_pid in __scm_send).
			if cr.PID = t.PIDToRoot(cr.PID); cr.PID == 0 {
				c.Release()
				return socket.ControlMessages{}, unix.ESRCH
			}
			c.Creds = &cr
		default:
			c.Release()
			return socket.ControlMessages{}, unix.EINVAL
		}
	}
	return c, nil
}

// sendCreds maps the ids of a struct ucred a task sends from its user
// namespace to global ones: EINVAL for one it does not map.
func sendCreds(t *kernel.Task, pid int32, uid, gid uint32) (socket.Credentials, error) {
	ns := t.UserNamespace()
	ku, uok := ns.MapToKUID(uid)
	kg, gok := ns.MapToKGID(gid)
	if !uok || !gok {
		return socket.Credentials{}, unix.EINVAL
	}
	return socket.Credentials{PID: pid, UID: ku, GID: kg}, nil
}

// checkSendCreds applies Linux's scm_check_creds: a task may claim its
// own process id and its real, effective or saved ids, or others with
// CAP_SYS_ADMIN, CAP_SETUID, CAP_SETGID.
func checkSendCreds(t *kernel.Task, cr socket.Credentials) error {
	c := t.Credentials()
	// Another pid takes CAP_SYS_ADMIN over the PID namespace's owner.
	if cr.PID != t.ThreadGroupID() && !c.HasCapabilityIn(unix.CAP_SYS_ADMIN, t.PIDNamespace().Owner()) {
		return unix.EPERM
	}
	if cr.UID != c.RealUID && cr.UID != c.EffectiveUID && cr.UID != c.SavedUID && !c.HasOwnCapability(unix.CAP_SETUID) {
		return unix.EPERM
	}
	if cr.GID != c.RealGID && cr.GID != c.EffectiveGID && cr.GID != c.SavedGID && !c.HasOwnCapability(unix.CAP_SETGID) {
		return unix.EPERM
	}
	return nil
}

// sendmsg sends one struct msghdr at addr.
func sendmsg(t *kernel.Task, f *fs.FileDescription, s socket.Socket, addr uintptr, flags int) (uintptr, error) {
	m, err := copyInMsghdr(t, addr)
	if err != nil {
		return 0, err
	}
	if m.iovlen > uioMaxIOV {
		return 0, unix.EMSGSIZE
	}
	var to []byte
	if m.name != 0 && m.namelen != 0 {
		if to, err = copyInSockaddr(t, m.name, int32(min(m.namelen, sockaddrMax))); err != nil {
			return 0, err
		}
	}
	if m.controllen > 1<<31-1 {
		return 0, unix.ENOBUFS
	}
	var ctl socket.ControlMessages
	if m.controllen >= cmsghdrSize {
		if m.controllen > maxOptLen {
			return 0, unix.ENOBUFS
		}
		cb := make([]byte, m.controllen)
		if _, err := t.CopyInBytes(m.control, cb); err != nil {
			return 0, unix.EFAULT
		}
		if ctl, err = parseControl(t, cb); err != nil {
			return 0, err
		}
	}
	iovs, err := copyInIovecs(t, m.iov, int32(m.iovlen))
	if err != nil {
		ctl.Release()
		return 0, err
	}
	return sendIovecs(t, f, s, iovs, to, ctl, flags)
}

// Sendmsg implements sendmsg(2).
func Sendmsg(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	f, s, err := sockFile(t, a[0].Int())
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	return sendmsg(t, f, s, a[1].Pointer(), int(a[2].Int()))
}

// Sendmmsg implements sendmmsg(2).
func Sendmmsg(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	f, s, err := sockFile(t, a[0].Int())
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	vec, vlen, flags := a[1].Pointer(), min(a[2].Uint(), uioMaxIOV), int(a[3].Int())
	var sent uint32
	for ; sent < vlen; sent++ {
		hdr := vec + uintptr(sent)*mmsghdrSize
		n, err := sendmsg(t, f, s, hdr, flags)
		if err == nil {
			err = copyOutUint32(t, hdr+msghdrSize, uint32(n))
		}
		if err != nil {
			if sent > 0 {
				break
			}
			return 0, err
		}
	}
	return uintptr(sent), nil
}

// recvmsg receives one struct msghdr at addr.
func recvmsg(t *kernel.Task, f *fs.FileDescription, s socket.Socket, addr uintptr, flags int) (uintptr, error) {
	m, err := copyInMsghdr(t, addr)
	if err != nil {
		return 0, err
	}
	if m.iovlen > uioMaxIOV {
		return 0, unix.EMSGSIZE
	}
	if int32(m.namelen) < 0 {
		return 0, unix.EINVAL
	}
	iovs, err := copyInIovecs(t, m.iov, int32(m.iovlen))
	if err != nil {
		return 0, err
	}
	res, err := recvIovecs(t, f, s, iovs, flags, m.name != 0)
	if err != nil {
		return 0, err
	}
	defer res.Control.Release()
	// Linux starts msg_flags with the call's MSG_CMSG_CLOEXEC.
	msgFlags := res.Flags | flags&unix.MSG_CMSG_CLOEXEC
	if m.name != 0 {
		n := min(int(m.namelen), len(res.From))
		if n > 0 {
			if _, err := t.CopyOutBytes(m.name, res.From[:n]); err != nil {
				return 0, unix.EFAULT
			}
		}
	}
	ctlLen, ctrunc, err := putControl(t, m.control, m.controllen, &res.Control, flags&unix.MSG_CMSG_CLOEXEC != 0)
	if err != nil {
		return 0, err
	}
	if ctrunc {
		msgFlags |= unix.MSG_CTRUNC
	}
	var b [8]byte
	putLE32(b[:], uint32(len(res.From)))
	if _, err := t.CopyOutBytes(addr+8, b[:4]); err != nil {
		return 0, unix.EFAULT
	}
	putLE64(b[:], ctlLen)
	if _, err := t.CopyOutBytes(addr+40, b[:]); err != nil {
		return 0, unix.EFAULT
	}
	putLE32(b[:], uint32(msgFlags))
	if _, err := t.CopyOutBytes(addr+48, b[:4]); err != nil {
		return 0, unix.EFAULT
	}
	return recvCount(s, res, flags), nil
}

// putControl writes the received control messages at addr (size bytes
// of room), installing SCM_RIGHTS descriptors, as Linux's put_cmsg and
// scm_detach_fds: it returns the bytes used and whether some control data
// did not fit (MSG_CTRUNC). Rights not installed are left in c.
func putControl(t *kernel.Task, addr uintptr, size uint64, c *socket.ControlMessages, cloexec bool) (uint64, bool, error) {
	var used uint64
	ctrunc := false
	put := func(typ int32, data []byte) error {
		if addr == 0 || size-used < cmsghdrSize {
			ctrunc = true
			return nil
		}
		clen := uint64(cmsghdrSize + len(data))
		b := make([]byte, clen)
		if room := size - used; clen > room {
			// Cut to the room left, and say so in cmsg_len too.
			ctrunc = true
			b, clen = b[:room], room
		}
		putLE64(b[0:], clen)
		putLE32(b[8:], unix.SOL_SOCKET)
		putLE32(b[12:], uint32(typ))
		copy(b[cmsghdrSize:], data)
		if _, err := t.CopyOutBytes(addr+uintptr(used), b); err != nil {
			return unix.EFAULT
		}
		used += min((clen+7)&^7, size-used)
		return nil
	}
	if c.Creds != nil {
		// The sender as the receiver's PID namespace numbers it.
		cr := *c.Creds
		cr.PID = t.PIDFromRoot(cr.PID)
		// And its ids as the receiver's user namespace sees them.
		ns := t.UserNamespace()
		cr.UID, cr.GID = auth.KUID(ns.UIDOf(cr.UID)), auth.KGID(ns.GIDOf(cr.GID))
		d := socket.EncodeCredentials(cr)
		if err := put(unix.SCM_CREDENTIALS, d); err != nil {
			return 0, false, err
		}
	}
	if len(c.Rights) > 0 {
		var fdmax uint64
		if addr != 0 && size-used > cmsghdrSize {
			fdmax = (size - used - cmsghdrSize) / 4
		}
		var fds []byte
		i := 0
		for ; i < len(c.Rights) && uint64(i) < fdmax; i++ {
			fd, err := t.FDTable().NewFD(0, c.Rights[i], fs.FDFlags{CloseOnExec: cloexec}, vfsNoFile(t))
			if err != nil {
				break
			}
			fds = binary.LittleEndian.AppendUint32(fds, uint32(fd))
		}
		if i > 0 {
			// fdmax left room for every installed descriptor, so put
			// writes the whole message.
			if err := put(unix.SCM_RIGHTS, fds); err != nil {
				return 0, false, err
			}
		}
		if i < len(c.Rights) {
			ctrunc = true
		}
	}
	return used, ctrunc, nil
}

// Recvmsg implements recvmsg(2).
func Recvmsg(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	f, s, err := sockFile(t, a[0].Int())
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	return recvmsg(t, f, s, a[1].Pointer(), int(a[2].Int()))
}

// Recvmmsg implements recvmmsg(2). As on Linux, the timeout is checked
// only after each message is received.
func Recvmmsg(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	f, s, err := sockFile(t, a[0].Int())
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	vec, vlen, flags, tsAddr := a[1].Pointer(), min(a[2].Uint(), uioMaxIOV), int(a[3].Int()), a[4].Pointer()
	var deadline time.Time
	if tsAddr != 0 {
		ts, err := copyInTimespec(t, tsAddr)
		if err != nil {
			return 0, unix.EFAULT
		}
		if !ts.valid() {
			return 0, unix.EINVAL
		}
		deadline = time.Now().Add(time.Duration(ts.nanos()))
	}
	var got uint32
	for ; got < vlen; got++ {
		hdr := vec + uintptr(got)*mmsghdrSize
		n, err := recvmsg(t, f, s, hdr, flags)
		if err == nil {
			err = copyOutUint32(t, hdr+msghdrSize, uint32(n))
		}
		if err != nil {
			if got > 0 {
				break
			}
			return 0, err
		}
		if flags&unix.MSG_WAITFORONE != 0 {
			flags |= unix.MSG_DONTWAIT
		}
		if tsAddr != 0 && !time.Now().Before(deadline) {
			got++
			break
		}
	}
	if tsAddr != 0 {
		left := max(time.Until(deadline), 0)
		if err := copyOutTimespec(t, tsAddr, timespecFromNanos(int64(left))); err != nil {
			return 0, unix.EFAULT
		}
	}
	return uintptr(got), nil
}
