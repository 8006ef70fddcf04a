package strace

import "math/bits"

// Decoders of the structures syscalls pass by pointer. Each reads the
// structure whole with one copy and prints its address instead if that
// fails. Layouts are x86-64's.

// timePair prints {tv_sec=S, tv_nsec=N} (or tv_usec for timevals) from
// two 64-bit fields.
func (p *printer) timePair(raw []byte, usec bool) {
	p.str("{tv_sec=")
	p.int(int64(le64(raw)))
	if usec {
		p.str(", tv_usec=")
	} else {
		p.str(", tv_nsec=")
	}
	p.int(int64(le64(raw[8:])))
	p.b = append(p.b, '}')
}

// timespec prints the struct timespec (or timeval, with usec) at addr.
func (p *printer) timespec(addr uint64, usec bool) {
	var raw [16]byte
	if !p.read(addr, raw[:]) {
		p.ptr(addr)
		return
	}
	p.timePair(raw[:], usec)
}

// itimer prints a struct itimerval (usec) or itimerspec at addr.
func (p *printer) itimer(addr uint64, usec bool) {
	var raw [32]byte
	if !p.read(addr, raw[:]) {
		p.ptr(addr)
		return
	}
	p.str("{it_interval=")
	p.timePair(raw[0:], usec)
	p.str(", it_value=")
	p.timePair(raw[16:], usec)
	p.b = append(p.b, '}')
}

const (
	utimeNow  = 1<<30 - 1
	utimeOmit = 1<<30 - 2
)

// utimes prints utimensat's times: NULL or [atime, mtime].
func (p *printer) utimes(addr uint64) {
	var raw [32]byte
	if !p.read(addr, raw[:]) {
		p.ptr(addr)
		return
	}
	p.b = append(p.b, '[')
	for i := 0; i < 2; i++ {
		if i > 0 {
			p.str(", ")
		}
		switch le64(raw[i*16+8:]) {
		case utimeNow:
			p.str("UTIME_NOW")
		case utimeOmit:
			p.str("UTIME_OMIT")
		default:
			p.timePair(raw[i*16:], false)
		}
	}
	p.b = append(p.b, ']')
}

// makedev prints a device number: makedev(0x1, 0x3).
func (p *printer) makedev(dev uint64) {
	major := (dev>>8)&0xfff | (dev>>32)&^0xfff
	minor := dev&0xff | (dev>>12)&^0xff
	p.str("makedev(")
	p.hex(major)
	p.str(", ")
	p.hex(minor)
	p.b = append(p.b, ')')
}

const (
	sIFMT  = 0170000
	sIFCHR = 0020000
	sIFBLK = 0060000
)

// stat prints the abbreviated struct stat:
// {st_mode=S_IFREG|0644, st_size=1234, ...}.
func (p *printer) stat(addr uint64) {
	var raw [144]byte
	if !p.read(addr, raw[:]) {
		p.ptr(addr)
		return
	}
	mode := uint64(le32(raw[24:]))
	p.str("{st_mode=")
	p.fileMode(mode)
	if t := mode & sIFMT; t == sIFCHR || t == sIFBLK {
		p.str(", st_rdev=")
		p.makedev(le64(raw[40:]))
	} else {
		p.str(", st_size=")
		p.int(int64(le64(raw[48:])))
	}
	p.str(", ...}")
}

// statx prints the abbreviated struct statx.
func (p *printer) statx(addr uint64) {
	var raw [256]byte
	if !p.read(addr, raw[:]) {
		p.ptr(addr)
		return
	}
	mode := uint64(le16(raw[28:]))
	p.str("{stx_mask=")
	p.flags(uint64(le32(raw[0:])), statxMaskTab, "0")
	p.str(", stx_attributes=")
	p.flags(le64(raw[8:]), statxAttrTab, "0")
	p.str(", stx_mode=")
	p.fileMode(mode)
	p.str(", stx_size=")
	p.uint(le64(raw[40:]))
	p.str(", ...}")
}

