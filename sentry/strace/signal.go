package strace

import (
	"math/bits"
	"sync"
)

// maxSignal is the highest signal number (_NSIG).
const maxSignal = 64

// sigNames are the standard signals without their SIG prefix.
var sigNames = [32]string{
	1: "HUP", 2: "INT", 3: "QUIT", 4: "ILL", 5: "TRAP", 6: "ABRT", 7: "BUS", 8: "FPE",
	9: "KILL", 10: "USR1", 11: "SEGV", 12: "USR2", 13: "PIPE", 14: "ALRM", 15: "TERM",
	16: "STKFLT", 17: "CHLD", 18: "CONT", 19: "STOP", 20: "TSTP", 21: "TTIN", 22: "TTOU",
	23: "URG", 24: "XCPU", 25: "XFSZ", 26: "VTALRM", 27: "PROF", 28: "WINCH", 29: "IO",
	30: "PWR", 31: "SYS",
}

// sigShort prints a valid signal's name without "SIG": INT, RTMIN, RT_3.
func (p *printer) sigShort(n uint64) {
	switch {
	case n < 32:
		p.str(sigNames[n])
	case n == 32:
		p.str("RTMIN")
	default:
		p.str("RT_")
		p.uint(n - 32)
	}
}

// signal prints a signal number: SIGINT, SIGRTMIN, SIGRT_3, or the
// number itself if it names no signal.
func (p *printer) signal(n uint64) {
	if n == 0 || n > maxSignal {
		p.int(int64(int32(n)))
		return
	}
	p.str("SIG")
	p.sigShort(n)
}

// sigset prints a signal mask: [INT TERM], or ~[...] listing the signals
// not in it when more than half are set.
func (p *printer) sigset(mask uint64) {
	if bits.OnesCount64(mask) > maxSignal/2 {
		p.b = append(p.b, '~')
		mask = ^mask
	}
	p.b = append(p.b, '[')
	first := true
	for mask != 0 {
		i := uint64(bits.TrailingZeros64(mask))
		mask &^= 1 << i
		if !first {
			p.b = append(p.b, ' ')
		}
		first = false
		p.sigShort(i + 1)
	}
	p.b = append(p.b, ']')
}

// sigsetAt prints the sigset_t at addr.
func (p *printer) sigsetAt(addr uint64) {
	var raw [8]byte
	if !p.read(addr, raw[:]) {
		p.ptr(addr)
		return
	}
	p.sigset(le64(raw[:]))
}

var sigHows = sync.OnceValue(func() names { return names{0: "SIG_BLOCK", 1: "SIG_UNBLOCK", 2: "SIG_SETMASK"} })

const saRestorer = 0x04000000

var saFlagTab = []flag{
	{saRestorer, "SA_RESTORER"}, {0x08000000, "SA_ONSTACK"}, {0x10000000, "SA_RESTART"},
	{0x20000000, "SA_INTERRUPT"}, {0x40000000, "SA_NODEFER"}, {0x80000000, "SA_RESETHAND"},
	{4, "SA_SIGINFO"}, {1, "SA_NOCLDSTOP"}, {2, "SA_NOCLDWAIT"},
}

// sigaction prints the kernel's struct sigaction at addr:
// {sa_handler=..., sa_mask=[...], sa_flags=..., sa_restorer=...}.
func (p *printer) sigaction(addr uint64) {
	var raw [32]byte
	if !p.read(addr, raw[:]) {
		p.ptr(addr)
		return
	}
	handler, flags, restorer, mask := le64(raw[0:]), le64(raw[8:]), le64(raw[16:]), le64(raw[24:])
	p.str("{sa_handler=")
	switch handler {
	case 0:
		p.str("SIG_DFL")
	case 1:
		p.str("SIG_IGN")
	default:
		p.hex(handler)
	}
	p.str(", sa_mask=")
	p.sigset(mask)
	p.str(", sa_flags=")
	p.flags(flags, saFlagTab, "0")
	if flags&saRestorer != 0 {
		p.str(", sa_restorer=")
		p.ptr(restorer)
	}
	p.b = append(p.b, '}')
}

var ssFlagTab = []flag{{1, "SS_ONSTACK"}, {2, "SS_DISABLE"}, {0x80000000, "SS_AUTODISARM"}}

// sigStack prints a stack_t: {ss_sp=..., ss_flags=..., ss_size=...}.
func (p *printer) sigStack(addr uint64) {
	var raw [24]byte
	if !p.read(addr, raw[:]) {
		p.ptr(addr)
		return
	}
	p.str("{ss_sp=")
	p.ptr(le64(raw[0:]))
	p.str(", ss_flags=")
	p.flags(uint64(le32(raw[8:])), ssFlagTab, "0")
	p.str(", ss_size=")
	p.uint(le64(raw[16:]))
	p.b = append(p.b, '}')
}

var ptraceEvents = sync.OnceValue(func() names {
	return names{
		1: "PTRACE_EVENT_FORK", 2: "PTRACE_EVENT_VFORK", 3: "PTRACE_EVENT_CLONE",
		4: "PTRACE_EVENT_EXEC", 5: "PTRACE_EVENT_VFORK_DONE", 6: "PTRACE_EVENT_EXIT",
		7: "PTRACE_EVENT_SECCOMP", 128: "PTRACE_EVENT_STOP",
	}
})

// waitStatus prints a wait status word the way strace does:
// [{WIFEXITED(s) && WEXITSTATUS(s) == 0}].
func (p *printer) waitStatus(s uint32) {
	p.str("[{")
	switch {
	case s&0x7f == 0: // exited
		p.str("WIFEXITED(s) && WEXITSTATUS(s) == ")
		p.uint(uint64(s>>8) & 0xff)
	case s&0xff == 0x7f: // stopped
		p.str("WIFSTOPPED(s) && WSTOPSIG(s) == ")
		p.signal(uint64(s>>8) & 0xff)
	case s == 0xffff: // continued
		p.str("WIFCONTINUED(s)")
	default: // killed by a signal
		p.str("WIFSIGNALED(s) && WTERMSIG(s) == ")
		p.signal(uint64(s & 0x7f))
		if s&0x80 != 0 {
			p.str(" && WCOREDUMP(s)")
		}
	}
	p.b = append(p.b, '}')
	if ev := s >> 16; ev != 0 && s&0xff == 0x7f {
		p.str(" | ")
		if n, ok := ptraceEvents()[uint64(ev)]; ok {
			p.str(n)
		} else {
			p.hex(uint64(ev))
		}
		p.str(" << 16")
	} else if ev != 0 && s != 0xffff {
		p.str(" | ")
		p.hex(uint64(ev))
		p.str(" << 16")
	}
	p.b = append(p.b, ']')
}
