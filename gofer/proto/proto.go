// Package proto is the wire format between the Sentry and the gofer, and
// the Sentry's client for it. It is the only package the two share.
//
// Transport: a connected unix SOCK_SEQPACKET socket. Every message is one
// datagram of at most MaxMessage bytes; a host file descriptor rides along
// as SCM_RIGHTS ancillary data on the messages that donate one (Ropen,
// Rdup, Rcreate, Rbind, Rconnect, Rtmpfile, RwalkOpen) and on no other message.
//
// Encoding: little endian, fixed-width integers; a string is a uint16 length
// followed by its bytes. Every datagram starts with a 5-byte header: a
// uint32 tag chosen by the client and echoed in the response, then a uint8
// message type. Requests are T-messages, responses R-messages; any request
// may be answered with Rerror, which carries a Linux errno. Decoding is
// strict (no trailing bytes, booleans 0 or 1, counts checked against the
// remaining bytes before anything is allocated), so a message decodes to at
// most one value and re-encodes to the same bytes.
//
// Messages (request -> response):
//
//	Tattach{Version, Mount}   -> Rattach{Root, Attr}   an attach point's root (0: the container's)
//	Twalk{Dir, Name}          -> Rwalk{Node, Attr}     one component, no symlink following
//	TwalkPath{Dir, Names}     -> RwalkPath{Steps, Errno}  several in a row, each step
//	                             a handle, attributes and a symlink's target
//	TwalkOpen{Dir, Names}     -> RwalkOpen{Steps} + fd, or RwalkPath  TwalkPath that also
//	                             opens a last regular file for reading
//	Tstat{Node}               -> Rstat{Attr}           lstat semantics
//	Topen{Node, Flags}        -> Ropen + fd            a host fd the caller owns
//	Treadlink{Node}           -> Rreadlink{Target}
//	Tgetdents{Dir, Offset}    -> Rgetdents{Next, EOF, Entries}  one page
//	Tstatfs{Node}             -> Rstatfs{Statfs}
//	Tclose{Node}              -> Rclose
//	Tdup{}                    -> Rdup + fd             a new connection to the same server
//
// Messages that change the tree (a read-only server answers EROFS). Each
// names its target as a directory handle and one component:
//
//	Tcreate{Dir, Name, Flags, Mode, UID, GID}  -> Rcreate{Node, Attr} + fd  O_CREAT|O_EXCL
//	Tmkdir{Dir, Name, Mode, UID, GID}          -> Rmkdir{Node, Attr}
//	Tmknod{Dir, Name, Mode, UID, GID}          -> Rmknod{Node, Attr}    FIFO, socket, regular
//	Tsymlink{Dir, Name, Target, UID, GID}      -> Rsymlink{Node, Attr}
//	Tlink{Dir, Name, Target}                   -> Rlink{Node, Attr}
//	Tunlink{Dir, Name, Flags}                  -> Runlink              AT_REMOVEDIR for rmdir
//	Trename{OldDir, OldName, NewDir, NewName, Flags} -> Rrename        renameat2 flags
//	Tsetattr{Node, Mask, Mode, UID, GID, Size, Atime, Mtime} -> Rsetattr{Attr}
//	Tgetxattr{Node, Name}                      -> Rgetxattr{Value}
//	Tsetxattr{Node, Name, Value, Flags}        -> Rsetxattr
//	Tlistxattr{Node}                           -> Rlistxattr{Names}
//	Tremovexattr{Node, Name}                   -> Rremovexattr
//	Tfsync{Node, DataOnly}                     -> Rfsync
//	Tfallocate{Node, Mode, Offset, Length}     -> Rfallocate
//	Tbind{Dir, Name, SockType, Mode, UID, GID} -> Rbind{Node, Attr} + fd  a bound unix socket
//	Tconnect{Dir, Name, SockType}              -> Rconnect + fd         a connected unix socket
//	Ttmpfile{Dir, Flags, Mode, UID, GID}       -> Rtmpfile{Node, Attr} + fd  O_TMPFILE: no name
//
// Topen may ask for write access (O_WRONLY, O_RDWR, O_TRUNC, O_APPEND)
// on a writable server.
//
// Handles name server-side nodes; they are per connection, chosen by the
// server, and live until Tclose or the end of the connection.
//
// The client (Client) multiplexes many concurrent callers over one
// connection by tag: callers send their own requests, a single reader
// goroutine receives every response and hands it to the waiting caller, so
// a slow request does not hold up the others. The client makes no host
// syscalls other than on its own socket (sendmsg, recvmsg, getsockopt
// SO_TYPE once, close, and the Go poller's fcntl/epoll bookkeeping); in
// particular it never opens anything. Donated fds arrive close-on-exec.
//
// Locks: Client.mu guards the pending-call table and is never held across
// a syscall.
package proto

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Version is the protocol version a client sends in Tattach. Version 2
// added Tattach.Mount (attach points for bind mounts), version 3
// TwalkPath.
const Version = 3

