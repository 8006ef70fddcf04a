package strace

// ArgKind says how one syscall argument is decoded. Kinds whose name
// starts with "Out" are written by the kernel: at entry they print as an
// address, at a successful exit they print decoded.
type ArgKind uint8

// The argument kinds. Keep kindNames in step.
const (
	// Hex is a raw value in hex (0 prints as 0).
	Hex ArgKind = iota
	// Ptr is an address: NULL or hex.
	Ptr
	// Int is a C int, decimal.
	Int
	// Uint is a C unsigned int, decimal.
	Uint
	// Long is a signed 64-bit value (off_t, long), decimal.
	Long
	// Ulong is an unsigned 64-bit value (size_t), decimal.
	Ulong
	// FD is a file descriptor.
	FD
	// DirFD is a directory descriptor of an *at call: AT_FDCWD or an fd.
	DirFD
	// Path is a NUL-terminated path name, printed whole (up to PATH_MAX).
	Path
	// Str is a NUL-terminated string, truncated like strace -s 32.
	Str
	// InBuf is an input buffer whose length is the next argument.
	InBuf
	// OutBuf is an output buffer filled with as many bytes as the call
	// returns.
	OutBuf
	// OutCwd is getcwd's buffer: a NUL-terminated path at exit.
	OutCwd
	// OutPathN is readlink's buffer: a path of as many bytes as returned.
	OutPathN
	// StrArray is a NULL-terminated array of strings (execve's argv).
	StrArray
	// EnvArray is a NULL-terminated array of strings shown as a count
	// (execve's envp).
	EnvArray
	// Mode is a permission mode, in octal.
	Mode
	// OpenFlags are open(2) flags with the access mode (O_RDONLY|...).
	OpenFlags
	// OpenMode is the mode of open/openat, printed only when the flags
	// (the previous argument) create a file.
	OpenMode
	// FileFlags are O_* flags without an access mode (pipe2, dup3, ...).
	FileFlags
	// FileMode is a mode with its file type (S_IFCHR|0644, for mknod).
	FileMode
	// Dev is a device number, printed makedev(major, minor).
	Dev
	// AtFlags are AT_SYMLINK_NOFOLLOW|AT_EMPTY_PATH|... flags.
	AtFlags
	// UnlinkFlags are unlinkat's flags (AT_REMOVEDIR).
	UnlinkFlags
	// AccessAtFlags are faccessat2's flags (AT_EACCESS|...).
	AccessAtFlags
	// AccessMode is access(2)'s mode: F_OK or R_OK|W_OK|X_OK.
	AccessMode
	// MmapProt is a PROT_* protection.
	MmapProt
	// MmapFlags are mmap's MAP_* flags.
	MmapFlags
	// MadviseAdvice is an MADV_* advice.
	MadviseAdvice
	// MremapFlags are MREMAP_* flags.
	MremapFlags
	// MsyncFlags are MS_* flags.
	MsyncFlags
	// MlockallFlags are MCL_* flags.
	MlockallFlags
	// CloneFlags are CLONE_* flags with the exit signal in the low byte.
	CloneFlags
	// CloneArgs is clone3's struct clone_args.
	CloneArgs
	// WaitOptions are wait4/waitid options (WNOHANG|...).
	WaitOptions
	// OutWaitStatus is wait4's status word.
	OutWaitStatus
	// Signal is a signal number.
	Signal
	// SigSet is an input sigset_t.
	SigSet
	// OutSigSet is an output sigset_t.
	OutSigSet
	// SigAction is an input struct sigaction.
	SigAction
	// OutSigAction is an output struct sigaction.
	OutSigAction
	// SigHow is sigprocmask's how (SIG_BLOCK...).
	SigHow
	// SigStack is an input stack_t (sigaltstack).
	SigStack
	// OutSigStack is an output stack_t.
	OutSigStack
	// FcntlCmd is an fcntl command; the argument after it follows it.
	FcntlCmd
	// IoctlReq is an ioctl request; the argument after it follows it.
	IoctlReq
	// FutexOp is a futex operation; the arguments after it follow it.
	FutexOp
	// ClockID is a clock id (CLOCK_MONOTONIC...).
	ClockID
	// Timespec is an input struct timespec.
	Timespec
	// OutTimespec is an output struct timespec.
	OutTimespec
	// Timeval is an input struct timeval.
	Timeval
	// OutTimeval is an output struct timeval.
	OutTimeval
	// Itimerval is an input struct itimerval.
	Itimerval
	// OutItimerval is an output struct itimerval.
	OutItimerval
	// Itimerspec is an input struct itimerspec.
	Itimerspec
	// OutItimerspec is an output struct itimerspec.
	OutItimerspec
	// ItimerWhich is ITIMER_REAL, ITIMER_VIRTUAL or ITIMER_PROF.
	ItimerWhich
	// TimerFlags are TIMER_ABSTIME / TFD_TIMER_* flags.
	TimerFlags
	// Utimes is utimensat's pair of timespecs.
	Utimes
	// OutStat is an output struct stat.
	OutStat
	// OutStatx is an output struct statx.
	OutStatx
	// StatxMask is a STATX_* mask.
	StatxMask
	// StatxFlags are statx's AT_* flags.
	StatxFlags
	// Iovec is an input iovec array whose count is the next argument.
	Iovec
	// OutIovec is an iovec array whose buffers the call fills with the
	// returned bytes; before that (and on failure) the buffers print as
	// addresses.
	OutIovec
	// PollFds is a pollfd array (count next); revents print after the
	// return value.
	PollFds
	// EpollEvent is an input struct epoll_event.
	EpollEvent
	// OutEpollEvents is an array of as many epoll_events as returned.
	OutEpollEvents
	// EpollCtlOp is EPOLL_CTL_ADD/MOD/DEL.
	EpollCtlOp
	// SockFamily is an address family (AF_INET...).
	SockFamily
	// SockType is a socket type with SOCK_NONBLOCK|SOCK_CLOEXEC.
	SockType
	// SockProto is a protocol, named after the family (argument 0).
	SockProto
	// Sockaddr is an input socket address whose length is the next
	// argument.
	Sockaddr
	// OutSockaddr is an output socket address whose length pointer is
	// the next argument.
	OutSockaddr
	// InOutLen is a socklen_t pointer ([16]).
	InOutLen
	// MsgFlags are MSG_* flags.
	MsgFlags
	// ShutdownHow is SHUT_RD/SHUT_WR/SHUT_RDWR.
	ShutdownHow
	// SockLevel is a setsockopt level (SOL_SOCKET...).
	SockLevel
	// SockOpt is a socket option name, named after the level (previous
	// argument).
	SockOpt
	// InInt is a pointer to an input int ([1]).
	InInt
	// OutInt is a pointer to an output int.
	OutInt
	// OutFdPair is a pair of fds written by pipe/socketpair.
	OutFdPair
	// ArchPrctlCode is an ARCH_* code.
	ArchPrctlCode
	// PrctlOption is a PR_* option; the arguments after it follow it.
	PrctlOption
	// RlimitResource is an RLIMIT_* resource.
	RlimitResource
	// Rlimit is an input struct rlimit.
	Rlimit
	// OutRlimit is an output struct rlimit.
	OutRlimit
	// Rlimit64 is prlimit64's input struct rlimit64.
	Rlimit64
	// OutRlimit64 is prlimit64's output struct rlimit64.
	OutRlimit64
	// RusageWho is RUSAGE_SELF/CHILDREN/THREAD.
	RusageWho
	// OutRusage is an output struct rusage.
	OutRusage
	// Whence is lseek's SEEK_*.
	Whence
	// OutDirents is a getdents buffer, shown with its entry count.
	OutDirents
	// OutUtsname is uname's struct utsname.
	OutUtsname
	// OutSysinfo is struct sysinfo.
	OutSysinfo
	// OutTms is struct tms.
	OutTms
	// FdSet is select's fd_set (in and out); its size is argument 0.
	FdSet
	// GetrandomFlags are GRND_* flags.
	GetrandomFlags
	// OutRandom is getrandom's buffer, in hex.
	OutRandom
	// ID is a uid, gid or pid: decimal, -1 as -1.
	ID
	// CPUSet is a cpu mask whose size is the previous argument.
	CPUSet
	// OutCPUSet is an output cpu mask whose size is the return value.
	OutCPUSet
	// EventfdFlags are EFD_* flags.
	EventfdFlags
	// TimerfdFlags are TFD_* flags.
	TimerfdFlags
	// EpollFlags are EPOLL_CLOEXEC flags.
	EpollFlags
	// MemfdFlags are MFD_* flags.
	MemfdFlags
	// SignalfdFlags are SFD_* flags.
	SignalfdFlags
	// InotifyFlags are IN_NONBLOCK|IN_CLOEXEC.
	InotifyFlags
	// RenameFlags are RENAME_* flags.
	RenameFlags
	// FlockOp is flock's LOCK_* operation.
	FlockOp
	// MountFlags are MS_* mount flags.
	MountFlags
	// UmountFlags are MNT_* umount flags.
	UmountFlags
	// CloseRangeFlags are CLOSE_RANGE_* flags.
	CloseRangeFlags
	// SigInfo is an input siginfo_t, shown as an address.
	SigInfo
	// PselectSig is pselect6's {sigmask, sigsetsize} pair.
	PselectSig
	// SockOptVal is a setsockopt value whose length is the next argument.
	SockOptVal
	// OutSockOptVal is a getsockopt value whose length pointer is the
	// next argument.
	OutSockOptVal
	// IDType is waitid's P_* id type.
	IDType
	// UnshareFlags are CLONE_NEW* flags of unshare and setns.
	UnshareFlags
	// SockFlags are SOCK_NONBLOCK|SOCK_CLOEXEC (accept4).
	SockFlags
	// OpenHow is openat2's struct open_how.
	OpenHow
	// Msghdr is an input struct msghdr (sendmsg).
	Msghdr
	// OutMsghdr is recvmsg's struct msghdr: only its msg_namelen before
	// the call (and on failure), all of it after.
	OutMsghdr
	// Skip is a register the call does not use as an argument (the high
	// half of preadv2's offset); it prints nothing.
	Skip
	numKinds
)

