package linux

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel"
)

// socketNote is the support note every socket syscall shares.
const socketNote = "AF_UNIX only (stream, datagram, seqpacket); other families are EAFNOSUPPORT until the network stack lands"

// socketSyscalls are the entries of the socket family (sys_socket.go).
// Merged into AMD64 by init, replacing linux64.go's entries for these
// numbers.
func socketSyscalls() map[uintptr]kernel.Syscall {
	return map[uintptr]kernel.Syscall{
		unix.SYS_SOCKET:      partial("socket", Socket, socketNote),
		unix.SYS_SOCKETPAIR:  partial("socketpair", Socketpair, "AF_UNIX only; AF_INET, AF_INET6 and AF_NETLINK are EOPNOTSUPP as on Linux"),
		unix.SYS_BIND:        partial("bind", Bind, socketNote+"; on a gofer mount (a bind mount, or the root with --overlay=none) a stream or seqpacket socket is a host socket host processes can connect to only with --host-uds=create or all; datagram sockets never are"),
		unix.SYS_LISTEN:      partial("listen", Listen, socketNote),
		unix.SYS_ACCEPT:      partial("accept", Accept, socketNote),
		unix.SYS_ACCEPT4:     partial("accept4", Accept4, socketNote),
		unix.SYS_CONNECT:     partial("connect", Connect, socketNote+"; sockets host processes bound on a gofer mount (or on the host root under the memory overlay) are reachable only with --host-uds=open or all (else ECONNREFUSED), without passing descriptors or credentials"),
		unix.SYS_GETSOCKNAME: partial("getsockname", Getsockname, socketNote),
		unix.SYS_GETPEERNAME: partial("getpeername", Getpeername, socketNote),
		unix.SYS_SHUTDOWN:    partial("shutdown", Shutdown, socketNote),
		unix.SYS_SENDTO:      partial("sendto", Sendto, socketNote+"; MSG_OOB is EOPNOTSUPP"),
		unix.SYS_RECVFROM:    partial("recvfrom", Recvfrom, socketNote+"; MSG_OOB is EOPNOTSUPP"),
		unix.SYS_SENDMSG:     partial("sendmsg", Sendmsg, socketNote+"; SCM_RIGHTS and SCM_CREDENTIALS; descriptors passed in cycles are not garbage-collected"),
		unix.SYS_RECVMSG:     partial("recvmsg", Recvmsg, socketNote+"; SCM_RIGHTS and SCM_CREDENTIALS, no SCM_SECURITY or SCM_PIDFD"),
		unix.SYS_SENDMMSG:    partial("sendmmsg", Sendmmsg, socketNote),
		unix.SYS_RECVMMSG:    partial("recvmmsg", Recvmmsg, socketNote),
		unix.SYS_GETSOCKOPT:  partial("getsockopt", Getsockopt, "SOL_SOCKET options of AF_UNIX sockets (SO_PEERSEC, SO_PEERGROUPS, SO_PEERPIDFD are ENOPROTOOPT); other levels EOPNOTSUPP"),
		unix.SYS_SETSOCKOPT:  partial("setsockopt", Setsockopt, "SOL_SOCKET options of AF_UNIX sockets; SO_PEEK_OFF is EOPNOTSUPP, socket filters ENOPROTOOPT; other levels EOPNOTSUPP"),
	}
}

func init() { tableParts = append(tableParts, socketSyscalls) }