// MaxMessage is the largest datagram either side sends or accepts.
const MaxMessage = 64 << 10

// MaxRequest bounds the size of every request. Tsetxattr carries values
// of up to XattrValueMax bytes, so it is the largest message.
const MaxRequest = MaxMessage

// headerSize is the size of the tag and type that start every message.
const headerSize = 5

// NameMax is the longest path component (NAME_MAX).
const NameMax = 255

// PathMax is the longest symlink target plus its terminating NUL (PATH_MAX).
const PathMax = 4096

// Handle names a node (a file, directory, symlink, ...) on the gofer side.
// Zero is never a valid handle.
type Handle uint64

// Attr is what stat(2) reports about a node.
type Attr struct {
	Mode                uint32
	Ino, Dev            uint64
	Nlink               uint64
	UID, GID            uint32
	Rdev                uint64
	Size                int64
	Blksize             int64
	Blocks              int64
	Atime, Mtime, Ctime unix.Timespec
}

// AttrFromStat converts a host stat buffer to an Attr.
func AttrFromStat(st *unix.Stat_t) Attr {
	return Attr{
		Mode:    st.Mode,
		Ino:     st.Ino,
		Dev:     st.Dev,
		Nlink:   uint64(st.Nlink),
		UID:     st.Uid,
		GID:     st.Gid,
		Rdev:    st.Rdev,
		Size:    st.Size,
		Blksize: int64(st.Blksize),
		Blocks:  st.Blocks,
		Atime:   st.Atim,
		Mtime:   st.Mtim,
		Ctime:   st.Ctim,
	}
}

// Dirent is one directory entry. Getdents never reports "." or "..": the
// Sentry makes those itself.
type Dirent struct {
	Name string
	Ino  uint64
	Type uint8 // DT_*
}

// direntFixed is the encoded size of a Dirent without its name bytes.
const direntFixed = 8 + 1 + 2

// EncodedSize is the number of bytes d takes in an Rgetdents message.
func (d Dirent) EncodedSize() int { return direntFixed + len(d.Name) }

// RgetdentsOverhead is the size of an Rgetdents message with no entries,
// header included. A page of entries fits when RgetdentsOverhead plus the
// sum of their EncodedSize is at most MaxMessage.
const RgetdentsOverhead = headerSize + 8 + 1 + 4

// ValidName reports whether name can be a single path component: not
// empty, not "." or "..", at most NameMax bytes, without '/' or NUL.
func ValidName(name string) bool {
	if name == "" || name == "." || name == ".." || len(name) > NameMax {
		return false
	}
	for i := 0; i < len(name); i++ {
		if name[i] == '/' || name[i] == 0 {
			return false
		}
	}
	return true
}

// validDirentType reports whether t is one of the DT_* values Linux uses.
func validDirentType(t uint8) bool {
	switch t {
	case unix.DT_UNKNOWN, unix.DT_FIFO, unix.DT_CHR, unix.DT_DIR, unix.DT_BLK,
		unix.DT_REG, unix.DT_LNK, unix.DT_SOCK, unix.DT_WHT:
		return true
	}
	return false
}

// MsgType identifies a message.
type MsgType uint8

