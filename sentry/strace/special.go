package strace

import "sync"

// Calls whose argument list depends on an argument: clone, futex, fcntl,
// prctl, mremap, mknod. ioctl lives in ioctl.go.

const (
	sysTimerfdSettime = 286
	sysMknodat        = 259
	sysNanosleep      = 35
	sysExecve         = 59
	sysExecveat       = 322
	sysClockNanosleep = 230

	errEINTR = 4
)

// cloneFlags prints clone(2)'s flags with the exit signal last:
// CLONE_VM|...|SIGCHLD.
func (p *printer) cloneFlags(v uint64) {
	sig := v & 0xff
	rest := v &^ 0xff
	if rest == 0 {
		if sig == 0 {
			p.b = append(p.b, '0')
			return
		}
		p.signal(sig)
		return
	}
	p.flags(rest, cloneFlagTab, "0")
	if sig != 0 {
		p.b = append(p.b, '|')
		p.signal(sig)
	}
}

// fmtClone prints clone(flags, stack, parent_tid, child_tid, tls) the
// way strace names them, showing the tid and tls pointers only when the
// flags use them.
func fmtClone(p *printer) {
	flags := uint64(p.args[0])
	p.sep()
	p.str("child_stack=")
	p.ptr(uint64(p.args[1]))
	p.str(", flags=")
	p.cloneFlags(flags)
	if flags&(cloneParentSettid|clonePidfd) != 0 {
		p.str(", parent_tid=")
		if p.ok {
			p.intAt(uint64(p.args[2]))
		} else {
			p.ptr(uint64(p.args[2]))
		}
	}
	if flags&cloneSettls != 0 {
		p.str(", tls=")
		p.ptr(uint64(p.args[4]))
	}
	if flags&(cloneChildSettid|cloneChildCleartid) != 0 {
		p.str(", child_tidptr=")
		p.ptr(uint64(p.args[3]))
	}
}

// Futex operations.
const (
	futexWait          = 0
	futexWake          = 1
	futexFd            = 2
	futexRequeue       = 3
	futexCmpRequeue    = 4
	futexWakeOp        = 5
	futexLockPI        = 6
	futexUnlockPI      = 7
	futexTrylockPI     = 8
	futexWaitBitset    = 9
	futexWakeBitset    = 10
	futexWaitRequeuePI = 11
	futexCmpRequeuePI  = 12
	futexLockPI2       = 13

	futexPrivate       = 128
	futexClockRealtime = 256
)

var futexCmds = [...]string{
	"FUTEX_WAIT", "FUTEX_WAKE", "FUTEX_FD", "FUTEX_REQUEUE", "FUTEX_CMP_REQUEUE",
	"FUTEX_WAKE_OP", "FUTEX_LOCK_PI", "FUTEX_UNLOCK_PI", "FUTEX_TRYLOCK_PI",
	"FUTEX_WAIT_BITSET", "FUTEX_WAKE_BITSET", "FUTEX_WAIT_REQUEUE_PI",
	"FUTEX_CMP_REQUEUE_PI", "FUTEX_LOCK_PI2",
}

// futexOp prints FUTEX_WAIT_PRIVATE, FUTEX_WAIT_BITSET|FUTEX_CLOCK_REALTIME...
func (p *printer) futexOp(v uint64) {
	v &= 0xffffffff
	cmd := v &^ (futexPrivate | futexClockRealtime)
	if cmd >= uint64(len(futexCmds)) {
		p.unknownEnum(v, "FUTEX_")
		return
	}
	p.str(futexCmds[cmd])
	if v&futexPrivate != 0 {
		p.str("_PRIVATE")
	}
	if v&futexClockRealtime != 0 {
		p.str("|FUTEX_CLOCK_REALTIME")
	}
}

var futexWakeOps = [...]string{"FUTEX_OP_SET", "FUTEX_OP_ADD", "FUTEX_OP_OR", "FUTEX_OP_ANDN", "FUTEX_OP_XOR"}

var futexWakeCmps = [...]string{
	"FUTEX_OP_CMP_EQ", "FUTEX_OP_CMP_NE", "FUTEX_OP_CMP_LT",
	"FUTEX_OP_CMP_LE", "FUTEX_OP_CMP_GT", "FUTEX_OP_CMP_GE",
}

