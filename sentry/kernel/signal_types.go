package kernel

import (
	"encoding/binary"
)

// Signal is a signal number, 1 to 64.
type Signal int

// Signal numbers beyond the standard ones.
const (
	// SignalMaximum is the highest signal number (_NSIG).
	SignalMaximum = 64
	// SigRTMin is the first real-time signal.
	SigRTMin = 32
)

// IsValid reports whether s is a signal number.
func (s Signal) IsValid() bool { return s > 0 && s <= SignalMaximum }

// IsRealtime reports whether s queues more than once.
func (s Signal) IsRealtime() bool { return s >= SigRTMin }

// SignalSet is a set of signals, bit s-1 for signal s (the kernel's sigset_t).
type SignalSet uint64

// SignalSetOf returns the set holding s.
func SignalSetOf(s Signal) SignalSet { return 1 << (uint(s) - 1) }

// UnblockableSignals can never be blocked.
const UnblockableSignals = SignalSet(1<<(SIGKILL-1) | 1<<(SIGSTOP-1))

// Signal actions (sa_handler values).
const (
	SIG_DFL = 0
	SIG_IGN = 1
)

// sigaction flags.
const (
	SA_NOCLDSTOP = 0x1
	SA_NOCLDWAIT = 0x2
	SA_SIGINFO   = 0x4
	SA_RESTORER  = 0x04000000
	SA_ONSTACK   = 0x08000000
	SA_RESTART   = 0x10000000
	SA_NODEFER   = 0x40000000
	SA_RESETHAND = 0x80000000
)

// SigAction is the kernel's struct sigaction for rt_sigaction on amd64.
type SigAction struct {
	Handler  uint64
	Flags    uint64
	Restorer uint64
	Mask     SignalSet
}

// sigActionSize is sizeof(struct sigaction) in rt_sigaction.
const sigActionSize = 32

// Marshal encodes a as the application sees it.
func (a *SigAction) Marshal() []byte {
	b := make([]byte, sigActionSize)
	binary.LittleEndian.PutUint64(b[0:], a.Handler)
	binary.LittleEndian.PutUint64(b[8:], a.Flags)
	binary.LittleEndian.PutUint64(b[16:], a.Restorer)
	binary.LittleEndian.PutUint64(b[24:], uint64(a.Mask))
	return b
}

// UnmarshalSigAction decodes a struct sigaction.
func UnmarshalSigAction(b []byte) SigAction {
	return SigAction{
		Handler:  binary.LittleEndian.Uint64(b[0:]),
		Flags:    binary.LittleEndian.Uint64(b[8:]),
		Restorer: binary.LittleEndian.Uint64(b[16:]),
		Mask:     SignalSet(binary.LittleEndian.Uint64(b[24:])),
	}
}

// SignalInfo is a siginfo_t.
type SignalInfo struct {
	Raw [128]byte

	// timer is the POSIX timer that queued this signal, and timerGen its
	// generation then: the overrun count is filled in, or the signal
	// dropped as stale, when it is dequeued (see timer.dequeuedLocked).
	timer    *timer
	timerGen uint64
	// faultErr is the x86 page-fault error code of a fault signal, for
	// sigcontext.err (fault_code_amd64.go).
	faultErr uint64
	// reachesInit marks a signal that init gets even with the default
	// action: forced fault signals and signals sent from the host. Any
	// other one with the default action is discarded when init dequeues
	// it (it was queued while blocked), as Linux's SIGNAL_UNKILLABLE.
	reachesInit bool
}

// si_code values.
const (
	SI_USER       = 0
	SI_KERNEL     = 0x80
	SI_QUEUE      = -1
	SI_TIMER      = -2
	SI_TKILL      = -6
	CLD_EXITED    = 1
	CLD_KILLED    = 2
	CLD_DUMPED    = 3
	CLD_TRAPPED   = 4
	CLD_STOPPED   = 5
	CLD_CONTINUED = 6
)

// NewSignalInfo returns a siginfo for signo with code.
func NewSignalInfo(signo Signal, code int32) *SignalInfo {
	i := &SignalInfo{}
	binary.LittleEndian.PutUint32(i.Raw[0:], uint32(signo))
	binary.LittleEndian.PutUint32(i.Raw[8:], uint32(code))
	return i
}

// Signo returns si_signo.
func (i *SignalInfo) Signo() Signal { return Signal(int32(binary.LittleEndian.Uint32(i.Raw[0:]))) }

// Code returns si_code.
func (i *SignalInfo) Code() int32 { return int32(binary.LittleEndian.Uint32(i.Raw[8:])) }

// SetSigno sets si_signo.
func (i *SignalInfo) SetSigno(s Signal) { binary.LittleEndian.PutUint32(i.Raw[0:], uint32(s)) }

// SetPIDUID sets si_pid and si_uid.
func (i *SignalInfo) SetPIDUID(pid int32, uid uint32) {
	binary.LittleEndian.PutUint32(i.Raw[16:], uint32(pid))
	binary.LittleEndian.PutUint32(i.Raw[20:], uid)
}

// PID returns si_pid.
func (i *SignalInfo) PID() int32 { return int32(binary.LittleEndian.Uint32(i.Raw[16:])) }

// SetStatus sets si_status (SIGCHLD).
func (i *SignalInfo) SetStatus(s int32) { binary.LittleEndian.PutUint32(i.Raw[24:], uint32(s)) }

// SetTimes sets si_utime and si_stime (SIGCHLD), in clock ticks.
func (i *SignalInfo) SetTimes(u, s int64) {
	binary.LittleEndian.PutUint64(i.Raw[32:], uint64(u))
	binary.LittleEndian.PutUint64(i.Raw[40:], uint64(s))
}

// SetAddr sets si_addr (faults).
func (i *SignalInfo) SetAddr(a uint64) { binary.LittleEndian.PutUint64(i.Raw[16:], a) }

// SetTimer sets si_timerid, si_overrun and si_value (POSIX timers).
func (i *SignalInfo) SetTimer(id int32, overrun int32, value uint64) {
	binary.LittleEndian.PutUint32(i.Raw[16:], uint32(id))
	binary.LittleEndian.PutUint32(i.Raw[20:], uint32(overrun))
	binary.LittleEndian.PutUint64(i.Raw[24:], value)
}

// SetValue sets si_value (sigqueue).
func (i *SignalInfo) SetValue(v uint64) { binary.LittleEndian.PutUint64(i.Raw[24:], v) }

// defaultAction is what SIG_DFL does.
type defaultAction int

const (
	actTerminate defaultAction = iota
	actCoreDump
	actIgnore
	actStop
	actContinue
)

func defaultActionOf(s Signal) defaultAction {
	switch s {
	case SIGCHLD, SIGURG, SIGWINCH:
		return actIgnore
	case SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU:
		return actStop
	case SIGCONT:
		return actContinue
	case SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE,
		SIGSEGV, SIGXCPU, SIGXFSZ, SIGSYS:
		return actCoreDump
	}
	if s >= SigRTMin {
		return actTerminate
	}
	return actTerminate
}
