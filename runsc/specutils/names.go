package specutils

import (
	"fmt"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// capNumbers maps the spec's capability names to CAP_* numbers.
var capNumbers = map[string]uint{
	"CAP_CHOWN":              unix.CAP_CHOWN,
	"CAP_DAC_OVERRIDE":       unix.CAP_DAC_OVERRIDE,
	"CAP_DAC_READ_SEARCH":    unix.CAP_DAC_READ_SEARCH,
	"CAP_FOWNER":             unix.CAP_FOWNER,
	"CAP_FSETID":             unix.CAP_FSETID,
	"CAP_KILL":               unix.CAP_KILL,
	"CAP_SETGID":             unix.CAP_SETGID,
	"CAP_SETUID":             unix.CAP_SETUID,
	"CAP_SETPCAP":            unix.CAP_SETPCAP,
	"CAP_LINUX_IMMUTABLE":    unix.CAP_LINUX_IMMUTABLE,
	"CAP_NET_BIND_SERVICE":   unix.CAP_NET_BIND_SERVICE,
	"CAP_NET_BROADCAST":      unix.CAP_NET_BROADCAST,
	"CAP_NET_ADMIN":          unix.CAP_NET_ADMIN,
	"CAP_NET_RAW":            unix.CAP_NET_RAW,
	"CAP_IPC_LOCK":           unix.CAP_IPC_LOCK,
	"CAP_IPC_OWNER":          unix.CAP_IPC_OWNER,
	"CAP_SYS_MODULE":         unix.CAP_SYS_MODULE,
	"CAP_SYS_RAWIO":          unix.CAP_SYS_RAWIO,
	"CAP_SYS_CHROOT":         unix.CAP_SYS_CHROOT,
	"CAP_SYS_PTRACE":         unix.CAP_SYS_PTRACE,
	"CAP_SYS_PACCT":          unix.CAP_SYS_PACCT,
	"CAP_SYS_ADMIN":          unix.CAP_SYS_ADMIN,
	"CAP_SYS_BOOT":           unix.CAP_SYS_BOOT,
	"CAP_SYS_NICE":           unix.CAP_SYS_NICE,
	"CAP_SYS_RESOURCE":       unix.CAP_SYS_RESOURCE,
	"CAP_SYS_TIME":           unix.CAP_SYS_TIME,
	"CAP_SYS_TTY_CONFIG":     unix.CAP_SYS_TTY_CONFIG,
	"CAP_MKNOD":              unix.CAP_MKNOD,
	"CAP_LEASE":              unix.CAP_LEASE,
	"CAP_AUDIT_WRITE":        unix.CAP_AUDIT_WRITE,
	"CAP_AUDIT_CONTROL":      unix.CAP_AUDIT_CONTROL,
	"CAP_SETFCAP":            unix.CAP_SETFCAP,
	"CAP_MAC_OVERRIDE":       unix.CAP_MAC_OVERRIDE,
	"CAP_MAC_ADMIN":          unix.CAP_MAC_ADMIN,
	"CAP_SYSLOG":             unix.CAP_SYSLOG,
	"CAP_WAKE_ALARM":         unix.CAP_WAKE_ALARM,
	"CAP_BLOCK_SUSPEND":      unix.CAP_BLOCK_SUSPEND,
	"CAP_AUDIT_READ":         unix.CAP_AUDIT_READ,
	"CAP_PERFMON":            unix.CAP_PERFMON,
	"CAP_BPF":                unix.CAP_BPF,
	"CAP_CHECKPOINT_RESTORE": unix.CAP_CHECKPOINT_RESTORE,
}

// CapabilityNumber returns the CAP_* number of a capability name such as
// "CAP_CHOWN" (the "CAP_" prefix and case are as the spec writes them).
func CapabilityNumber(name string) (uint, error) {
	n, ok := capNumbers[name]
	if !ok {
		return 0, fmt.Errorf("unknown capability %q", name)
	}
	return n, nil
}

// CapabilityNames lists every capability name, sorted by number.
func CapabilityNames() []string {
	out := make([]string, 0, len(capNumbers))
	for n := range capNumbers {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return capNumbers[out[i]] < capNumbers[out[j]] })
	return out
}

