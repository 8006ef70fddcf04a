package strace

// arg prints argument i as kind k, preceded by a separator. Kinds the
// kernel writes print as addresses unless the call returned successfully.
func (p *printer) arg(i int, k ArgKind) {
	if k == Skip {
		return
	}
	v := uint64(p.args[i])
	if k == OpenMode && !needsMode(p.prev(i)) {
		return
	}
	p.sep()
	if p.ok && (p.sysno == sysExecve || p.sysno == sysExecveat) && (k == Path || k == StrArray || k == EnvArray) {
		// A successful execve replaced the memory these pointed into.
		p.ptr(v)
		return
	}
	if k.isOut() && !p.ok && !p.interruptedSleep(k) {
		p.ptr(v)
		return
	}
	if k == OutTimespec && p.ok && (p.sysno == sysNanosleep || p.sysno == sysClockNanosleep) {
		// The time left is written only when a signal cut the sleep.
		p.ptr(v)
		return
	}
	p.value(i, k, v)
}

// interruptedSleep reports whether k is the time left of a sleep that a
// signal interrupted, which the kernel writes although the call failed.
func (p *printer) interruptedSleep(k ArgKind) bool {
	if k != OutTimespec || !p.exit || (p.sysno != sysNanosleep && p.sysno != sysClockNanosleep) {
		return false
	}
	switch e := -int64(p.ret); e {
	case int64(errEINTR), 512, 513, 514, 516:
		return true
	}
	return false
}

// next returns argument i+1, or 0 past the end.
func (p *printer) next(i int) uint64 {
	if i+1 < len(p.args) {
		return uint64(p.args[i+1])
	}
	return 0
}

// prev returns argument i-1, or 0 before the start.
func (p *printer) prev(i int) uint64 {
	if i > 0 {
		return uint64(p.args[i-1])
	}
	return 0
}

