package strace

import "sync"

// flag names one bit (or a group of bits that must all be set) of a flag
// word. Tables list flags in the order strace prints them; a group listed
// before its members (O_SYNC before O_DSYNC) consumes them.
type flag struct {
	v    uint64
	name string
}

// names maps the values of an enumeration to their names.
//
// The package's tables of names are sync.OnceValue functions rather than
// map variables: a map variable is built when the package is initialised,
// in every runsc process (runsc do, the gofer), where only a Sentry that
// traces (--strace) ever reads them.
type names map[uint64]string

// flags prints v as flag names joined by '|', with bits no name covers in
// hex at the end; v == 0 prints zero.
func (p *printer) flags(v uint64, tab []flag, zero string) {
	if v == 0 {
		p.str(zero)
		return
	}
	first := true
	for _, f := range tab {
		if f.v != 0 && v&f.v == f.v {
			if !first {
				p.b = append(p.b, '|')
			}
			p.str(f.name)
			v &^= f.v
			first = false
		}
	}
	if v != 0 {
		if !first {
			p.b = append(p.b, '|')
		}
		p.hex(v)
	}
}

// flagsTail prints the flags of v after something already printed,
// each preceded by '|'.
func (p *printer) flagsTail(v uint64, tab []flag) {
	if v == 0 {
		return
	}
	p.b = append(p.b, '|')
	p.flags(v, tab, "0")
}

// enum prints v's name, or "0x.. /* PREFIX_??? */" if it has none.
func (p *printer) enum(v uint64, tab names, prefix string) {
	if s, ok := tab[v]; ok {
		p.str(s)
		return
	}
	p.unknownEnum(v, prefix)
}

func (p *printer) unknownEnum(v uint64, prefix string) {
	p.hex(v)
	p.str(" /* ")
	p.str(prefix)
	p.str("??? */")
}

// File flags.

var accModes = sync.OnceValue(func() names { return names{0: "O_RDONLY", 1: "O_WRONLY", 2: "O_RDWR", 3: "O_ACCMODE"} })

var openFlagTab = []flag{
	{0100, "O_CREAT"}, {0200, "O_EXCL"}, {0400, "O_NOCTTY"}, {01000, "O_TRUNC"},
	{02000, "O_APPEND"}, {04000, "O_NONBLOCK"}, {04010000, "O_SYNC"}, {010000, "O_DSYNC"},
	{040000, "O_DIRECT"}, {0100000, "O_LARGEFILE"}, {0400000, "O_NOFOLLOW"},
	{01000000, "O_NOATIME"}, {02000000, "O_CLOEXEC"}, {010000000, "O_PATH"},
	{020200000, "O_TMPFILE"}, {0200000, "O_DIRECTORY"}, {020000, "FASYNC"},
}

const (
	oCreat   = 0100
	oTmpfile = 020000000 // __O_TMPFILE
)

// openFlags prints O_RDONLY|O_CLOEXEC...: the access mode, then the flags.
func (p *printer) openFlags(v uint64) {
	v &= 0xffffffff
	p.str(accModes()[v&3])
	p.flagsTail(v&^3, openFlagTab)
}

// needsMode reports whether open flags take a mode argument.
func needsMode(flags uint64) bool {
	return flags&oCreat != 0 || flags&oTmpfile == oTmpfile
}

var atFlagTab = []flag{
	{0x100, "AT_SYMLINK_NOFOLLOW"}, {0x400, "AT_SYMLINK_FOLLOW"}, {0x800, "AT_NO_AUTOMOUNT"},
	{0x1000, "AT_EMPTY_PATH"}, {0x8000, "AT_RECURSIVE"},
}

var unlinkFlagTab = []flag{{0x200, "AT_REMOVEDIR"}}

var accessAtFlagTab = []flag{
	{0x100, "AT_SYMLINK_NOFOLLOW"}, {0x200, "AT_EACCESS"}, {0x1000, "AT_EMPTY_PATH"},
}

var accessModeTab = []flag{{4, "R_OK"}, {2, "W_OK"}, {1, "X_OK"}}