// futexWakeOpArg decodes FUTEX_WAKE_OP's encoded operation.
func (p *printer) futexWakeOpArg(v uint32) {
	op := v >> 28 & 0xf
	if op&8 != 0 {
		p.str("FUTEX_OP_OPARG_SHIFT<<28|")
		op &= 7
	}
	if int(op) < len(futexWakeOps) {
		p.str(futexWakeOps[op])
	} else {
		p.hex(uint64(op))
	}
	p.str("<<28|")
	p.hex(uint64(v >> 12 & 0xfff))
	p.str("<<12|")
	if cmp := v >> 24 & 0xf; int(cmp) < len(futexWakeCmps) {
		p.str(futexWakeCmps[cmp])
	} else {
		p.hex(uint64(cmp))
	}
	p.str("<<24|")
	p.hex(uint64(v & 0xfff))
}

// futexBitset prints a bitset argument.
func (p *printer) futexBitset(v uint64) {
	if uint32(v) == 0xffffffff {
		p.str("FUTEX_BITSET_MATCH_ANY")
		return
	}
	p.hex(v & 0xffffffff)
}

// fmtFutex prints futex(uaddr, op, val, timeout/val2, uaddr2, val3) with
// only the arguments the operation uses.
func fmtFutex(p *printer) {
	a := func(i int) uint64 { return uint64(p.args[i]) }
	p.sep()
	p.ptr(a(0))
	p.sep()
	p.futexOp(a(1))
	cmd := a(1) & 0xffffffff &^ (futexPrivate | futexClockRealtime)
	val := func() {
		p.sep()
		p.int(int64(int32(a(2))))
	}
	timeout := func() {
		p.sep()
		p.timespec(a(3), false)
	}
	val2 := func() {
		p.sep()
		p.int(int64(int32(a(3))))
	}
	uaddr2 := func() {
		p.sep()
		p.ptr(a(4))
	}
	switch cmd {
	case futexWait:
		val()
		timeout()
	case futexWake, futexFd:
		val()
	case futexRequeue:
		val()
		val2()
		uaddr2()
	case futexCmpRequeue, futexCmpRequeuePI:
		val()
		val2()
		uaddr2()
		p.sep()
		p.int(int64(int32(a(5))))
	case futexWakeOp:
		val()
		val2()
		uaddr2()
		p.sep()
		p.futexWakeOpArg(uint32(a(5)))
	case futexLockPI, futexLockPI2:
		timeout()
	case futexUnlockPI, futexTrylockPI:
	case futexWaitBitset:
		val()
		timeout()
		p.sep()
		p.futexBitset(a(5))
	case futexWakeBitset:
		val()
		p.sep()
		p.futexBitset(a(5))
	case futexWaitRequeuePI:
		val()
		timeout()
		uaddr2()
	default:
		val()
		p.sep()
		p.ptr(a(3))
		uaddr2()
		p.sep()
		p.int(int64(int32(a(5))))
	}
}

// fcntl commands.
const (
	fDupfd        = 0
	fGetfd        = 1
	fSetfd        = 2
	fGetfl        = 3
	fSetfl        = 4
	fGetlk        = 5
	fSetlk        = 6
	fSetlkw       = 7
	fSetown       = 8
	fGetown       = 9
	fSetsig       = 10
	fGetsig       = 11
	fSetownEx     = 15
	fGetownEx     = 16
	fOfdGetlk     = 36
	fOfdSetlk     = 37
	fOfdSetlkw    = 38
	fSetlease     = 1024
	fGetlease     = 1025
	fNotify       = 1026
	fDupfdQuery   = 1027
	fDupfdCloexec = 1030
	fSetpipeSz    = 1031
	fGetpipeSz    = 1032
	fAddSeals     = 1033
	fGetSeals     = 1034
)