// Message types. Responses are their request's type plus one.
const (
	MsgRerror    MsgType = 1
	MsgTattach   MsgType = 10
	MsgRattach   MsgType = 11
	MsgTwalk     MsgType = 12
	MsgRwalk     MsgType = 13
	MsgTstat     MsgType = 14
	MsgRstat     MsgType = 15
	MsgTopen     MsgType = 16
	MsgRopen     MsgType = 17
	MsgTreadlink MsgType = 18
	MsgRreadlink MsgType = 19
	MsgTgetdents MsgType = 20
	MsgRgetdents MsgType = 21
	MsgTstatfs   MsgType = 22
	MsgRstatfs   MsgType = 23
	MsgTclose    MsgType = 24
	MsgRclose    MsgType = 25
	MsgTdup      MsgType = 26
	MsgRdup      MsgType = 27

	// Messages that change the tree (write.go).
	MsgTcreate      MsgType = 28
	MsgRcreate      MsgType = 29
	MsgTmkdir       MsgType = 30
	MsgRmkdir       MsgType = 31
	MsgTmknod       MsgType = 32
	MsgRmknod       MsgType = 33
	MsgTsymlink     MsgType = 34
	MsgRsymlink     MsgType = 35
	MsgTlink        MsgType = 36
	MsgRlink        MsgType = 37
	MsgTunlink      MsgType = 38
	MsgRunlink      MsgType = 39
	MsgTrename      MsgType = 40
	MsgRrename      MsgType = 41
	MsgTsetattr     MsgType = 42
	MsgRsetattr     MsgType = 43
	MsgTgetxattr    MsgType = 44
	MsgRgetxattr    MsgType = 45
	MsgTsetxattr    MsgType = 46
	MsgRsetxattr    MsgType = 47
	MsgTlistxattr   MsgType = 48
	MsgRlistxattr   MsgType = 49
	MsgTremovexattr MsgType = 50
	MsgRremovexattr MsgType = 51
	MsgTfsync       MsgType = 52
	MsgRfsync       MsgType = 53
	MsgTfallocate   MsgType = 54
	MsgRfallocate   MsgType = 55
	MsgTbind        MsgType = 56
	MsgRbind        MsgType = 57
	MsgTconnect     MsgType = 58
	MsgRconnect     MsgType = 59
	MsgTtmpfile     MsgType = 60
	MsgRtmpfile     MsgType = 61

	// Several components walked at once (walkpath.go).
	MsgTwalkPath MsgType = 62
	MsgRwalkPath MsgType = 63
	MsgTwalkOpen MsgType = 64
	MsgRwalkOpen MsgType = 65 // or RwalkPath (walkpath.go)
)

var msgNames = map[MsgType]string{
	MsgRerror: "Rerror", MsgTattach: "Tattach", MsgRattach: "Rattach",
	MsgTwalk: "Twalk", MsgRwalk: "Rwalk", MsgTstat: "Tstat", MsgRstat: "Rstat",
	MsgTopen: "Topen", MsgRopen: "Ropen", MsgTreadlink: "Treadlink",
	MsgRreadlink: "Rreadlink", MsgTgetdents: "Tgetdents", MsgRgetdents: "Rgetdents",
	MsgTstatfs: "Tstatfs", MsgRstatfs: "Rstatfs", MsgTclose: "Tclose",
	MsgRclose: "Rclose", MsgTdup: "Tdup", MsgRdup: "Rdup",
	MsgTcreate: "Tcreate", MsgRcreate: "Rcreate", MsgTmkdir: "Tmkdir", MsgRmkdir: "Rmkdir",
	MsgTmknod: "Tmknod", MsgRmknod: "Rmknod", MsgTsymlink: "Tsymlink", MsgRsymlink: "Rsymlink",
	MsgTlink: "Tlink", MsgRlink: "Rlink", MsgTunlink: "Tunlink", MsgRunlink: "Runlink",
	MsgTrename: "Trename", MsgRrename: "Rrename", MsgTsetattr: "Tsetattr", MsgRsetattr: "Rsetattr",
	MsgTgetxattr: "Tgetxattr", MsgRgetxattr: "Rgetxattr", MsgTsetxattr: "Tsetxattr",
	MsgRsetxattr: "Rsetxattr", MsgTlistxattr: "Tlistxattr", MsgRlistxattr: "Rlistxattr",
	MsgTremovexattr: "Tremovexattr", MsgRremovexattr: "Rremovexattr", MsgTfsync: "Tfsync",
	MsgRfsync: "Rfsync", MsgTfallocate: "Tfallocate", MsgRfallocate: "Rfallocate",
	MsgTbind: "Tbind", MsgRbind: "Rbind", MsgTconnect: "Tconnect", MsgRconnect: "Rconnect",
	MsgTtmpfile: "Ttmpfile", MsgRtmpfile: "Rtmpfile",
	MsgTwalkPath: "TwalkPath", MsgRwalkPath: "RwalkPath",
	MsgTwalkOpen: "TwalkOpen", MsgRwalkOpen: "RwalkOpen",
}

func (t MsgType) String() string {
	if s, ok := msgNames[t]; ok {
		return s
	}
	return fmt.Sprintf("MsgType(%d)", uint8(t))
}