// rlimitValue prints one limit: RLIM_INFINITY, 8192*1024 or 20000.
func (p *printer) rlimitValue(v uint64, is64 bool) {
	switch {
	case v == ^uint64(0) && is64:
		p.str("RLIM64_INFINITY")
	case v == ^uint64(0):
		p.str("RLIM_INFINITY")
	case v > 0 && v%1024 == 0:
		p.uint(v / 1024)
		p.str("*1024")
	default:
		p.uint(v)
	}
}

// rlimit prints {rlim_cur=..., rlim_max=...}.
func (p *printer) rlimit(addr uint64, is64 bool) {
	var raw [16]byte
	if !p.read(addr, raw[:]) {
		p.ptr(addr)
		return
	}
	p.str("{rlim_cur=")
	p.rlimitValue(le64(raw[0:]), is64)
	p.str(", rlim_max=")
	p.rlimitValue(le64(raw[8:]), is64)
	p.b = append(p.b, '}')
}

// rusage prints the abbreviated struct rusage.
func (p *printer) rusage(addr uint64) {
	var raw [144]byte
	if !p.read(addr, raw[:]) {
		p.ptr(addr)
		return
	}
	p.str("{ru_utime=")
	p.timePair(raw[0:], true)
	p.str(", ru_stime=")
	p.timePair(raw[16:], true)
	p.str(", ...}")
}

// utsname prints {sysname="Linux", nodename="host", ...}.
func (p *printer) utsname(addr uint64) {
	var raw [2 * 65]byte
	if !p.read(addr, raw[:]) {
		p.ptr(addr)
		return
	}
	p.str("{sysname=")
	p.fixedString(raw[:65])
	p.str(", nodename=")
	p.fixedString(raw[65:])
	p.str(", ...}")
}

// fixedString prints a NUL-padded character array.
func (p *printer) fixedString(b []byte) {
	n := 0
	for n < len(b) && b[n] != 0 {
		n++
	}
	if n > maxStr {
		p.quote(b[:maxStr], true, false)
		return
	}
	p.quote(b[:n], false, false)
}

// sysinfo prints struct sysinfo in full.
func (p *printer) sysinfo(addr uint64) {
	var raw [112]byte
	if !p.read(addr, raw[:]) {
		p.ptr(addr)
		return
	}
	p.str("{uptime=")
	p.int(int64(le64(raw[0:])))
	p.str(", loads=[")
	for i := 0; i < 3; i++ {
		if i > 0 {
			p.str(", ")
		}
		p.uint(le64(raw[8+8*i:]))
	}
	p.b = append(p.b, ']')
	fields := [...]struct {
		name string
		off  int
	}{{"totalram", 32}, {"freeram", 40}, {"sharedram", 48}, {"bufferram", 56}, {"totalswap", 64}, {"freeswap", 72}}
	for _, f := range fields {
		p.str(", ")
		p.str(f.name)
		p.b = append(p.b, '=')
		p.uint(le64(raw[f.off:]))
	}
	p.str(", procs=")
	p.uint(uint64(le16(raw[80:])))
	p.str(", totalhigh=")
	p.uint(le64(raw[88:]))
	p.str(", freehigh=")
	p.uint(le64(raw[96:]))
	p.str(", mem_unit=")
	p.uint(uint64(le32(raw[104:])))
	p.b = append(p.b, '}')
}

// tms prints struct tms.
func (p *printer) tms(addr uint64) {
	var raw [32]byte
	if !p.read(addr, raw[:]) {
		p.ptr(addr)
		return
	}
	for i, name := range [...]string{"{tms_utime=", ", tms_stime=", ", tms_cutime=", ", tms_cstime="} {
		p.str(name)
		p.int(int64(le64(raw[8*i:])))
	}
	p.b = append(p.b, '}')
}