var fcntlCmds = sync.OnceValue(func() names {
	return names{
		0: "F_DUPFD", 1: "F_GETFD", 2: "F_SETFD", 3: "F_GETFL", 4: "F_SETFL", 5: "F_GETLK",
		6: "F_SETLK", 7: "F_SETLKW", 8: "F_SETOWN", 9: "F_GETOWN", 10: "F_SETSIG", 11: "F_GETSIG",
		15: "F_SETOWN_EX", 16: "F_GETOWN_EX", 17: "F_GETOWNER_UIDS", 36: "F_OFD_GETLK",
		37: "F_OFD_SETLK", 38: "F_OFD_SETLKW", 1024: "F_SETLEASE", 1025: "F_GETLEASE",
		1026: "F_NOTIFY", 1027: "F_DUPFD_QUERY", 1028: "F_CREATED_QUERY", 1029: "F_CANCELLK",
		1030: "F_DUPFD_CLOEXEC", 1031: "F_SETPIPE_SZ", 1032: "F_GETPIPE_SZ", 1033: "F_ADD_SEALS",
		1034: "F_GET_SEALS", 1035: "F_GET_RW_HINT", 1036: "F_SET_RW_HINT",
		1037: "F_GET_FILE_RW_HINT", 1038: "F_SET_FILE_RW_HINT",
	}
})

var fdFlagTab = []flag{{1, "FD_CLOEXEC"}}

var lockTypes = sync.OnceValue(func() names { return names{0: "F_RDLCK", 1: "F_WRLCK", 2: "F_UNLCK"} })

var sealTab = []flag{
	{1, "F_SEAL_SEAL"}, {2, "F_SEAL_SHRINK"}, {4, "F_SEAL_GROW"}, {8, "F_SEAL_WRITE"},
	{0x10, "F_SEAL_FUTURE_WRITE"}, {0x20, "F_SEAL_EXEC"},
}

var dnotifyTab = []flag{
	{1, "DN_ACCESS"}, {2, "DN_MODIFY"}, {4, "DN_CREATE"}, {8, "DN_DELETE"},
	{0x10, "DN_RENAME"}, {0x20, "DN_ATTRIB"}, {0x80000000, "DN_MULTISHOT"},
}

// flock prints a struct flock: {l_type=F_WRLCK, l_whence=SEEK_SET, l_start=0, l_len=0}.
func (p *printer) flock(addr uint64, withPid bool) {
	var raw [32]byte
	if !p.read(addr, raw[:]) {
		p.ptr(addr)
		return
	}
	p.str("{l_type=")
	p.enum(uint64(le16(raw[0:])), lockTypes(), "F_")
	p.str(", l_whence=")
	p.enum(uint64(le16(raw[2:])), seekWhence(), "SEEK_")
	p.str(", l_start=")
	p.int(int64(le64(raw[8:])))
	p.str(", l_len=")
	p.int(int64(le64(raw[16:])))
	if withPid {
		p.str(", l_pid=")
		p.int(int64(int32(le32(raw[24:]))))
	}
	p.b = append(p.b, '}')
}

// fmtFcntl prints fcntl(fd, cmd[, arg]) with arg decoded after cmd.
func fmtFcntl(p *printer) {
	p.arg(0, FD)
	p.arg(1, FcntlCmd)
	arg := uint64(p.args[2])
	switch cmd := uint64(p.args[1]) & 0xffffffff; cmd {
	case fGetfd, fGetfl, fGetown, fGetsig, fGetlease, fGetpipeSz, fGetSeals:
	case fDupfd, fDupfdCloexec, fSetown, fSetpipeSz, fDupfdQuery:
		p.sep()
		p.int(int64(int32(arg)))
	case fSetfd:
		p.sep()
		p.flags(arg&0xffffffff, fdFlagTab, "0")
	case fSetfl:
		p.sep()
		p.openFlags(arg)
	case fSetlk, fSetlkw, fOfdSetlk, fOfdSetlkw:
		p.sep()
		p.flock(arg, false)
	case fGetlk, fOfdGetlk:
		p.sep()
		p.flock(arg, p.ok)
	case fSetsig:
		p.sep()
		p.signal(arg & 0xffffffff)
	case fSetlease:
		p.sep()
		p.enum(arg&0xffffffff, lockTypes(), "F_")
	case fNotify:
		p.sep()
		p.flags(arg&0xffffffff, dnotifyTab, "0")
	case fAddSeals:
		p.sep()
		p.flags(arg&0xffffffff, sealTab, "0")
	default:
		p.sep()
		p.hex(arg)
	}
}