var statxSync = sync.OnceValue(func() names {
	return names{0: "AT_STATX_SYNC_AS_STAT", 0x2000: "AT_STATX_FORCE_SYNC", 0x4000: "AT_STATX_DONT_SYNC"}
})

func (p *printer) statxFlags(v uint64) {
	v &= 0xffffffff
	if s, ok := statxSync()[v&0x6000]; ok {
		p.str(s)
		v &^= 0x6000
	} else {
		p.str("AT_STATX_SYNC_AS_STAT")
	}
	p.flagsTail(v, atFlagTab)
}

var statxMaskTab = []flag{
	{0xfff, "STATX_ALL"}, {0x7ff, "STATX_BASIC_STATS"},
	{0x1, "STATX_TYPE"}, {0x2, "STATX_MODE"}, {0x4, "STATX_NLINK"}, {0x8, "STATX_UID"},
	{0x10, "STATX_GID"}, {0x20, "STATX_ATIME"}, {0x40, "STATX_MTIME"}, {0x80, "STATX_CTIME"},
	{0x100, "STATX_INO"}, {0x200, "STATX_SIZE"}, {0x400, "STATX_BLOCKS"}, {0x800, "STATX_BTIME"},
	{0x1000, "STATX_MNT_ID"}, {0x2000, "STATX_DIOALIGN"}, {0x4000, "STATX_MNT_ID_UNIQUE"},
	{0x8000, "STATX_SUBVOL"}, {0x10000, "STATX_WRITE_ATOMIC"}, {0x20000, "STATX_DIO_READ_ALIGN"},
}

var statxAttrTab = []flag{
	{0x4, "STATX_ATTR_COMPRESSED"}, {0x10, "STATX_ATTR_IMMUTABLE"}, {0x20, "STATX_ATTR_APPEND"},
	{0x40, "STATX_ATTR_NODUMP"}, {0x800, "STATX_ATTR_ENCRYPTED"}, {0x1000, "STATX_ATTR_AUTOMOUNT"},
	{0x2000, "STATX_ATTR_MOUNT_ROOT"}, {0x100000, "STATX_ATTR_VERITY"}, {0x200000, "STATX_ATTR_DAX"},
	{0x400000, "STATX_ATTR_WRITE_ATOMIC"},
}

var fileTypes = sync.OnceValue(func() names {
	return names{
		0140000: "S_IFSOCK", 0120000: "S_IFLNK", 0100000: "S_IFREG", 0060000: "S_IFBLK",
		0040000: "S_IFDIR", 0020000: "S_IFCHR", 0010000: "S_IFIFO",
	}
})

var modeSpecialTab = []flag{{04000, "S_ISUID"}, {02000, "S_ISGID"}, {01000, "S_ISVTX"}}

// fileMode prints S_IFREG|S_ISUID|0755 style modes.
func (p *printer) fileMode(v uint64) {
	v &= 0xffffffff
	first := true
	if t, ok := fileTypes()[v&0170000]; ok {
		p.str(t)
		v &^= 0170000
		first = false
	}
	for _, f := range modeSpecialTab {
		if v&f.v != 0 {
			if !first {
				p.b = append(p.b, '|')
			}
			p.str(f.name)
			v &^= f.v
			first = false
		}
	}
	if !first {
		p.b = append(p.b, '|')
	}
	p.octal(v)
}

var seekWhence = sync.OnceValue(func() names {
	return names{0: "SEEK_SET", 1: "SEEK_CUR", 2: "SEEK_END", 3: "SEEK_DATA", 4: "SEEK_HOLE"}
})

var renameFlagTab = []flag{{1, "RENAME_NOREPLACE"}, {2, "RENAME_EXCHANGE"}, {4, "RENAME_WHITEOUT"}}

var flockTab = []flag{
	{1, "LOCK_SH"}, {2, "LOCK_EX"}, {8, "LOCK_UN"}, {4, "LOCK_NB"},
	{32, "LOCK_MAND"}, {64, "LOCK_READ"}, {128, "LOCK_WRITE"},
}