// intAt prints the C int at addr as [N].
func (p *printer) intAt(addr uint64) {
	var raw [4]byte
	if !p.read(addr, raw[:]) {
		p.ptr(addr)
		return
	}
	p.b = append(p.b, '[')
	p.int(int64(int32(le32(raw[:]))))
	p.b = append(p.b, ']')
}

// fdPair prints the two fds pipe or socketpair wrote: [3, 4].
func (p *printer) fdPair(addr uint64) {
	var raw [8]byte
	if !p.read(addr, raw[:]) {
		p.ptr(addr)
		return
	}
	p.b = append(p.b, '[')
	p.int(int64(int32(le32(raw[0:]))))
	p.str(", ")
	p.int(int64(int32(le32(raw[4:]))))
	p.b = append(p.b, ']')
}

// maxBitmapBytes bounds the fd sets and cpu masks read.
const maxBitmapBytes = 1024

// bitmap prints the set bits of size bytes at addr: [0 3 5].
func (p *printer) bitmap(addr, size uint64) {
	if size > maxBitmapBytes {
		size = maxBitmapBytes
	}
	var raw [maxBitmapBytes]byte
	if addr == 0 || !p.read(addr, raw[:size]) {
		p.ptr(addr)
		return
	}
	p.bitList(raw[:size])
}

// bitList prints the numbers of the set bits: [0 3].
func (p *printer) bitList(b []byte) {
	p.b = append(p.b, '[')
	first := true
	for i, c := range b {
		for c != 0 {
			j := bits.TrailingZeros8(c)
			c &^= 1 << j
			if !first {
				p.b = append(p.b, ' ')
			}
			first = false
			p.uint(uint64(i*8 + j))
		}
	}
	p.b = append(p.b, ']')
}

// fdSetBytes is how many bytes select reads for nfds descriptors (whole
// longs).
func fdSetBytes(nfds int64) uint64 {
	if nfds <= 0 {
		return 0
	}
	return uint64((nfds + 63) / 64 * 8)
}

// fdSet prints one of select's fd sets.
func (p *printer) fdSet(addr uint64) {
	nfds := int64(int32(p.args[0]))
	if addr == 0 || nfds < 0 {
		p.ptr(addr)
		return
	}
	size := fdSetBytes(nfds)
	if size > maxBitmapBytes {
		size = maxBitmapBytes
	}
	var raw [maxBitmapBytes]byte
	if !p.read(addr, raw[:size]) {
		p.ptr(addr)
		return
	}
	// Bits past nfds are not part of the set.
	if nfds < int64(size)*8 {
		for i := nfds; i < int64(size)*8; i++ {
			raw[i/8] &^= 1 << (i % 8)
		}
	}
	p.bitList(raw[:size])
}

// selectResult prints " (in [..], out [..], left {...})" or " (Timeout)".
func (p *printer) selectResult(r int64, pselect bool) {
	if r == 0 {
		p.str(" (Timeout)")
		return
	}
	p.str(" (")
	first := true
	for i, name := range [...]string{"in ", "out ", "except "} {
		addr := uint64(p.args[1+i])
		if addr == 0 {
			continue
		}
		// Print the set into the line, then drop it again if empty.
		mark := len(p.b)
		if !first {
			p.str(", ")
		}
		p.str(name)
		setStart := len(p.b)
		p.fdSet(addr)
		if string(p.b[setStart:]) == "[]" {
			p.b = p.b[:mark]
			continue
		}
		first = false
	}
	if t := uint64(p.args[4]); t != 0 {
		if !first {
			p.str(", ")
		}
		p.str("left ")
		p.timespec(t, !pselect)
		first = false
	}
	if first {
		// Nothing to show: drop the " (".
		p.b = p.b[:len(p.b)-2]
		return
	}
	p.b = append(p.b, ')')
}