// fcntlResult prints fcntl's return value, decoding the flags F_GETFL,
// F_GETFD and F_GET_SEALS return: 0x8002 (flags O_RDWR|O_LARGEFILE).
func (p *printer) fcntlResult(r int64) {
	v := uint64(r)
	switch uint64(p.args[1]) & 0xffffffff {
	case fGetfl:
		p.hex(v)
		p.str(" (flags ")
		p.openFlags(v)
		p.b = append(p.b, ')')
	case fGetfd:
		p.hex(v)
		if v != 0 {
			p.str(" (flags ")
			p.flags(v, fdFlagTab, "0")
			p.b = append(p.b, ')')
		}
	case fGetSeals:
		p.hex(v)
		if v != 0 {
			p.str(" (seals ")
			p.flags(v, sealTab, "0")
			p.b = append(p.b, ')')
		}
	case fGetlease:
		p.enum(v, lockTypes(), "F_")
	case fGetsig:
		p.signal(v)
	default:
		p.int(r)
	}
}

// fmtMremap prints mremap's new address only with MREMAP_FIXED.
func fmtMremap(p *printer) {
	for i, k := range []ArgKind{Ptr, Ulong, Ulong, MremapFlags} {
		p.arg(i, k)
	}
	if p.args[3]&2 != 0 {
		p.arg(4, Ptr)
	}
}

// fmtMknod prints mknod/mknodat, with the device only for device files.
func fmtMknod(p *printer) {
	at := 0
	if p.sysno == sysMknodat {
		p.arg(0, DirFD)
		at = 1
	}
	p.arg(at, Path)
	p.arg(at+1, FileMode)
	if t := uint64(p.args[at+1]) & sIFMT; t == sIFCHR || t == sIFBLK {
		p.arg(at+2, Dev)
	}
}

// Prctl options.
const (
	prSetPdeathsig   = 1
	prGetPdeathsig   = 2
	prSetName        = 15
	prGetName        = 16
	prSetSeccomp     = 22
	prCapbsetRead    = 23
	prCapbsetDrop    = 24
	prSetNoNewPrivs  = 38
	prCapAmbient     = 47
	prSetChildReaper = 36
	prGetChildReaper = 37
)

var prctlOptions = sync.OnceValue(func() names {
	return names{
		1: "PR_SET_PDEATHSIG", 2: "PR_GET_PDEATHSIG", 3: "PR_GET_DUMPABLE", 4: "PR_SET_DUMPABLE",
		5: "PR_GET_UNALIGN", 6: "PR_SET_UNALIGN", 7: "PR_GET_KEEPCAPS", 8: "PR_SET_KEEPCAPS",
		9: "PR_GET_FPEMU", 10: "PR_SET_FPEMU", 11: "PR_GET_FPEXC", 12: "PR_SET_FPEXC",
		13: "PR_GET_TIMING", 14: "PR_SET_TIMING", 15: "PR_SET_NAME", 16: "PR_GET_NAME",
		19: "PR_GET_ENDIAN", 20: "PR_SET_ENDIAN", 21: "PR_GET_SECCOMP", 22: "PR_SET_SECCOMP",
		23: "PR_CAPBSET_READ", 24: "PR_CAPBSET_DROP", 25: "PR_GET_TSC", 26: "PR_SET_TSC",
		27: "PR_GET_SECUREBITS", 28: "PR_SET_SECUREBITS", 29: "PR_SET_TIMERSLACK",
		30: "PR_GET_TIMERSLACK", 31: "PR_TASK_PERF_EVENTS_DISABLE",
		32: "PR_TASK_PERF_EVENTS_ENABLE", 33: "PR_MCE_KILL", 34: "PR_MCE_KILL_GET",
		35: "PR_SET_MM", 36: "PR_SET_CHILD_SUBREAPER", 37: "PR_GET_CHILD_SUBREAPER",
		38: "PR_SET_NO_NEW_PRIVS", 39: "PR_GET_NO_NEW_PRIVS", 40: "PR_GET_TID_ADDRESS",
		41: "PR_SET_THP_DISABLE", 42: "PR_GET_THP_DISABLE", 43: "PR_MPX_ENABLE_MANAGEMENT",
		44: "PR_MPX_DISABLE_MANAGEMENT", 45: "PR_SET_FP_MODE", 46: "PR_GET_FP_MODE",
		47: "PR_CAP_AMBIENT", 50: "PR_SVE_SET_VL", 51: "PR_SVE_GET_VL",
		52: "PR_GET_SPECULATION_CTRL", 53: "PR_SET_SPECULATION_CTRL", 54: "PR_PAC_RESET_KEYS",
		55: "PR_SET_TAGGED_ADDR_CTRL", 56: "PR_GET_TAGGED_ADDR_CTRL", 57: "PR_SET_IO_FLUSHER",
		58: "PR_GET_IO_FLUSHER", 59: "PR_SET_SYSCALL_USER_DISPATCH",
		60: "PR_PAC_SET_ENABLED_KEYS", 61: "PR_PAC_GET_ENABLED_KEYS", 62: "PR_SCHED_CORE",
		63: "PR_SME_SET_VL", 64: "PR_SME_GET_VL", 65: "PR_SET_MDWE", 66: "PR_GET_MDWE",
		67: "PR_SET_MEMORY_MERGE", 68: "PR_GET_MEMORY_MERGE", 69: "PR_RISCV_V_SET_CONTROL",
		70: "PR_RISCV_V_GET_CONTROL", 71: "PR_RISCV_SET_ICACHE_FLUSH_CTX",
		72: "PR_PPC_GET_DEXCR", 73: "PR_PPC_SET_DEXCR", 74: "PR_GET_SHADOW_STACK_STATUS",
		75: "PR_SET_SHADOW_STACK_STATUS", 76: "PR_LOCK_SHADOW_STACK_STATUS",
		77: "PR_TIMER_CREATE_RESTORE_IDS", 78: "PR_FUTEX_HASH", 0x59616d61: "PR_SET_PTRACER",
		0x53564d41: "PR_SET_VMA",
	}
})