var kindNames = [numKinds]string{
	Hex: "hex", Ptr: "pointer", Int: "int", Uint: "uint", Long: "long",
	Ulong: "ulong", FD: "fd", DirFD: "dirfd", Path: "path", Str: "string",
	InBuf: "inbuf", OutBuf: "outbuf", OutCwd: "outcwd", OutPathN: "outpath",
	StrArray: "argv", EnvArray: "envp", Mode: "mode", OpenFlags: "openflags",
	OpenMode: "openmode", FileFlags: "fileflags", FileMode: "filemode", Dev: "dev",
	AtFlags: "atflags", UnlinkFlags: "unlinkflags", AccessAtFlags: "accessatflags",
	AccessMode: "accessmode", MmapProt: "prot", MmapFlags: "mmapflags",
	MadviseAdvice: "madvice", MremapFlags: "mremapflags", MsyncFlags: "msyncflags",
	MlockallFlags: "mlockallflags", CloneFlags: "cloneflags", CloneArgs: "clone_args",
	WaitOptions: "waitoptions", OutWaitStatus: "outwaitstatus", Signal: "signal",
	SigSet: "sigset", OutSigSet: "outsigset", SigAction: "sigaction",
	OutSigAction: "outsigaction", SigHow: "sighow", SigStack: "stack_t",
	OutSigStack: "outstack_t", FcntlCmd: "fcntlcmd", IoctlReq: "ioctlreq",
	FutexOp: "futexop", ClockID: "clockid", Timespec: "timespec",
	OutTimespec: "outtimespec", Timeval: "timeval", OutTimeval: "outtimeval",
	Itimerval: "itimerval", OutItimerval: "outitimerval", Itimerspec: "itimerspec",
	OutItimerspec: "outitimerspec", ItimerWhich: "itimerwhich", TimerFlags: "timerflags",
	Utimes: "utimes", OutStat: "outstat", OutStatx: "outstatx", StatxMask: "statxmask",
	StatxFlags: "statxflags", Iovec: "iovec", OutIovec: "outiovec", PollFds: "pollfds",
	EpollEvent: "epoll_event", OutEpollEvents: "outepoll_events", EpollCtlOp: "epollctlop",
	SockFamily: "family", SockType: "socktype", SockProto: "protocol", Sockaddr: "sockaddr",
	OutSockaddr: "outsockaddr", InOutLen: "socklenptr", MsgFlags: "msgflags",
	ShutdownHow: "shutdownhow", SockLevel: "socklevel", SockOpt: "sockopt",
	InInt: "intptr", OutInt: "outintptr", OutFdPair: "outfdpair",
	ArchPrctlCode: "archprctlcode", PrctlOption: "prctloption",
	RlimitResource: "rlimitresource", Rlimit: "rlimit", OutRlimit: "outrlimit",
	Rlimit64: "rlimit64", OutRlimit64: "outrlimit64", RusageWho: "rusagewho",
	OutRusage: "outrusage", Whence: "whence", OutDirents: "outdirents",
	OutUtsname: "oututsname", OutSysinfo: "outsysinfo", OutTms: "outtms",
	FdSet: "fdset", GetrandomFlags: "getrandomflags", OutRandom: "outrandom", ID: "id",
	CPUSet: "cpuset", OutCPUSet: "outcpuset", EventfdFlags: "eventfdflags",
	TimerfdFlags: "timerfdflags", EpollFlags: "epollflags", MemfdFlags: "memfdflags",
	SignalfdFlags: "signalfdflags", InotifyFlags: "inotifyflags",
	RenameFlags: "renameflags", FlockOp: "flockop", MountFlags: "mountflags",
	UmountFlags: "umountflags", CloseRangeFlags: "closerangeflags", SigInfo: "siginfo",
	PselectSig: "pselectsig", SockOptVal: "sockoptval", OutSockOptVal: "outsockoptval",
	IDType: "idtype", UnshareFlags: "unshareflags", SockFlags: "sockflags",
	OpenHow: "open_how", Msghdr: "msghdr", OutMsghdr: "outmsghdr", Skip: "unused",
}

// String returns the kind's short name, as the syscall documentation
// shows it.
func (k ArgKind) String() string {
	if k < numKinds && kindNames[k] != "" {
		return kindNames[k]
	}
	return "kind?"
}

// isOut reports whether the kernel writes the argument, so that it is
// decoded only at a successful exit.
func (k ArgKind) isOut() bool {
	switch k {
	case OutBuf, OutCwd, OutPathN, OutWaitStatus, OutSigSet, OutSigAction,
		OutSigStack, OutTimespec, OutTimeval, OutItimerval, OutItimerspec,
		OutStat, OutStatx, OutEpollEvents, OutSockaddr, OutInt,
		OutFdPair, OutRlimit, OutRlimit64, OutRusage, OutDirents, OutUtsname,
		OutSysinfo, OutTms, OutRandom, OutCPUSet, OutSockOptVal:
		return true
	}
	return false
}
