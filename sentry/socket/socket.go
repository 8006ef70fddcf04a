// Package socket holds what every socket family shares: the Socket
// interface the syscall layer drives, socket files (their sockfs node,
// S_IFSOCK mode and "socket:[ino]" names), control messages (SCM_RIGHTS,
// SCM_CREDENTIALS) and the SOL_SOCKET option encodings.
//
// A family (sentry/socket/unix; later netstack and hostinet) implements
// Socket as the FileImpl of its files and makes them with NewFile. The
// syscall layer (sentry/syscalls/linux/sys_socket.go) decodes arguments,
// copies application memory in and out, installs received descriptors,
// and calls the Socket methods, which never touch application memory.
//
// Locks: Options.mu, a leaf; each family documents its own.
package socket

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// Context is what socket operations need from the calling task:
// fs.Context, its file system context (to resolve socket paths) and its
// process id (for SO_PEERCRED and SCM_CREDENTIALS). kernel.Task
// implements it.
type Context interface {
	fs.Context
	FSContext() *fs.FSContext
	ThreadGroupID() int32
}

// Socket is a socket file's implementation. Methods that may wait take
// blocking (false for O_NONBLOCK descriptions and MSG_DONTWAIT) and
// return syserror.ErrWouldBlock instead of waiting when it is false; an
// interrupted wait returns syserror.ErrInterrupted, a timed-out one
// (SO_RCVTIMEO, SO_SNDTIMEO) ErrWouldBlock.
type Socket interface {
	fs.FileImpl
	// Family, Type and Protocol are socket(2)'s arguments (Type without
	// SOCK_NONBLOCK and SOCK_CLOEXEC).
	Family() int
	Type() int
	Protocol() int
	// Bind binds the socket to the address (a struct sockaddr).
	Bind(ctx Context, addr []byte) error
	// Listen makes the socket accept connections.
	Listen(ctx Context, backlog int) error
	// Accept takes a pending connection and returns its new file, with
	// the open flags given (O_NONBLOCK), and the peer's address.
	Accept(ctx Context, flags uint32, blocking bool) (*fs.FileDescription, []byte, error)
	// Connect connects the socket to the address.
	Connect(ctx Context, addr []byte, blocking bool) error
	// Shutdown shuts down reception, transmission or both (SHUT_*).
	Shutdown(ctx Context, how int) error
	// SendMsg sends data with the options; it returns the count sent.
	SendMsg(ctx Context, data []byte, o SendOptions) (int, error)
	// RecvMsg receives into dst.
	RecvMsg(ctx Context, dst []byte, o RecvOptions) (RecvResult, error)
	// SockName and PeerName return the local and remote addresses.
	SockName(ctx Context) ([]byte, error)
	PeerName(ctx Context) ([]byte, error)
	// GetSockOpt returns the value of an option; optLen is the caller's
	// buffer size, which the value may be cut to by the caller.
	GetSockOpt(ctx Context, level, name int, optLen int) ([]byte, error)
	// SetSockOpt sets an option.
	SetSockOpt(ctx Context, level, name int, val []byte) error
}

// TimeoutKeeper is implemented by sockets that report SO_RCVTIMEO and
// SO_SNDTIMEO without encoding them (the syscall layer asks at every
// blocking call).
type TimeoutKeeper interface {
	Timeouts() (rcv, snd Timeout)
}

// SendOptions describe one sendmsg(2).
type SendOptions struct {
	// Flags are the MSG_* flags.
	Flags int
	// To is the destination address, nil for none.
	To []byte
	// Control carries the control messages; the socket takes over the
	// references of Control.Rights whatever the outcome.
	Control ControlMessages
	// Blocking says the call may wait.
	Blocking bool
	// MaxInflight is how many descriptors the sender's user may have in
	// flight in SCM_RIGHTS messages (RLIMIT_NOFILE), 0 for no limit
	// (CAP_SYS_ADMIN or CAP_SYS_RESOURCE).
	MaxInflight int
}