// pselectSig prints pselect6's sixth argument:
// {sigmask=[HUP], sigsetsize=8}.
func (p *printer) pselectSig(addr uint64) {
	var raw [16]byte
	if !p.read(addr, raw[:]) {
		p.ptr(addr)
		return
	}
	p.str("{sigmask=")
	p.sigsetAt(le64(raw[0:]))
	p.str(", sigsetsize=")
	p.uint(le64(raw[8:]))
	p.b = append(p.b, '}')
}

// iovec prints an iovec array of count entries. With out, the arrays'
// buffers hold total bytes the call wrote (readv), spread in order.
func (p *printer) iovec(addr uint64, count int64, out bool, total uint64) {
	if count == 0 {
		p.str("[]")
		return
	}
	var raw [16]byte
	if count < 0 || !p.read(addr, raw[:]) {
		p.ptr(addr)
		return
	}
	p.b = append(p.b, '[')
	for i := int64(0); i < count; i++ {
		if i > 0 {
			p.str(", ")
		}
		if i == maxArray {
			p.str("...")
			break
		}
		elem := addr + uint64(i)*16
		if !p.read(elem, raw[:]) {
			p.hex(elem)
			break
		}
		base, size := le64(raw[0:]), le64(raw[8:])
		p.str("{iov_base=")
		if out && !p.ok {
			p.ptr(base)
		} else if out {
			n := size
			if n > total {
				n = total
			}
			total -= n
			p.buffer(base, n, false)
		} else {
			p.buffer(base, size, false)
		}
		p.str(", iov_len=")
		p.uint(size)
		p.b = append(p.b, '}')
	}
	p.b = append(p.b, ']')
}

// pollFds prints a pollfd array's fds and events.
func (p *printer) pollFds(addr uint64, count uint64) {
	if count == 0 {
		p.str("[]")
		return
	}
	var raw [8]byte
	if !p.read(addr, raw[:]) {
		p.ptr(addr)
		return
	}
	p.b = append(p.b, '[')
	for i := uint64(0); i < count; i++ {
		if i > 0 {
			p.str(", ")
		}
		if i == maxArray {
			p.str("...")
			break
		}
		if !p.read(addr+i*8, raw[:]) {
			p.hex(addr + i*8)
			break
		}
		p.str("{fd=")
		p.int(int64(int32(le32(raw[0:]))))
		p.str(", events=")
		p.flags(uint64(le16(raw[4:])), pollEventTab, "0")
		p.b = append(p.b, '}')
	}
	p.b = append(p.b, ']')
}

// pollResult prints the fds poll found ready: " ([{fd=1, revents=POLLOUT}])",
// then for ppoll the time left; " (Timeout)" if none were.
func (p *printer) pollResult(r int64, ppoll bool) {
	if r == 0 {
		p.str(" (Timeout)")
		return
	}
	addr := uint64(p.args[0])
	count := uint64(p.args[1]) & 0xffffffff
	var raw [8]byte
	p.str(" ([")
	shown := 0
	for i := uint64(0); i < count && shown < int(r); i++ {
		if i >= 1024 || !p.read(addr+i*8, raw[:]) {
			break
		}
		rev := uint64(le16(raw[6:]))
		if rev == 0 {
			continue
		}
		if shown > 0 {
			p.str(", ")
		}
		if shown == maxArray {
			p.str("...")
			break
		}
		shown++
		p.str("{fd=")
		p.int(int64(int32(le32(raw[0:]))))
		p.str(", revents=")
		p.flags(rev, pollEventTab, "0")
		p.b = append(p.b, '}')
	}
	p.b = append(p.b, ']')
	if t := uint64(p.args[2]); ppoll && t != 0 {
		p.str(", left ")
		p.timespec(t, false)
	}
	p.b = append(p.b, ')')
}

// epollData prints an epoll_event's data: {u32=7, u64=7}.
func (p *printer) epollEvent(raw []byte) {
	p.str("{events=")
	p.flags(uint64(le32(raw[0:])), epollEventTab, "0")
	p.str(", data={u32=")
	p.uint(uint64(le32(raw[4:])))
	p.str(", u64=")
	p.uint(le64(raw[4:]))
	p.str("}}")
}

