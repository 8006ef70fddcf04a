package strace

import "sync"

// ioctl requests and the decoding of their third argument.

const (
	tcgets     = 0x5401
	tcsets     = 0x5402
	tcsetsw    = 0x5403
	tcsetsf    = 0x5404
	tiocgwinsz = 0x5413
	tiocswinsz = 0x5414
	tiocsti    = 0x5412
	tiocgptpee = 0x5441
)

var ioctlReqs = sync.OnceValue(func() names {
	return names{
		0x5401: "TCGETS", 0x5402: "TCSETS", 0x5403: "TCSETSW", 0x5404: "TCSETSF",
		0x5405: "TCGETA", 0x5406: "TCSETA", 0x5407: "TCSETAW", 0x5408: "TCSETAF",
		0x5409: "TCSBRK", 0x540a: "TCXONC", 0x540b: "TCFLSH", 0x540c: "TIOCEXCL",
		0x540d: "TIOCNXCL", 0x540e: "TIOCSCTTY", 0x540f: "TIOCGPGRP", 0x5410: "TIOCSPGRP",
		0x5411: "TIOCOUTQ", 0x5412: "TIOCSTI", 0x5413: "TIOCGWINSZ", 0x5414: "TIOCSWINSZ",
		0x5415: "TIOCMGET", 0x5416: "TIOCMBIS", 0x5417: "TIOCMBIC", 0x5418: "TIOCMSET",
		0x5419: "TIOCGSOFTCAR", 0x541a: "TIOCSSOFTCAR", 0x541b: "FIONREAD", 0x541c: "TIOCLINUX",
		0x541d: "TIOCCONS", 0x541e: "TIOCGSERIAL", 0x541f: "TIOCSSERIAL", 0x5420: "TIOCPKT",
		0x5421: "FIONBIO", 0x5422: "TIOCNOTTY", 0x5423: "TIOCSETD", 0x5424: "TIOCGETD",
		0x5425: "TCSBRKP", 0x5427: "TIOCSBRK", 0x5428: "TIOCCBRK", 0x5429: "TIOCGSID",
		0x802c542a: "TCGETS2", 0x402c542b: "TCSETS2", 0x402c542c: "TCSETSW2",
		0x402c542d: "TCSETSF2", 0x542e: "TIOCGRS485", 0x542f: "TIOCSRS485",
		0x80045430: "TIOCGPTN", 0x40045431: "TIOCSPTLCK", 0x80045432: "TIOCGDEV",
		0x40045436: "TIOCSIG", 0x5437: "TIOCVHANGUP", 0x80045438: "TIOCGPKT",
		0x80045439: "TIOCGPTLCK", 0x80045440: "TIOCGEXCL", 0x5441: "TIOCGPTPEER",
		0x5450: "FIONCLEX", 0x5451: "FIOCLEX", 0x5452: "FIOASYNC", 0x5453: "TIOCSERCONFIG",
		0x5454: "TIOCSERGWILD", 0x5455: "TIOCSERSWILD", 0x5456: "TIOCGLCKTRMIOS",
		0x5457: "TIOCSLCKTRMIOS", 0x5458: "TIOCSERGSTRUCT", 0x5459: "TIOCSERGETLSR",
		0x545a: "TIOCSERGETMULTI", 0x545b: "TIOCSERSETMULTI", 0x545c: "TIOCMIWAIT",
		0x545d: "TIOCGICOUNT", 0x5460: "FIOQSIZE",
		0x8901: "FIOSETOWN", 0x8902: "SIOCSPGRP", 0x8903: "FIOGETOWN", 0x8904: "SIOCGPGRP",
		0x8905: "SIOCATMARK", 0x8906: "SIOCGSTAMP", 0x8907: "SIOCGSTAMPNS",
		0x8910: "SIOCGIFNAME", 0x8912: "SIOCGIFCONF", 0x8913: "SIOCGIFFLAGS",
		0x8914: "SIOCSIFFLAGS", 0x8915: "SIOCGIFADDR", 0x8916: "SIOCSIFADDR",
		0x8921: "SIOCGIFMTU", 0x8922: "SIOCSIFMTU", 0x8927: "SIOCGIFHWADDR",
		0x8933:     "SIOCGIFINDEX",
		0x80086601: "FS_IOC_GETFLAGS", 0x40086602: "FS_IOC_SETFLAGS",
		0x80087601: "FS_IOC_GETVERSION", 0x40049409: "FICLONE", 0x4020940d: "FICLONERANGE",
		0xc020660b: "FS_IOC_FIEMAP", 0xc0185879: "FITRIM",
	}
})