// rlimitNumbers maps the spec's rlimit types to RLIMIT_* numbers.
var rlimitNumbers = map[string]int{
	"RLIMIT_CPU":        unix.RLIMIT_CPU,
	"RLIMIT_FSIZE":      unix.RLIMIT_FSIZE,
	"RLIMIT_DATA":       unix.RLIMIT_DATA,
	"RLIMIT_STACK":      unix.RLIMIT_STACK,
	"RLIMIT_CORE":       unix.RLIMIT_CORE,
	"RLIMIT_RSS":        unix.RLIMIT_RSS,
	"RLIMIT_NPROC":      unix.RLIMIT_NPROC,
	"RLIMIT_NOFILE":     unix.RLIMIT_NOFILE,
	"RLIMIT_MEMLOCK":    unix.RLIMIT_MEMLOCK,
	"RLIMIT_AS":         unix.RLIMIT_AS,
	"RLIMIT_LOCKS":      unix.RLIMIT_LOCKS,
	"RLIMIT_SIGPENDING": unix.RLIMIT_SIGPENDING,
	"RLIMIT_MSGQUEUE":   unix.RLIMIT_MSGQUEUE,
	"RLIMIT_NICE":       unix.RLIMIT_NICE,
	"RLIMIT_RTPRIO":     unix.RLIMIT_RTPRIO,
	"RLIMIT_RTTIME":     unix.RLIMIT_RTTIME,
}

// RlimitNumber returns the RLIMIT_* number of an rlimit type such as
// "RLIMIT_NOFILE".
func RlimitNumber(name string) (int, error) {
	n, ok := rlimitNumbers[name]
	if !ok {
		return 0, fmt.Errorf("unknown rlimit %q", name)
	}
	return n, nil
}

// signalNumbers maps signal names without "SIG" to numbers.
var signalNumbers = map[string]unix.Signal{
	"ABRT": unix.SIGABRT, "ALRM": unix.SIGALRM, "BUS": unix.SIGBUS, "CHLD": unix.SIGCHLD,
	"CLD": unix.SIGCHLD, "CONT": unix.SIGCONT, "FPE": unix.SIGFPE, "HUP": unix.SIGHUP,
	"ILL": unix.SIGILL, "INT": unix.SIGINT, "IO": unix.SIGIO, "IOT": unix.SIGIOT,
	"KILL": unix.SIGKILL, "PIPE": unix.SIGPIPE, "POLL": unix.SIGPOLL, "PROF": unix.SIGPROF,
	"PWR": unix.SIGPWR, "QUIT": unix.SIGQUIT, "SEGV": unix.SIGSEGV, "STKFLT": unix.SIGSTKFLT,
	"STOP": unix.SIGSTOP, "SYS": unix.SIGSYS, "TERM": unix.SIGTERM, "TRAP": unix.SIGTRAP,
	"TSTP": unix.SIGTSTP, "TTIN": unix.SIGTTIN, "TTOU": unix.SIGTTOU, "URG": unix.SIGURG,
	"USR1": unix.SIGUSR1, "USR2": unix.SIGUSR2, "VTALRM": unix.SIGVTALRM, "WINCH": unix.SIGWINCH,
	"XCPU": unix.SIGXCPU, "XFSZ": unix.SIGXFSZ,
}

// sigRTMin and sigRTMax bound the real-time signals as Linux numbers them.
const (
	sigRTMin = 34
	sigRTMax = 64
)

// ParseSignal parses a signal as runc's kill takes it: a number ("9"), a
// name with or without "SIG" in any case ("KILL", "sigterm"), or
// RTMIN+n / RTMAX-n.
func ParseSignal(s string) (unix.Signal, error) {
	if n, err := parseUint(s); err == nil {
		if n < 1 || n > sigRTMax {
			return 0, fmt.Errorf("invalid signal number %d", n)
		}
		return unix.Signal(n), nil
	}
	name := strings.TrimPrefix(strings.ToUpper(s), "SIG")
	if sig, ok := signalNumbers[name]; ok {
		return sig, nil
	}
	for _, rt := range []struct {
		prefix string
		base   int
		sign   int
	}{{"RTMIN", sigRTMin, 1}, {"RTMAX", sigRTMax, -1}} {
		rest, ok := strings.CutPrefix(name, rt.prefix)
		if !ok {
			continue
		}
		off := 0
		if rest != "" {
			want := "+"
			if rt.sign < 0 {
				want = "-"
			}
			num, ok := strings.CutPrefix(rest, want)
			n, err := parseUint(num)
			if !ok || err != nil {
				break
			}
			off = n * rt.sign
		}
		if sig := rt.base + off; sig >= sigRTMin && sig <= sigRTMax {
			return unix.Signal(sig), nil
		}
	}
	return 0, fmt.Errorf("unknown signal %q", s)
}

func parseUint(s string) (int, error) {
	if s == "" || len(s) > 4 {
		return 0, fmt.Errorf("not a number")
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("not a number")
		}
		n = n*10 + int(c-'0')
	}
	return n, nil
}