// epollEvents prints n epoll_events (12 bytes each, packed on x86-64).
func (p *printer) epollEvents(addr uint64, n uint64) {
	if n == 0 {
		p.str("[]")
		return
	}
	var raw [12]byte
	if !p.read(addr, raw[:]) {
		p.ptr(addr)
		return
	}
	p.b = append(p.b, '[')
	for i := uint64(0); i < n; i++ {
		if i > 0 {
			p.str(", ")
		}
		if i == maxArray {
			p.str("...")
			break
		}
		if !p.read(addr+i*12, raw[:]) {
			p.hex(addr + i*12)
			break
		}
		p.epollEvent(raw[:])
	}
	p.b = append(p.b, ']')
}

// maxDirents bounds how many directory entries are counted.
const maxDirents = 1 << 16

// dirents prints a getdents buffer as its address and entry count.
func (p *printer) dirents(addr, size uint64) {
	p.ptr(addr)
	count := 0
	var raw [2]byte
	for off := uint64(0); off < size && count < maxDirents; count++ {
		// d_reclen sits at offset 16 in both dirent layouts.
		if off+18 > size || !p.read(addr+off+16, raw[:]) {
			return
		}
		reclen := uint64(le16(raw[:]))
		if reclen == 0 {
			return
		}
		off += reclen
	}
	p.str(" /* ")
	p.uint(uint64(count))
	p.str(" entries */")
}

// cloneArgs prints clone3's struct clone_args.
func (p *printer) cloneArgs(addr, size uint64) {
	var raw [88]byte
	if size < 64 || !p.read(addr, raw[:min(size, 88)]) {
		p.ptr(addr)
		return
	}
	flags := le64(raw[0:])
	p.str("{flags=")
	p.flags(flags, clone3FlagTab, "0")
	field := func(name string, off int) {
		p.str(", ")
		p.str(name)
		p.b = append(p.b, '=')
		p.ptr(le64(raw[off:]))
	}
	if flags&clonePidfd != 0 {
		field("pidfd", 8)
	}
	if flags&(cloneChildSettid|cloneChildCleartid) != 0 {
		field("child_tid", 16)
	}
	if flags&cloneParentSettid != 0 {
		field("parent_tid", 24)
	}
	p.str(", exit_signal=")
	p.signal(le64(raw[32:]))
	field("stack", 40)
	p.str(", stack_size=")
	p.hex(le64(raw[48:]))
	if flags&cloneSettls != 0 {
		field("tls", 56)
	}
	if size >= 80 && le64(raw[72:]) != 0 {
		field("set_tid", 64)
		p.str(", set_tid_size=")
		p.uint(le64(raw[72:]))
	}
	if size >= 88 && flags&cloneIntoCgroup != 0 {
		p.str(", cgroup=")
		p.uint(le64(raw[80:]))
	}
	p.b = append(p.b, '}')
}

var resolveTab = []flag{
	{1, "RESOLVE_NO_XDEV"}, {2, "RESOLVE_NO_MAGICLINKS"}, {4, "RESOLVE_NO_SYMLINKS"},
	{8, "RESOLVE_BENEATH"}, {0x10, "RESOLVE_IN_ROOT"}, {0x20, "RESOLVE_CACHED"},
}

// openHow prints openat2's struct open_how.
func (p *printer) openHow(addr uint64) {
	var raw [24]byte
	if !p.read(addr, raw[:]) {
		p.ptr(addr)
		return
	}
	flags, mode, resolve := le64(raw[0:]), le64(raw[8:]), le64(raw[16:])
	p.str("{flags=")
	p.openFlags(flags)
	if mode != 0 || needsMode(flags) {
		p.str(", mode=")
		p.octal(mode)
	}
	p.str(", resolve=")
	p.flags(resolve, resolveTab, "0")
	p.b = append(p.b, '}')
}