// ioctlOutInt are requests whose argument points to an int the kernel
// writes; ioctlInInt those that read one.
var (
	ioctlOutInt = map[uint64]bool{
		0x541b: true, 0x5411: true, 0x80045430: true, 0x540f: true, 0x5429: true,
		0x5424: true, 0x5415: true, 0x80045439: true, 0x80045438: true, 0x80045440: true,
		0x5419: true, 0x8903: true, 0x8904: true, 0x8905: true, 0x5460: true,
	}
	ioctlInInt = map[uint64]bool{
		0x5421: true, 0x5452: true, 0x5410: true, 0x40045431: true, 0x5423: true,
		0x5418: true, 0x5416: true, 0x5417: true, 0x5420: true, 0x541a: true, 0x8901: true,
		0x8902: true,
	}
	// ioctlNoArg take no argument.
	ioctlNoArg = map[uint64]bool{
		0x5451: true, 0x5450: true, 0x5422: true, 0x540c: true, 0x540d: true,
		0x541d: true, 0x5427: true, 0x5428: true, 0x5437: true,
	}
	// ioctlIntArg take a plain int.
	ioctlIntArg = map[uint64]bool{
		0x540e: true, 0x5409: true, 0x540a: true, 0x540b: true, 0x5425: true, 0x40045436: true,
	}
)

var iocDirs = [4]string{"_IOC_NONE", "_IOC_WRITE", "_IOC_READ", "_IOC_READ|_IOC_WRITE"}

// ioctlReq prints a request's name, or its _IOC fields.
func (p *printer) ioctlReq(v uint64) {
	if s, ok := ioctlReqs()[v]; ok {
		p.str(s)
		return
	}
	p.str("_IOC(")
	p.str(iocDirs[v>>30&3])
	p.str(", ")
	p.hex(v >> 8 & 0xff)
	p.str(", ")
	p.hex(v & 0xff)
	p.str(", ")
	p.hex(v >> 16 & 0x3fff)
	p.b = append(p.b, ')')
}

// fmtIoctl prints ioctl(fd, request, arg) with arg decoded after request.
func fmtIoctl(p *printer) {
	p.arg(0, FD)
	p.arg(1, IoctlReq)
	req := uint64(p.args[1]) & 0xffffffff
	arg := uint64(p.args[2])
	if ioctlNoArg[req] {
		return
	}
	p.sep()
	switch {
	case ioctlIntArg[req]:
		p.int(int64(int32(arg)))
	case ioctlInInt[req]:
		p.intAt(arg)
	case ioctlOutInt[req]:
		if p.ok {
			p.intAt(arg)
		} else {
			p.ptr(arg)
		}
	case req == tcgets:
		if p.ok {
			p.termios(arg)
		} else {
			p.ptr(arg)
		}
	case req == tcsets || req == tcsetsw || req == tcsetsf:
		p.termios(arg)
	case req == tiocgwinsz:
		if p.ok {
			p.winsize(arg)
		} else {
			p.ptr(arg)
		}
	case req == tiocswinsz:
		p.winsize(arg)
	case req == tiocsti:
		p.buffer(arg, 1, false)
	case req == tiocgptpee:
		p.openFlags(arg)
	default:
		p.hex(arg)
	}
}

// winsize prints {ws_row=24, ws_col=80, ws_xpixel=0, ws_ypixel=0}.
func (p *printer) winsize(addr uint64) {
	var raw [8]byte
	if !p.read(addr, raw[:]) {
		p.ptr(addr)
		return
	}
	for i, name := range [...]string{"{ws_row=", ", ws_col=", ", ws_xpixel=", ", ws_ypixel="} {
		p.str(name)
		p.uint(uint64(le16(raw[2*i:])))
	}
	p.b = append(p.b, '}')
}

var termiosIflagTab = []flag{
	{0x1, "IGNBRK"}, {0x2, "BRKINT"}, {0x4, "IGNPAR"}, {0x8, "PARMRK"}, {0x10, "INPCK"},
	{0x20, "ISTRIP"}, {0x40, "INLCR"}, {0x80, "IGNCR"}, {0x100, "ICRNL"}, {0x200, "IUCLC"},
	{0x400, "IXON"}, {0x800, "IXANY"}, {0x1000, "IXOFF"}, {0x2000, "IMAXBEL"}, {0x4000, "IUTF8"},
}