// value prints argument i (value v) decoded as kind k, with no separator.
func (p *printer) value(i int, k ArgKind, v uint64) {
	switch k {
	case Hex:
		p.hex(v)
	case Ptr, SigInfo:
		p.ptr(v)
	case Int:
		p.int(int64(int32(v)))
	case Uint:
		p.uint(v & 0xffffffff)
	case Long:
		p.int(int64(v))
	case Ulong:
		p.uint(v)
	case FD, ID:
		p.int(int64(int32(v)))
	case DirFD:
		if int32(v) == -100 {
			p.str("AT_FDCWD")
		} else {
			p.int(int64(int32(v)))
		}
	case Path:
		p.path(v)
	case Str:
		p.cstring(v, maxStr)
	case InBuf:
		p.buffer(v, p.next(i), false)
	case OutBuf:
		p.buffer(v, uint64(p.ret), false)
	case OutRandom:
		p.buffer(v, uint64(p.ret), true)
	case OutCwd:
		p.path(v)
	case OutPathN:
		n := uint64(p.ret)
		if n > pathMax {
			n = pathMax
		}
		if !p.read(v, p.scratch[:n]) {
			p.ptr(v)
			return
		}
		p.quote(p.scratch[:n], false, false)
	case StrArray:
		p.strArray(v)
	case EnvArray:
		p.envArray(v)
	case Mode, OpenMode:
		p.octal(v & 0xffffffff)
	case OpenFlags:
		p.openFlags(v)
	case FileFlags:
		p.flags(v&0xffffffff, openFlagTab, "0")
	case FileMode:
		p.fileMode(v)
	case Dev:
		p.makedev(v)
	case AtFlags:
		p.flags(v&0xffffffff, atFlagTab, "0")
	case UnlinkFlags:
		p.flags(v&0xffffffff, unlinkFlagTab, "0")
	case AccessAtFlags:
		p.flags(v&0xffffffff, accessAtFlagTab, "0")
	case AccessMode:
		p.flags(v&0xffffffff, accessModeTab, "F_OK")
	case MmapProt:
		p.flags(v&0xffffffff, protTab, "PROT_NONE")
	case MmapFlags:
		p.mmapFlags(v)
	case MadviseAdvice:
		p.enum(v&0xffffffff, madvise(), "MADV_")
	case MremapFlags:
		p.flags(v&0xffffffff, mremapTab, "0")
	case MsyncFlags:
		p.flags(v&0xffffffff, msyncTab, "0")
	case MlockallFlags:
		p.flags(v&0xffffffff, mlockallTab, "0")
	case CloneFlags:
		p.cloneFlags(v)
	case UnshareFlags:
		p.flags(v&0xffffffff, clone3FlagTab, "0")
	case CloneArgs:
		p.cloneArgs(v, p.next(i))
	case WaitOptions:
		p.flags(v&0xffffffff, waitOptionTab, "0")
	case OutWaitStatus:
		var raw [4]byte
		if int64(p.ret) <= 0 || !p.read(v, raw[:]) {
			p.ptr(v)
			return
		}
		p.waitStatus(le32(raw[:]))
	case Signal:
		p.signal(v & 0xffffffff)
	case SigSet, OutSigSet:
		p.sigsetAt(v)
	case SigAction, OutSigAction:
		p.sigaction(v)
	case SigHow:
		p.enum(v&0xffffffff, sigHows(), "SIG_")
	case SigStack, OutSigStack:
		p.sigStack(v)
	case ClockID:
		p.enum(v&0xffffffff, clocks(), "CLOCK_")
	case Timespec, OutTimespec:
		p.timespec(v, false)
	case Timeval, OutTimeval:
		p.timespec(v, true)
	case Itimerval, OutItimerval:
		p.itimer(v, true)
	case Itimerspec, OutItimerspec:
		p.itimer(v, false)
	case ItimerWhich:
		p.enum(v&0xffffffff, itimers(), "ITIMER_")
	case TimerFlags:
		if p.sysno == sysTimerfdSettime {
			p.flags(v&0xffffffff, timerfdSetTab, "0")
		} else {
			p.flags(v&0xffffffff, timerFlagTab, "0")
		}
	case Utimes:
		p.utimes(v)
	case OutStat:
		p.stat(v)
	case OutStatx:
		p.statx(v)
	case StatxMask:
		p.flags(v&0xffffffff, statxMaskTab, "0")
	case StatxFlags:
		p.statxFlags(v)
	case Iovec:
		p.iovec(v, int64(int32(p.next(i))), false, 0)
	case OutIovec:
		p.iovec(v, int64(int32(p.next(i))), true, uint64(p.ret))
	case OutMsghdr:
		if !p.ok {
			p.msgNamelen(v)
			return
		}
		p.msghdr(v, true)
	case PollFds:
		p.pollFds(v, p.next(i)&0xffffffff)
	case EpollEvent:
		var raw [12]byte
		if !p.read(v, raw[:]) {
			p.ptr(v)
			return
		}
		p.epollEvent(raw[:])
	case OutEpollEvents:
		p.epollEvents(v, uint64(p.ret))
	case EpollCtlOp:
		p.enum(v&0xffffffff, epollOps(), "EPOLL_CTL_")
	case SockFamily:
		p.enum(v&0xffffffff, families(), "AF_")
	case SockType:
		p.sockType(v)
	case SockProto:
		p.sockProto(uint64(p.args[0]), v)
	case SockFlags:
		p.flags(v&0xffffffff, sockFlagTab, "0")
	case Sockaddr:
		p.sockaddr(v, p.next(i)&0xffffffff)
	case OutSockaddr:
		n, ok := p.socklen(p.next(i))
		if !ok {
			p.ptr(v)
			return
		}
		p.sockaddr(v, n)
	case InOutLen:
		p.intAt(v)
	case MsgFlags:
		p.flags(v&0xffffffff, msgFlagTab, "0")
	case ShutdownHow:
		p.enum(v&0xffffffff, shutdownHows(), "SHUT_")
	case SockLevel:
		p.enum(v&0xffffffff, sockLevels(), "SOL_")
	case SockOpt:
		p.sockOpt(p.prev(i), v)
	case SockOptVal:
		p.sockOptVal(v, p.next(i)&0xffffffff)
	case OutSockOptVal:
		n, ok := p.socklen(p.next(i))
		if !ok {
			p.ptr(v)
			return
		}
		p.sockOptVal(v, n)
	case Msghdr:
		p.msghdr(v, false)
	case InInt, OutInt:
		p.intAt(v)
	case OutFdPair:
		p.fdPair(v)
	case ArchPrctlCode:
		p.enum(v&0xffffffff, archPrctl(), "ARCH_")
	case PrctlOption:
		p.enum(v&0xffffffff, prctlOptions(), "PR_")
	case RlimitResource:
		p.enum(v&0xffffffff, rlimits(), "RLIMIT_")
	case Rlimit, OutRlimit:
		p.rlimit(v, false)
	case Rlimit64, OutRlimit64:
		p.rlimit(v, true)
	case RusageWho:
		p.enum(v&0xffffffff, rusageWho(), "RUSAGE_")
	case OutRusage:
		p.rusage(v)
	case Whence:
		p.enum(v&0xffffffff, seekWhence(), "SEEK_")
	case OutDirents:
		p.dirents(v, uint64(p.ret))
	case OutUtsname:
		p.utsname(v)
	case OutSysinfo:
		p.sysinfo(v)
	case OutTms:
		p.tms(v)
	case FdSet:
		p.fdSet(v)
	case GetrandomFlags:
		p.flags(v&0xffffffff, getrandomTab, "0")
	case CPUSet:
		p.bitmap(v, p.prev(i))
	case OutCPUSet:
		p.bitmap(v, uint64(p.ret))
	case EventfdFlags:
		p.flags(v&0xffffffff, eventfdTab, "0")
	case TimerfdFlags:
		p.flags(v&0xffffffff, timerfdTab, "0")
	case EpollFlags:
		p.flags(v&0xffffffff, epollCreateTab, "0")
	case MemfdFlags:
		p.flags(v&0xffffffff, memfdTab, "0")
	case SignalfdFlags:
		p.flags(v&0xffffffff, signalfdTab, "0")
	case InotifyFlags:
		p.flags(v&0xffffffff, inotifyTab, "0")
	case RenameFlags:
		p.flags(v&0xffffffff, renameFlagTab, "0")
	case FlockOp:
		p.flags(v&0xffffffff, flockTab, "0")
	case MountFlags:
		p.mountFlags(v)
	case UmountFlags:
		p.flags(v&0xffffffff, umountFlagTab, "0")
	case CloseRangeFlags:
		p.flags(v&0xffffffff, closeRangeTab, "0")
	case IDType:
		p.enum(v&0xffffffff, idTypes(), "P_")
	case OpenHow:
		p.openHow(v)
	case PselectSig:
		p.pselectSig(v)
	case FcntlCmd:
		p.enum(v&0xffffffff, fcntlCmds(), "F_")
	case IoctlReq:
		p.ioctlReq(v & 0xffffffff)
	case FutexOp:
		p.futexOp(v)
	default:
		p.hex(v)
	}
}