// prctlNoArgs are the options that take no argument.
var prctlNoArgs = sync.OnceValue(func() map[uint64]bool {
	return map[uint64]bool{
		3: true, 7: true, 13: true, 21: true, 27: true, 30: true, 31: true, 32: true,
		34: true, 39: true, 42: true, 46: true, 58: true,
	}
})

var seccompModes = sync.OnceValue(func() names {
	return names{0: "SECCOMP_MODE_DISABLED", 1: "SECCOMP_MODE_STRICT", 2: "SECCOMP_MODE_FILTER"}
})

var capAmbientOps = sync.OnceValue(func() names {
	return names{
		1: "PR_CAP_AMBIENT_IS_SET", 2: "PR_CAP_AMBIENT_RAISE", 3: "PR_CAP_AMBIENT_LOWER",
		4: "PR_CAP_AMBIENT_CLEAR_ALL",
	}
})

// fmtPrctl prints prctl(option, ...) with the arguments the option uses.
func fmtPrctl(p *printer) {
	a := func(i int) uint64 { return uint64(p.args[i]) }
	opt := a(0) & 0xffffffff
	p.arg(0, PrctlOption)
	if _, known := prctlOptions()[opt]; !known {
		for i := 1; i < 5; i++ {
			p.arg(i, Hex)
		}
		return
	}
	if prctlNoArgs()[opt] {
		return
	}
	switch opt {
	case prSetPdeathsig:
		p.sep()
		p.signal(a(1) & 0xffffffff)
	case prGetPdeathsig, prGetChildReaper:
		p.arg(1, OutInt)
	case prSetName:
		p.sep()
		p.cstring(a(1), 16)
	case prGetName:
		p.sep()
		if p.ok {
			p.cstring(a(1), 16)
		} else {
			p.ptr(a(1))
		}
	case prSetSeccomp:
		p.sep()
		p.enum(a(1)&0xffffffff, seccompModes(), "SECCOMP_MODE_")
		if a(1) == 2 {
			p.arg(2, Ptr)
		}
	case prCapbsetRead, prCapbsetDrop:
		p.sep()
		p.enum(a(1), capabilities(), "CAP_")
	case prCapAmbient:
		p.sep()
		p.enum(a(1), capAmbientOps(), "PR_CAP_AMBIENT_")
		if a(1) != 4 {
			p.sep()
			p.enum(a(2), capabilities(), "CAP_")
		}
	case prSetNoNewPrivs:
		p.arg(1, Ulong)
		for i := 2; i < 5; i++ {
			p.arg(i, Hex)
		}
	case 4, 8, 28, 29, 36, 41, 57:
		// Options with one number.
		p.arg(1, Ulong)
	default:
		for i := 1; i < 5; i++ {
			p.arg(i, Hex)
		}
	}
}