var mountFlagTab = []flag{
	{1, "MS_RDONLY"}, {2, "MS_NOSUID"}, {4, "MS_NODEV"}, {8, "MS_NOEXEC"},
	{16, "MS_SYNCHRONOUS"}, {32, "MS_REMOUNT"}, {64, "MS_MANDLOCK"}, {128, "MS_DIRSYNC"},
	{256, "MS_NOSYMFOLLOW"}, {1024, "MS_NOATIME"}, {2048, "MS_NODIRATIME"}, {4096, "MS_BIND"},
	{8192, "MS_MOVE"}, {16384, "MS_REC"}, {32768, "MS_SILENT"}, {1 << 16, "MS_POSIXACL"},
	{1 << 17, "MS_UNBINDABLE"}, {1 << 18, "MS_PRIVATE"}, {1 << 19, "MS_SLAVE"},
	{1 << 20, "MS_SHARED"}, {1 << 21, "MS_RELATIME"}, {1 << 22, "MS_KERNMOUNT"},
	{1 << 23, "MS_I_VERSION"}, {1 << 24, "MS_STRICTATIME"}, {1 << 25, "MS_LAZYTIME"},
}

func (p *printer) mountFlags(v uint64) {
	if v&0xffff0000 == 0xc0ed0000 {
		p.str("MS_MGC_VAL")
		p.flagsTail(v&^0xffff0000, mountFlagTab)
		return
	}
	p.flags(v, mountFlagTab, "0")
}

var umountFlagTab = []flag{{1, "MNT_FORCE"}, {2, "MNT_DETACH"}, {4, "MNT_EXPIRE"}, {8, "UMOUNT_NOFOLLOW"}}

var closeRangeTab = []flag{{2, "CLOSE_RANGE_UNSHARE"}, {4, "CLOSE_RANGE_CLOEXEC"}}

var eventfdTab = []flag{{1, "EFD_SEMAPHORE"}, {0x80000, "EFD_CLOEXEC"}, {0x800, "EFD_NONBLOCK"}}

var timerfdTab = []flag{{0x80000, "TFD_CLOEXEC"}, {0x800, "TFD_NONBLOCK"}}

var epollCreateTab = []flag{{0x80000, "EPOLL_CLOEXEC"}}

var memfdTab = []flag{
	{1, "MFD_CLOEXEC"}, {2, "MFD_ALLOW_SEALING"}, {4, "MFD_HUGETLB"},
	{8, "MFD_NOEXEC_SEAL"}, {0x10, "MFD_EXEC"},
}

var signalfdTab = []flag{{0x80000, "SFD_CLOEXEC"}, {0x800, "SFD_NONBLOCK"}}

var inotifyTab = []flag{{0x800, "IN_NONBLOCK"}, {0x80000, "IN_CLOEXEC"}}

var getrandomTab = []flag{{1, "GRND_NONBLOCK"}, {2, "GRND_RANDOM"}, {4, "GRND_INSECURE"}}

// Memory flags.

var protTab = []flag{
	{1, "PROT_READ"}, {2, "PROT_WRITE"}, {4, "PROT_EXEC"}, {8, "PROT_SEM"},
	{0x01000000, "PROT_GROWSDOWN"}, {0x02000000, "PROT_GROWSUP"},
}

var mapTypes = sync.OnceValue(func() names { return names{1: "MAP_SHARED", 2: "MAP_PRIVATE", 3: "MAP_SHARED_VALIDATE"} })

var mapFlagTab = []flag{
	{0x10, "MAP_FIXED"}, {0x20, "MAP_ANONYMOUS"}, {0x40, "MAP_32BIT"}, {0x4000, "MAP_NORESERVE"},
	{0x8000, "MAP_POPULATE"}, {0x10000, "MAP_NONBLOCK"}, {0x100, "MAP_GROWSDOWN"},
	{0x800, "MAP_DENYWRITE"}, {0x1000, "MAP_EXECUTABLE"}, {0x2000, "MAP_LOCKED"},
	{0x20000, "MAP_STACK"}, {0x40000, "MAP_HUGETLB"}, {0x80000, "MAP_SYNC"},
	{0x100000, "MAP_FIXED_NOREPLACE"},
}

