package strace

import (
	"strconv"
	"sync"
)

const (
	afUnix    = 1
	afInet    = 2
	afInet6   = 10
	afNetlink = 16
)

var families = sync.OnceValue(func() names {
	return names{
		0: "AF_UNSPEC", 1: "AF_UNIX", 2: "AF_INET", 3: "AF_AX25", 4: "AF_IPX", 5: "AF_APPLETALK",
		6: "AF_NETROM", 7: "AF_BRIDGE", 8: "AF_ATMPVC", 9: "AF_X25", 10: "AF_INET6", 11: "AF_ROSE",
		12: "AF_DECnet", 13: "AF_NETBEUI", 14: "AF_SECURITY", 15: "AF_KEY", 16: "AF_NETLINK",
		17: "AF_PACKET", 18: "AF_ASH", 19: "AF_ECONET", 20: "AF_ATMSVC", 21: "AF_RDS", 22: "AF_SNA",
		23: "AF_IRDA", 24: "AF_PPPOX", 25: "AF_WANPIPE", 26: "AF_LLC", 27: "AF_IB", 28: "AF_MPLS",
		29: "AF_CAN", 30: "AF_TIPC", 31: "AF_BLUETOOTH", 32: "AF_IUCV", 33: "AF_RXRPC",
		34: "AF_ISDN", 35: "AF_PHONET", 36: "AF_IEEE802154", 37: "AF_CAIF", 38: "AF_ALG",
		39: "AF_NFC", 40: "AF_VSOCK", 41: "AF_KCM", 42: "AF_QIPCRTR", 43: "AF_SMC", 44: "AF_XDP",
		45: "AF_MCTP",
	}
})

var sockTypes = sync.OnceValue(func() names {
	return names{
		1: "SOCK_STREAM", 2: "SOCK_DGRAM", 3: "SOCK_RAW", 4: "SOCK_RDM", 5: "SOCK_SEQPACKET",
		6: "SOCK_DCCP", 10: "SOCK_PACKET",
	}
})

var sockFlagTab = []flag{{0x80000, "SOCK_CLOEXEC"}, {0x800, "SOCK_NONBLOCK"}}

// sockType prints SOCK_STREAM|SOCK_CLOEXEC.
func (p *printer) sockType(v uint64) {
	v &= 0xffffffff
	if t, ok := sockTypes()[v&0xf]; ok {
		p.str(t)
	} else {
		p.unknownEnum(v&0xf, "SOCK_")
	}
	rest := v &^ 0xf
	for _, f := range sockFlagTab {
		if rest&f.v != 0 {
			p.b = append(p.b, '|')
			p.str(f.name)
			rest &^= f.v
		}
	}
	if rest != 0 {
		p.b = append(p.b, '|')
		p.unknownEnum(rest, "SOCK_")
	}
}

var ipProtocols = sync.OnceValue(func() names {
	return names{
		0: "IPPROTO_IP", 1: "IPPROTO_ICMP", 2: "IPPROTO_IGMP", 4: "IPPROTO_IPIP", 6: "IPPROTO_TCP",
		8: "IPPROTO_EGP", 12: "IPPROTO_PUP", 17: "IPPROTO_UDP", 22: "IPPROTO_IDP", 29: "IPPROTO_TP",
		33: "IPPROTO_DCCP", 41: "IPPROTO_IPV6", 46: "IPPROTO_RSVP", 47: "IPPROTO_GRE",
		50: "IPPROTO_ESP", 51: "IPPROTO_AH", 58: "IPPROTO_ICMPV6", 92: "IPPROTO_MTP",
		94: "IPPROTO_BEETPH", 98: "IPPROTO_ENCAP", 103: "IPPROTO_PIM", 108: "IPPROTO_COMP",
		115: "IPPROTO_L2TP", 132: "IPPROTO_SCTP", 136: "IPPROTO_UDPLITE", 137: "IPPROTO_MPLS",
		143: "IPPROTO_ETHERNET", 255: "IPPROTO_RAW", 262: "IPPROTO_MPTCP",
	}
})