var termiosOflagTab = []flag{
	{0x1, "OPOST"}, {0x2, "OLCUC"}, {0x4, "ONLCR"}, {0x8, "OCRNL"}, {0x10, "ONOCR"},
	{0x20, "ONLRET"}, {0x40, "OFILL"}, {0x80, "OFDEL"},
}

var termiosLflagTab = []flag{
	{0x1, "ISIG"}, {0x2, "ICANON"}, {0x4, "XCASE"}, {0x8, "ECHO"}, {0x10, "ECHOE"},
	{0x20, "ECHOK"}, {0x40, "ECHONL"}, {0x80, "NOFLSH"}, {0x8000, "IEXTEN"}, {0x200, "ECHOCTL"},
	{0x400, "ECHOPRT"}, {0x800, "ECHOKE"}, {0x1000, "FLUSHO"}, {0x4000, "PENDIN"},
	{0x100, "TOSTOP"}, {0x10000, "EXTPROC"},
}

var termiosCflagTab = []flag{
	{0x40, "CSTOPB"}, {0x80, "CREAD"}, {0x100, "PARENB"}, {0x200, "PARODD"}, {0x400, "HUPCL"},
	{0x800, "CLOCAL"}, {0x40000000, "CMSPAR"}, {0x80000000, "CRTSCTS"},
}

var baudRates = sync.OnceValue(func() names {
	return names{
		0: "B0", 1: "B50", 2: "B75", 3: "B110", 4: "B134", 5: "B150", 6: "B200", 7: "B300",
		8: "B600", 9: "B1200", 10: "B1800", 11: "B2400", 12: "B4800", 13: "B9600", 14: "B19200",
		15: "B38400", 0x1001: "B57600", 0x1002: "B115200", 0x1003: "B230400", 0x1004: "B460800",
		0x1005: "B500000", 0x1006: "B576000", 0x1007: "B921600", 0x1008: "B1000000",
		0x1009: "B1152000", 0x100a: "B1500000", 0x100b: "B2000000", 0x100c: "B2500000",
		0x100d: "B3000000", 0x100e: "B3500000", 0x100f: "B4000000",
	}
})

// delayField is one of c_oflag's delay selectors, printed by value.
type delayField struct {
	mask  uint64
	names []string // by value >> shift
	shift uint
}

var oflagDelays = []delayField{
	{0x100, []string{"NL0", "NL1"}, 8},
	{0x600, []string{"CR0", "CR1", "CR2", "CR3"}, 9},
	{0x1800, []string{"TAB0", "TAB1", "TAB2", "XTABS"}, 11},
	{0x2000, []string{"BS0", "BS1"}, 13},
	{0x4000, []string{"VT0", "VT1"}, 14},
	{0x8000, []string{"FF0", "FF1"}, 15},
}

// termios prints the abbreviated struct termios:
// {c_iflag=ICRNL|IXON, c_oflag=NL0|CR0|...|OPOST|ONLCR, c_cflag=B38400|CS8|CREAD, c_lflag=ISIG|..., ...}.
func (p *printer) termios(addr uint64) {
	var raw [36]byte
	if !p.read(addr, raw[:]) {
		p.ptr(addr)
		return
	}
	iflag, oflag := uint64(le32(raw[0:])), uint64(le32(raw[4:]))
	cflag, lflag := uint64(le32(raw[8:])), uint64(le32(raw[12:]))
	p.str("{c_iflag=")
	p.flags(iflag, termiosIflagTab, "0")
	p.str(", c_oflag=")
	for i, d := range oflagDelays {
		if i > 0 {
			p.b = append(p.b, '|')
		}
		p.str(d.names[(oflag&d.mask)>>d.shift])
		oflag &^= d.mask
	}
	p.flagsTail(oflag, termiosOflagTab)
	p.str(", c_cflag=")
	p.enum(cflag&0x100f, baudRates(), "B")
	if ibaud := cflag >> 16 & 0x100f; ibaud != 0 {
		p.b = append(p.b, '|')
		p.enum(ibaud, baudRates(), "B")
		p.str("<<IBSHIFT")
	}
	p.b = append(p.b, '|', 'C', 'S')
	p.b = append(p.b, '5'+byte(cflag>>4&3))
	p.flagsTail(cflag&^(0x100f|0x100f<<16|0x30), termiosCflagTab)
	p.str(", c_lflag=")
	p.flags(lflag, termiosLflagTab, "0")
	p.str(", ...}")
}