const (
	mapHugeShift = 26
	mapHugeMask  = 0x3f
)

// mmapFlags prints the mapping type, the flags, then the huge page size.
func (p *printer) mmapFlags(v uint64) {
	v &= 0xffffffff
	if t, ok := mapTypes()[v&0xf]; ok {
		p.str(t)
	} else {
		p.unknownEnum(v&0xf, "MAP_")
	}
	huge := (v >> mapHugeShift) & mapHugeMask
	v &^= 0xf | mapHugeMask<<mapHugeShift
	p.flagsTail(v, mapFlagTab)
	if huge != 0 {
		p.b = append(p.b, '|')
		p.uint(huge)
		p.str("<<MAP_HUGE_SHIFT")
	}
}

var madvise = sync.OnceValue(func() names {
	return names{
		0: "MADV_NORMAL", 1: "MADV_RANDOM", 2: "MADV_SEQUENTIAL", 3: "MADV_WILLNEED",
		4: "MADV_DONTNEED", 8: "MADV_FREE", 9: "MADV_REMOVE", 10: "MADV_DONTFORK",
		11: "MADV_DOFORK", 12: "MADV_MERGEABLE", 13: "MADV_UNMERGEABLE", 14: "MADV_HUGEPAGE",
		15: "MADV_NOHUGEPAGE", 16: "MADV_DONTDUMP", 17: "MADV_DODUMP", 18: "MADV_WIPEONFORK",
		19: "MADV_KEEPONFORK", 20: "MADV_COLD", 21: "MADV_PAGEOUT", 22: "MADV_POPULATE_READ",
		23: "MADV_POPULATE_WRITE", 24: "MADV_DONTNEED_LOCKED", 25: "MADV_COLLAPSE",
		100: "MADV_HWPOISON", 101: "MADV_SOFT_OFFLINE", 102: "MADV_GUARD_INSTALL",
		103: "MADV_GUARD_REMOVE",
	}
})

var mremapTab = []flag{{1, "MREMAP_MAYMOVE"}, {2, "MREMAP_FIXED"}, {4, "MREMAP_DONTUNMAP"}}

var msyncTab = []flag{{1, "MS_ASYNC"}, {4, "MS_SYNC"}, {2, "MS_INVALIDATE"}}

var mlockallTab = []flag{{1, "MCL_CURRENT"}, {2, "MCL_FUTURE"}, {4, "MCL_ONFAULT"}}

// Process flags.

// cloneFlagTab lists clone(2)'s flags; the low byte is the exit signal.
var cloneFlagTab = []flag{
	{0x100, "CLONE_VM"}, {0x200, "CLONE_FS"}, {0x400, "CLONE_FILES"}, {0x800, "CLONE_SIGHAND"},
	{0x1000, "CLONE_PIDFD"}, {0x2000, "CLONE_PTRACE"}, {0x4000, "CLONE_VFORK"},
	{0x8000, "CLONE_PARENT"}, {0x10000, "CLONE_THREAD"}, {0x20000, "CLONE_NEWNS"},
	{0x40000, "CLONE_SYSVSEM"}, {0x80000, "CLONE_SETTLS"}, {0x100000, "CLONE_PARENT_SETTID"},
	{0x200000, "CLONE_CHILD_CLEARTID"}, {0x800000, "CLONE_UNTRACED"},
	{0x1000000, "CLONE_CHILD_SETTID"}, {0x2000000, "CLONE_NEWCGROUP"},
	{0x4000000, "CLONE_NEWUTS"}, {0x8000000, "CLONE_NEWIPC"}, {0x10000000, "CLONE_NEWUSER"},
	{0x20000000, "CLONE_NEWPID"}, {0x40000000, "CLONE_NEWNET"}, {0x80000000, "CLONE_IO"},
}