var netlinkProtocols = sync.OnceValue(func() names {
	return names{
		0: "NETLINK_ROUTE", 1: "NETLINK_UNUSED", 2: "NETLINK_USERSOCK", 3: "NETLINK_FIREWALL",
		4: "NETLINK_SOCK_DIAG", 5: "NETLINK_NFLOG", 6: "NETLINK_XFRM", 7: "NETLINK_SELINUX",
		8: "NETLINK_ISCSI", 9: "NETLINK_AUDIT", 10: "NETLINK_FIB_LOOKUP", 11: "NETLINK_CONNECTOR",
		12: "NETLINK_NETFILTER", 13: "NETLINK_IP6_FW", 14: "NETLINK_DNRTMSG",
		15: "NETLINK_KOBJECT_UEVENT", 16: "NETLINK_GENERIC", 18: "NETLINK_SCSITRANSPORT",
		19: "NETLINK_ECRYPTFS", 20: "NETLINK_RDMA", 21: "NETLINK_CRYPTO", 22: "NETLINK_SMC",
	}
})

// sockProto prints a protocol number, named after the family.
func (p *printer) sockProto(family, v uint64) {
	v &= 0xffffffff
	var tab names
	switch family & 0xffffffff {
	case afInet, afInet6:
		tab = ipProtocols()
	case afNetlink:
		tab = netlinkProtocols()
	}
	if s, ok := tab[v]; ok {
		p.str(s)
		return
	}
	p.int(int64(int32(v)))
}

var shutdownHows = sync.OnceValue(func() names { return names{0: "SHUT_RD", 1: "SHUT_WR", 2: "SHUT_RDWR"} })

var msgFlagTab = []flag{
	{0x1, "MSG_OOB"}, {0x2, "MSG_PEEK"}, {0x4, "MSG_DONTROUTE"}, {0x8, "MSG_CTRUNC"},
	{0x10, "MSG_PROXY"}, {0x20, "MSG_TRUNC"}, {0x40, "MSG_DONTWAIT"}, {0x80, "MSG_EOR"},
	{0x100, "MSG_WAITALL"}, {0x200, "MSG_FIN"}, {0x400, "MSG_SYN"}, {0x800, "MSG_CONFIRM"},
	{0x1000, "MSG_RST"}, {0x2000, "MSG_ERRQUEUE"}, {0x4000, "MSG_NOSIGNAL"}, {0x8000, "MSG_MORE"},
	{0x10000, "MSG_WAITFORONE"}, {0x40000, "MSG_BATCH"}, {0x4000000, "MSG_ZEROCOPY"},
	{0x20000000, "MSG_FASTOPEN"}, {0x40000000, "MSG_CMSG_CLOEXEC"},
}

const (
	solSocket = 1
	solIP     = 0
	solTCP    = 6
	solIPv6   = 41
)

var sockLevels = sync.OnceValue(func() names {
	return names{
		0: "SOL_IP", 1: "SOL_SOCKET", 6: "SOL_TCP", 17: "SOL_UDP", 41: "SOL_IPV6", 58: "SOL_ICMPV6",
		255: "SOL_RAW", 263: "SOL_PACKET", 270: "SOL_NETLINK", 279: "SOL_ALG",
	}
})