// RecvOptions describe one recvmsg(2).
type RecvOptions struct {
	// Flags are the MSG_* flags.
	Flags int
	// Blocking says the call may wait.
	Blocking bool
	// WantAddr asks for the sender's address.
	WantAddr bool
}

// RecvResult is what one recvmsg(2) got.
type RecvResult struct {
	// N is the count copied into dst.
	N int
	// MsgLen is the message's full length (for MSG_TRUNC on datagram
	// sockets); N for streams.
	MsgLen int
	// From is the sender's address (nil if unknown or unbound).
	From []byte
	// Flags are the msg_flags to report (MSG_TRUNC, MSG_CTRUNC...).
	Flags int
	// Control carries the received control messages; the caller owns
	// the references of Control.Rights.
	Control ControlMessages
}

// Credentials are the SO_PEERCRED and SCM_CREDENTIALS triple.
type Credentials struct {
	PID int32
	UID auth.KUID
	GID auth.KGID
}

// NoCredentials is what an unconnected socket's SO_PEERCRED reports.
var NoCredentials = Credentials{PID: 0, UID: auth.KUID(auth.NoID), GID: auth.KGID(auth.NoID)}

// ControlMessages are the control messages of one message.
type ControlMessages struct {
	// Rights are the files of SCM_RIGHTS, one reference each.
	Rights []*fs.FileDescription
	// Creds is SCM_CREDENTIALS, nil if absent.
	Creds *Credentials
}

// Release drops the references of the rights.
func (c *ControlMessages) Release() {
	for _, f := range c.Rights {
		f.DecRef()
	}
	c.Rights = nil
}

// Sockfs

// SockFSMagic is statfs's f_type for sockets.
const SockFSMagic = 0x534f434b

type sockFS struct{}

func (sockFS) StatFS(fs.Context) (fs.StatFS, error) {
	return fs.StatFS{Type: SockFSMagic, Bsize: 4096, Frsize: 4096, NameLen: fs.NameMax}, nil
}

var sockfs = fs.NewFilesystem("sockfs", sockFS{}, nil, false)

// node is the inode of one socket.
type node struct {
	ino   uint64
	uid   auth.KUID
	gid   auth.KGID
	ctime unix.Timespec
}

// Stat implements fs.Node: S_IFSOCK|0777, as Linux's sockfs inodes.
func (n *node) Stat(fs.Context) (fs.Stat, error) {
	return fs.Stat{
		Mode: unix.S_IFSOCK | 0o777, Nlink: 1, UID: n.uid, GID: n.gid, Ino: n.ino,
		Blksize: 4096, Atime: n.ctime, Mtime: n.ctime, Ctime: n.ctime,
	}, nil
}

// NewFile returns a file description of the socket s, owned by the
// credentials of ctx, with the open flags (O_NONBLOCK) given. Its
// /proc/self/fd link reads "socket:[ino]".
func NewFile(ctx fs.Context, s Socket, flags uint32) *fs.FileDescription {
	c := ctx.Credentials()
	n := &node{ino: fs.NewIno(), uid: c.EffectiveUID, gid: c.EffectiveGID,
		ctime: unix.NsecToTimespec(time.Now().UnixNano())}
	d := fs.NewAnonDentry(sockfs, fmt.Sprintf("socket:[%d]", n.ino), n)
	return fs.NewFileDescription(s, fs.VirtualDentry{Dentry: d}, unix.O_RDWR|flags&unix.O_NONBLOCK, fs.FDOptions{Stream: true})
}

// FromFile returns the socket of f, nil if f is not a socket.
func FromFile(f *fs.FileDescription) Socket {
	s, _ := f.Impl().(Socket)
	return s
}

// Timeout is an SO_RCVTIMEO or SO_SNDTIMEO value: zero waits forever, a
// negative value (a negative tv_sec given to setsockopt) never waits.
type Timeout time.Duration

// Deadline returns the deadline of a wait that starts now, and whether
// there is one.
func (t Timeout) Deadline() (time.Time, bool) {
	switch {
	case t == 0:
		return time.Time{}, false
	case t < 0:
		return time.Now(), true
	}
	return time.Now().Add(time.Duration(t)), true
}