// clone3FlagTab adds the flags only clone3 and unshare take.
var clone3FlagTab = append([]flag{{0x80, "CLONE_NEWTIME"}}, append(cloneFlagTab[:len(cloneFlagTab):len(cloneFlagTab)],
	flag{0x100000000, "CLONE_CLEAR_SIGHAND"}, flag{0x200000000, "CLONE_INTO_CGROUP"})...)

const (
	cloneVM            = 0x100
	clonePidfd         = 0x1000
	cloneSettls        = 0x80000
	cloneParentSettid  = 0x100000
	cloneChildCleartid = 0x200000
	cloneChildSettid   = 0x1000000
	cloneIntoCgroup    = 0x200000000
)

var waitOptionTab = []flag{
	{1, "WNOHANG"}, {4, "WEXITED"}, {2, "WSTOPPED"}, {8, "WCONTINUED"}, {0x1000000, "WNOWAIT"},
	{0x80000000, "__WCLONE"}, {0x40000000, "__WALL"}, {0x20000000, "__WNOTHREAD"},
}

var idTypes = sync.OnceValue(func() names { return names{0: "P_ALL", 1: "P_PID", 2: "P_PGID", 3: "P_PIDFD"} })

var rlimits = sync.OnceValue(func() names {
	return names{
		0: "RLIMIT_CPU", 1: "RLIMIT_FSIZE", 2: "RLIMIT_DATA", 3: "RLIMIT_STACK", 4: "RLIMIT_CORE",
		5: "RLIMIT_RSS", 6: "RLIMIT_NPROC", 7: "RLIMIT_NOFILE", 8: "RLIMIT_MEMLOCK", 9: "RLIMIT_AS",
		10: "RLIMIT_LOCKS", 11: "RLIMIT_SIGPENDING", 12: "RLIMIT_MSGQUEUE", 13: "RLIMIT_NICE",
		14: "RLIMIT_RTPRIO", 15: "RLIMIT_RTTIME",
	}
})

var rusageWho = sync.OnceValue(func() names { return names{0: "RUSAGE_SELF", 0xffffffff: "RUSAGE_CHILDREN", 1: "RUSAGE_THREAD"} })

var clocks = sync.OnceValue(func() names {
	return names{
		0: "CLOCK_REALTIME", 1: "CLOCK_MONOTONIC", 2: "CLOCK_PROCESS_CPUTIME_ID",
		3: "CLOCK_THREAD_CPUTIME_ID", 4: "CLOCK_MONOTONIC_RAW", 5: "CLOCK_REALTIME_COARSE",
		6: "CLOCK_MONOTONIC_COARSE", 7: "CLOCK_BOOTTIME", 8: "CLOCK_REALTIME_ALARM",
		9: "CLOCK_BOOTTIME_ALARM", 10: "CLOCK_SGI_CYCLE", 11: "CLOCK_TAI",
	}
})

var itimers = sync.OnceValue(func() names { return names{0: "ITIMER_REAL", 1: "ITIMER_VIRTUAL", 2: "ITIMER_PROF"} })

var timerFlagTab = []flag{{1, "TIMER_ABSTIME"}}

var timerfdSetTab = []flag{{1, "TFD_TIMER_ABSTIME"}, {2, "TFD_TIMER_CANCEL_ON_SET"}}

var archPrctl = sync.OnceValue(func() names {
	return names{
		0x1001: "ARCH_SET_GS", 0x1002: "ARCH_SET_FS", 0x1003: "ARCH_GET_FS", 0x1004: "ARCH_GET_GS",
		0x1011: "ARCH_GET_CPUID", 0x1012: "ARCH_SET_CPUID", 0x1021: "ARCH_GET_XCOMP_SUPP",
		0x1022: "ARCH_GET_XCOMP_PERM", 0x1023: "ARCH_REQ_XCOMP_PERM",
		0x1024: "ARCH_GET_XCOMP_GUEST_PERM", 0x1025: "ARCH_REQ_XCOMP_GUEST_PERM",
		0x1026: "ARCH_XCOMP_TILECFG", 0x1027: "ARCH_XCOMP_TILEDATA",
		0x2001: "ARCH_MAP_VDSO_X32", 0x2002: "ARCH_MAP_VDSO_32", 0x2003: "ARCH_MAP_VDSO_64",
		0x4001: "ARCH_GET_UNTAG_MASK", 0x4002: "ARCH_ENABLE_TAGGED_ADDR",
		0x4003: "ARCH_GET_MAX_TAG_BITS", 0x4004: "ARCH_FORCE_TAGGED_SVA",
		0x5001: "ARCH_SHSTK_ENABLE", 0x5002: "ARCH_SHSTK_DISABLE", 0x5003: "ARCH_SHSTK_LOCK",
		0x5004: "ARCH_SHSTK_UNLOCK", 0x5005: "ARCH_SHSTK_STATUS",
	}
})