var socketOptions = sync.OnceValue(func() names {
	return names{
		1: "SO_DEBUG", 2: "SO_REUSEADDR", 3: "SO_TYPE", 4: "SO_ERROR", 5: "SO_DONTROUTE",
		6: "SO_BROADCAST", 7: "SO_SNDBUF", 8: "SO_RCVBUF", 9: "SO_KEEPALIVE", 10: "SO_OOBINLINE",
		11: "SO_NO_CHECK", 12: "SO_PRIORITY", 13: "SO_LINGER", 14: "SO_BSDCOMPAT", 15: "SO_REUSEPORT",
		16: "SO_PASSCRED", 17: "SO_PEERCRED", 18: "SO_RCVLOWAT", 19: "SO_SNDLOWAT",
		20: "SO_RCVTIMEO_OLD", 21: "SO_SNDTIMEO_OLD", 22: "SO_SECURITY_AUTHENTICATION",
		23: "SO_SECURITY_ENCRYPTION_TRANSPORT", 24: "SO_SECURITY_ENCRYPTION_NETWORK",
		25: "SO_BINDTODEVICE", 26: "SO_ATTACH_FILTER", 27: "SO_DETACH_FILTER", 28: "SO_PEERNAME",
		29: "SO_TIMESTAMP_OLD", 30: "SO_ACCEPTCONN", 31: "SO_PEERSEC", 32: "SO_SNDBUFFORCE",
		33: "SO_RCVBUFFORCE", 34: "SO_PASSSEC", 35: "SO_TIMESTAMPNS_OLD", 36: "SO_MARK",
		37: "SO_TIMESTAMPING_OLD", 38: "SO_PROTOCOL", 39: "SO_DOMAIN", 40: "SO_RXQ_OVFL",
		41: "SO_WIFI_STATUS", 42: "SO_PEEK_OFF", 43: "SO_NOFCS", 44: "SO_LOCK_FILTER",
		45: "SO_SELECT_ERR_QUEUE", 46: "SO_BUSY_POLL", 47: "SO_MAX_PACING_RATE",
		48: "SO_BPF_EXTENSIONS", 49: "SO_INCOMING_CPU", 50: "SO_ATTACH_BPF",
		51: "SO_ATTACH_REUSEPORT_CBPF", 52: "SO_ATTACH_REUSEPORT_EBPF", 53: "SO_CNX_ADVICE",
		55: "SO_MEMINFO", 56: "SO_INCOMING_NAPI_ID", 57: "SO_COOKIE", 59: "SO_PEERGROUPS",
		60: "SO_ZEROCOPY", 61: "SO_TXTIME", 62: "SO_BINDTOIFINDEX", 63: "SO_TIMESTAMP_NEW",
		64: "SO_TIMESTAMPNS_NEW", 65: "SO_TIMESTAMPING_NEW", 66: "SO_RCVTIMEO_NEW",
		67: "SO_SNDTIMEO_NEW", 68: "SO_DETACH_REUSEPORT_BPF", 69: "SO_PREFER_BUSY_POLL",
		70: "SO_BUSY_POLL_BUDGET", 71: "SO_NETNS_COOKIE", 72: "SO_BUF_LOCK", 73: "SO_RESERVE_MEM",
		74: "SO_TXREHASH", 75: "SO_RCVMARK", 76: "SO_PASSPIDFD", 77: "SO_PEERPIDFD",
	}
})

var tcpOptions = sync.OnceValue(func() names {
	return names{
		1: "TCP_NODELAY", 2: "TCP_MAXSEG", 3: "TCP_CORK", 4: "TCP_KEEPIDLE", 5: "TCP_KEEPINTVL",
		6: "TCP_KEEPCNT", 7: "TCP_SYNCNT", 8: "TCP_LINGER2", 9: "TCP_DEFER_ACCEPT",
		10: "TCP_WINDOW_CLAMP", 11: "TCP_INFO", 12: "TCP_QUICKACK", 13: "TCP_CONGESTION",
		14: "TCP_MD5SIG", 16: "TCP_THIN_LINEAR_TIMEOUTS", 17: "TCP_THIN_DUPACK",
		18: "TCP_USER_TIMEOUT", 19: "TCP_REPAIR", 20: "TCP_REPAIR_QUEUE", 21: "TCP_QUEUE_SEQ",
		22: "TCP_REPAIR_OPTIONS", 23: "TCP_FASTOPEN", 24: "TCP_TIMESTAMP", 25: "TCP_NOTSENT_LOWAT",
		26: "TCP_CC_INFO", 27: "TCP_SAVE_SYN", 28: "TCP_SAVED_SYN", 29: "TCP_REPAIR_WINDOW",
		30: "TCP_FASTOPEN_CONNECT", 31: "TCP_ULP", 32: "TCP_MD5SIG_EXT", 33: "TCP_FASTOPEN_KEY",
		34: "TCP_FASTOPEN_NO_COOKIE", 35: "TCP_ZEROCOPY_RECEIVE", 36: "TCP_INQ", 37: "TCP_TX_DELAY",
	}
})

var ipOptions = sync.OnceValue(func() names {
	return names{
		1: "IP_TOS", 2: "IP_TTL", 3: "IP_HDRINCL", 4: "IP_OPTIONS", 6: "IP_RECVOPTS",
		7: "IP_RETOPTS", 8: "IP_PKTINFO", 9: "IP_PKTOPTIONS", 10: "IP_MTU_DISCOVER",
		11: "IP_RECVERR", 12: "IP_RECVTTL", 13: "IP_RECVTOS", 14: "IP_MTU", 15: "IP_FREEBIND",
		19: "IP_TRANSPARENT", 24: "IP_BIND_ADDRESS_NO_PORT", 32: "IP_MULTICAST_IF",
		33: "IP_MULTICAST_TTL", 34: "IP_MULTICAST_LOOP", 35: "IP_ADD_MEMBERSHIP",
		36: "IP_DROP_MEMBERSHIP",
	}
})

var ipv6Options = sync.OnceValue(func() names {
	return names{
		1: "IPV6_ADDRFORM", 2: "IPV6_2292PKTINFO", 16: "IPV6_UNICAST_HOPS",
		17: "IPV6_MULTICAST_IF", 18: "IPV6_MULTICAST_HOPS", 19: "IPV6_MULTICAST_LOOP",
		20: "IPV6_ADD_MEMBERSHIP", 21: "IPV6_DROP_MEMBERSHIP", 23: "IPV6_MTU_DISCOVER",
		24: "IPV6_MTU", 25: "IPV6_RECVERR", 26: "IPV6_V6ONLY", 49: "IPV6_RECVPKTINFO",
		50: "IPV6_PKTINFO", 67: "IPV6_TCLASS",
	}
})

// sockOpt prints a socket option name, named after its level.
func (p *printer) sockOpt(level, v uint64) {
	v &= 0xffffffff
	var tab names
	switch level & 0xffffffff {
	case solSocket:
		tab = socketOptions()
	case solTCP:
		tab = tcpOptions()
	case solIP:
		tab = ipOptions()
	case solIPv6:
		tab = ipv6Options()
	}
	if s, ok := tab[v]; ok {
		p.str(s)
		return
	}
	p.int(int64(int32(v)))
}

// sockOptVal prints a socket option value of size bytes: [1] for an int,
// the bytes as a string otherwise.
func (p *printer) sockOptVal(addr, size uint64) {
	if size == 4 {
		p.intAt(addr)
		return
	}
	p.buffer(addr, size, false)
}

// maxSockaddr bounds the bytes of a socket address read.
const maxSockaddr = 128

// sockaddr prints a socket address of size bytes.
func (p *printer) sockaddr(addr, size uint64) {
	if addr == 0 {
		p.ptr(addr)
		return
	}
	if size > maxSockaddr {
		size = maxSockaddr
	}
	var raw [maxSockaddr]byte
	if size < 2 || !p.read(addr, raw[:size]) {
		p.ptr(addr)
		return
	}
	b := raw[:size]
	family := uint64(le16(b))
	p.str("{sa_family=")
	p.enum(family, families(), "AF_")
	switch {
	case family == afUnix:
		if len(b) > 2 {
			path := b[2:]
			p.str(", sun_path=")
			if path[0] == 0 && len(path) > 1 {
				// An abstract address: its bytes are all significant.
				p.b = append(p.b, '@')
				p.quote(path[1:], false, false)
				break
			}
			n := 0
			for n < len(path) && path[n] != 0 {
				n++
			}
			p.quote(path[:n], false, false)
		}
	case family == afInet && len(b) >= 8:
		p.str(", sin_port=htons(")
		p.uint(uint64(b[2])<<8 | uint64(b[3]))
		p.str("), sin_addr=inet_addr(\"")
		p.b = appendIPv4(p.b, b[4:8])
		p.str("\")")
	case family == afInet6 && len(b) >= 24:
		p.str(", sin6_port=htons(")
		p.uint(uint64(b[2])<<8 | uint64(b[3]))
		p.str("), sin6_flowinfo=htonl(")
		p.uint(uint64(b[4])<<24 | uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7]))
		p.str("), inet_pton(AF_INET6, \"")
		p.b = appendIPv6(p.b, b[8:24])
		p.str("\", &sin6_addr)")
		if len(b) >= 28 {
			p.str(", sin6_scope_id=")
			p.uint(uint64(le32(b[24:])))
		}
	case family == afNetlink && len(b) >= 12:
		p.str(", nl_pid=")
		p.uint(uint64(le32(b[4:])))
		p.str(", nl_groups=")
		g := strconv.FormatUint(uint64(le32(b[8:])), 16)
		for i := len(g); i < 8; i++ {
			p.b = append(p.b, '0')
		}
		p.str(g)
	default:
		if len(b) > 2 {
			p.str(", sa_data=")
			p.buffer(addr+2, size-2, false)
		}
	}
	p.b = append(p.b, '}')
}