var capabilities = sync.OnceValue(func() names {
	return names{
		0: "CAP_CHOWN", 1: "CAP_DAC_OVERRIDE", 2: "CAP_DAC_READ_SEARCH", 3: "CAP_FOWNER",
		4: "CAP_FSETID", 5: "CAP_KILL", 6: "CAP_SETGID", 7: "CAP_SETUID", 8: "CAP_SETPCAP",
		9: "CAP_LINUX_IMMUTABLE", 10: "CAP_NET_BIND_SERVICE", 11: "CAP_NET_BROADCAST",
		12: "CAP_NET_ADMIN", 13: "CAP_NET_RAW", 14: "CAP_IPC_LOCK", 15: "CAP_IPC_OWNER",
		16: "CAP_SYS_MODULE", 17: "CAP_SYS_RAWIO", 18: "CAP_SYS_CHROOT", 19: "CAP_SYS_PTRACE",
		20: "CAP_SYS_PACCT", 21: "CAP_SYS_ADMIN", 22: "CAP_SYS_BOOT", 23: "CAP_SYS_NICE",
		24: "CAP_SYS_RESOURCE", 25: "CAP_SYS_TIME", 26: "CAP_SYS_TTY_CONFIG", 27: "CAP_MKNOD",
		28: "CAP_LEASE", 29: "CAP_AUDIT_WRITE", 30: "CAP_AUDIT_CONTROL", 31: "CAP_SETFCAP",
		32: "CAP_MAC_OVERRIDE", 33: "CAP_MAC_ADMIN", 34: "CAP_SYSLOG", 35: "CAP_WAKE_ALARM",
		36: "CAP_BLOCK_SUSPEND", 37: "CAP_AUDIT_READ", 38: "CAP_PERFMON", 39: "CAP_BPF",
		40: "CAP_CHECKPOINT_RESTORE",
	}
})

var epollOps = sync.OnceValue(func() names { return names{1: "EPOLL_CTL_ADD", 2: "EPOLL_CTL_DEL", 3: "EPOLL_CTL_MOD"} })

var epollEventTab = []flag{
	{0x1, "EPOLLIN"}, {0x2, "EPOLLPRI"}, {0x4, "EPOLLOUT"}, {0x8, "EPOLLERR"}, {0x10, "EPOLLHUP"},
	{0x20, "EPOLLNVAL"}, {0x40, "EPOLLRDNORM"}, {0x80, "EPOLLRDBAND"}, {0x100, "EPOLLWRNORM"},
	{0x200, "EPOLLWRBAND"}, {0x400, "EPOLLMSG"}, {0x2000, "EPOLLRDHUP"},
	{1 << 28, "EPOLLEXCLUSIVE"}, {1 << 29, "EPOLLWAKEUP"}, {1 << 30, "EPOLLONESHOT"},
	{1 << 31, "EPOLLET"},
}

var pollEventTab = []flag{
	{0x1, "POLLIN"}, {0x2, "POLLPRI"}, {0x4, "POLLOUT"}, {0x8, "POLLERR"}, {0x10, "POLLHUP"},
	{0x20, "POLLNVAL"}, {0x40, "POLLRDNORM"}, {0x80, "POLLRDBAND"}, {0x100, "POLLWRNORM"},
	{0x200, "POLLWRBAND"}, {0x400, "POLLMSG"}, {0x1000, "POLLREMOVE"}, {0x2000, "POLLRDHUP"},
}