// socklen reads the socklen_t at addr.
func (p *printer) socklen(addr uint64) (uint64, bool) {
	var raw [4]byte
	if !p.read(addr, raw[:]) {
		return 0, false
	}
	return uint64(le32(raw[:])), true
}

// msgNamelen prints what recvmsg's msghdr holds before the call:
// {msg_namelen=16}.
func (p *printer) msgNamelen(addr uint64) {
	var raw [56]byte
	if !p.read(addr, raw[:]) {
		p.ptr(addr)
		return
	}
	p.str("{msg_namelen=")
	p.uint(uint64(le32(raw[8:])))
	p.b = append(p.b, '}')
}

// msghdr prints a struct msghdr. At exit (out), the iovecs hold the
// returned bytes.
func (p *printer) msghdr(addr uint64, out bool) {
	var raw [56]byte
	if !p.read(addr, raw[:]) {
		p.ptr(addr)
		return
	}
	name, namelen := le64(raw[0:]), uint64(le32(raw[8:]))
	iov, iovlen := le64(raw[16:]), le64(raw[24:])
	control, controllen := le64(raw[32:]), le64(raw[40:])
	p.str("{msg_name=")
	if name == 0 {
		p.str("NULL")
	} else {
		p.sockaddr(name, namelen)
	}
	p.str(", msg_namelen=")
	p.uint(namelen)
	p.str(", msg_iov=")
	count := int64(iovlen)
	if count > 1024 || count < 0 {
		p.ptr(iov)
	} else {
		p.iovec(iov, count, out, uint64(p.ret))
	}
	p.str(", msg_iovlen=")
	p.uint(iovlen)
	if controllen != 0 {
		p.str(", msg_control=")
		p.ptr(control)
	}
	p.str(", msg_controllen=")
	p.uint(controllen)
	p.str(", msg_flags=")
	p.flags(uint64(le32(raw[48:])), msgFlagTab, "0")
	p.b = append(p.b, '}')
}

// appendIPv4 appends the dotted quad of the 4-byte address a.
func appendIPv4(b, a []byte) []byte {
	for i, x := range a[:4] {
		if i > 0 {
			b = append(b, '.')
		}
		b = strconv.AppendUint(b, uint64(x), 10)
	}
	return b
}

// appendIPv6 appends the 16-byte address a as RFC 5952 writes it (and
// net/netip, which this replaces so that runsc's processes do not pay
// its package initialisation): lower-case hex groups without leading
// zeros, the longest run of two or more zero groups (the first of equal
// runs) as "::", and an IPv4-mapped address as ::ffff:a.b.c.d.
func appendIPv6(b, a []byte) []byte {
	word := func(i int) uint16 { return uint16(a[2*i])<<8 | uint16(a[2*i+1]) }
	if word(0)|word(1)|word(2)|word(3)|word(4) == 0 && word(5) == 0xffff {
		return appendIPv4(append(b, "::ffff:"...), a[12:16])
	}
	zs, zl := -1, 0 // the longest run of zero groups
	for i := 0; i < 8; {
		j := i
		for j < 8 && word(j) == 0 {
			j++
		}
		if j-i >= 2 && j-i > zl {
			zs, zl = i, j-i
		}
		i = max(j, i+1)
	}
	for i := 0; i < 8; i++ {
		if i == zs {
			b = append(b, ':', ':')
			i += zl - 1
			continue
		}
		if i > 0 && i != zs+zl {
			b = append(b, ':')
		}
		b = strconv.AppendUint(b, uint64(word(i)), 16)
	}
	return b
}
