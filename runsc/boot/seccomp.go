package boot

// The OCI spec's linux.seccomp, compiled to a classic BPF program that the
// Sentry runs on every syscall of the container's processes (the host
// kernel never sees them). The semantics are runc's with libseccomp:
//
//   - a syscall's rules are tried in the spec's order, those with argument
//     conditions before an unconditional one; the first that matches gives
//     the action, and a syscall without a matching rule gets the default;
//   - the conditions of one rule must all hold (64-bit comparisons), except
//     that a rule naming one argument twice becomes one rule per condition,
//     any of which may hold, as runc does;
//   - names the amd64 syscall table does not have (other architectures'
//     calls, newer ones) are skipped with a log line;
//   - a rule whose action equals the default is dropped;
//   - with a default that refuses (neither allow nor log), a syscall
//     numbered above every one the profile names gets ENOSYS, as runc's
//     stub does, so programs fall back from calls newer than the profile;
//   - a syscall from another architecture (never seen in Moat, which
//     runs amd64 code only) or an x32 one when the profile does not list
//     SCMP_ARCH_X32 kills the thread, libseccomp's bad-architecture
//     default.
//
// SCMP_ACT_NOTIFY and listenerPath are refused: the Sentry has no user
// notification.

import (
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/opencontainers/runtime-spec/specs-go"

	"github.com/moat-sandbox/moat/sentry/bpf"
	"github.com/moat-sandbox/moat/sentry/kernel"
	"github.com/moat-sandbox/moat/sentry/syscalls/linux"
)

// SeccompActions, SeccompOperators, SeccompArchs and SeccompFlags are the
// names of the spec's seccomp section runsc understands (for `runsc
// features`).
var (
	SeccompActions = []string{
		"SCMP_ACT_ALLOW", "SCMP_ACT_ERRNO", "SCMP_ACT_KILL", "SCMP_ACT_KILL_PROCESS",
		"SCMP_ACT_KILL_THREAD", "SCMP_ACT_LOG", "SCMP_ACT_TRACE", "SCMP_ACT_TRAP",
	}
	SeccompOperators = []string{
		"SCMP_CMP_EQ", "SCMP_CMP_GE", "SCMP_CMP_GT", "SCMP_CMP_LE",
		"SCMP_CMP_LT", "SCMP_CMP_MASKED_EQ", "SCMP_CMP_NE",
	}
	SeccompArchs = []string{"SCMP_ARCH_X32", "SCMP_ARCH_X86", "SCMP_ARCH_X86_64"}
	SeccompFlags = []string{"SECCOMP_FILTER_FLAG_LOG", "SECCOMP_FILTER_FLAG_SPEC_ALLOW", "SECCOMP_FILTER_FLAG_TSYNC"}
)

// x32SyscallBit marks x32 syscall numbers.
const x32SyscallBit = 0x40000000

// seccompData offsets.
const (
	offNr   = 0
	offArch = 4
	offArgs = 16
)

// syscallNumbers maps the amd64 table's names to numbers, built on first
// use (only containers with a seccomp profile need it).
var syscallNumbers = sync.OnceValue(func() map[string]uintptr {
	m := make(map[string]uintptr, len(linux.AMD64().Table))
	for nr, s := range linux.AMD64().Table {
		if s.Name != "" {
			m[s.Name] = nr
		}
	}
	return m
})

// SeccompFilter is a compiled profile.
type SeccompFilter struct {
	Program bpf.Program
	// Flags are kernel.SeccompFlag values.
	Flags uint32
	// Skipped are the syscall names the profile gives that amd64 lacks.
	Skipped []string
}

// seccompAction returns the SECCOMP_RET value of action with errnoRet.
func seccompAction(action specs.LinuxSeccompAction, errnoRet *uint) (uint32, error) {
	data := uint32(unix.EPERM)
	if errnoRet != nil {
		if *errnoRet > unix.SECCOMP_RET_DATA {
			return 0, fmt.Errorf("errnoRet %d is out of range", *errnoRet)
		}
		data = uint32(*errnoRet)
	}
	if errnoRet != nil && action != specs.ActErrno && action != specs.ActTrace {
		return 0, fmt.Errorf("errnoRet is only supported for SCMP_ACT_ERRNO and SCMP_ACT_TRACE, not %s", action)
	}
	switch action {
	case specs.ActAllow:
		return unix.SECCOMP_RET_ALLOW, nil
	case specs.ActErrno:
		return unix.SECCOMP_RET_ERRNO | data, nil
	case specs.ActTrace:
		return unix.SECCOMP_RET_TRACE | data, nil
	case specs.ActKill, specs.ActKillThread:
		return unix.SECCOMP_RET_KILL_THREAD, nil
	case specs.ActKillProcess:
		return unix.SECCOMP_RET_KILL_PROCESS, nil
	case specs.ActTrap:
		return unix.SECCOMP_RET_TRAP, nil
	case specs.ActLog:
		return unix.SECCOMP_RET_LOG, nil
	case specs.ActNotify:
		return 0, fmt.Errorf("seccomp action %s is not supported: the sandbox has no user notification", action)
	}
	return 0, fmt.Errorf("unknown seccomp action %q", action)
}

// seccompRule is one rule of a syscall: all of conds hold → action.
type seccompRule struct {
	conds  []specs.LinuxSeccompArg
	action uint32
}

// CompileSeccomp compiles a spec's seccomp section.
func CompileSeccomp(s *specs.LinuxSeccomp) (*SeccompFilter, error) {
	if s.ListenerPath != "" {
		return nil, fmt.Errorf("seccomp listenerPath is not supported: the sandbox has no user notification")
	}
	def, err := seccompAction(s.DefaultAction, s.DefaultErrnoRet)
	if err != nil {
		return nil, fmt.Errorf("seccomp defaultAction: %w", err)
	}
	out := &SeccompFilter{}
	for _, f := range s.Flags {
		switch f {
		case specs.LinuxSeccompFlagLog:
			out.Flags |= kernel.SeccompFlagLog
		case specs.LinuxSeccompFlagSpecAllow:
			out.Flags |= kernel.SeccompFlagSpecAllow
		case "SECCOMP_FILTER_FLAG_TSYNC":
			// Init has one thread when the filter goes in.
		default:
			return nil, fmt.Errorf("seccomp flag %q is not supported", f)
		}
	}
	x32 := false
	for _, a := range s.Architectures {
		switch a {
		case specs.ArchX86_64, specs.ArchX86:
		case specs.ArchX32:
			x32 = true
		default:
			// Other architectures' sections never see a syscall
			// here: they are accepted, as runc accepts any arch
			// libseccomp knows.
			if !strings.HasPrefix(string(a), "SCMP_ARCH_") {
				return nil, fmt.Errorf("unknown seccomp architecture %q", a)
			}
		}
	}

	rules := make(map[uintptr][]seccompRule)
	skipped := make(map[string]bool)
	maxNr := uintptr(0)
	for i, sc := range s.Syscalls {
		act, err := seccompAction(sc.Action, sc.ErrnoRet)
		if err != nil {
			return nil, fmt.Errorf("seccomp syscalls[%d]: %w", i, err)
		}
		for _, a := range sc.Args {
			if a.Index > 5 {
				return nil, fmt.Errorf("seccomp syscalls[%d]: argument index %d out of range 0-5", i, a.Index)
			}
			if !knownOp(a.Op) {
				return nil, fmt.Errorf("seccomp syscalls[%d]: unknown operator %q", i, a.Op)
			}
		}
		if len(sc.Names) == 0 {
			return nil, fmt.Errorf("seccomp syscalls[%d]: no names", i)
		}
		for _, name := range sc.Names {
			nr, ok := syscallNumbers()[name]
			if !ok {
				skipped[name] = true
				continue
			}
			if nr > maxNr {
				maxNr = nr
			}
			if act == def {
				continue
			}
			rules[nr] = append(rules[nr], splitRule(sc.Args, act)...)
		}
	}
	for n := range skipped {
		out.Skipped = append(out.Skipped, n)
	}
	sort.Strings(out.Skipped)

	insns, err := buildSeccomp(rules, def, x32, maxNr)
	if err != nil {
		return nil, err
	}
	p, err := bpf.Compile(insns)
	if err != nil {
		return nil, fmt.Errorf("compiled seccomp profile is invalid: %w", err)
	}
	out.Program = p
	return out, nil
}

func knownOp(op specs.LinuxSeccompOperator) bool {
	switch op {
	case specs.OpNotEqual, specs.OpLessThan, specs.OpLessEqual, specs.OpEqualTo,
		specs.OpGreaterEqual, specs.OpGreaterThan, specs.OpMaskedEqual:
		return true
	}
	return false
}

// splitRule returns the rules for one spec entry: one rule with all
// conditions, or, when an argument index repeats, one per condition.
func splitRule(args []specs.LinuxSeccompArg, act uint32) []seccompRule {
	var seen [6]bool
	repeat := false
	for _, a := range args {
		if seen[a.Index] {
			repeat = true
		}
		seen[a.Index] = true
	}
	if !repeat {
		return []seccompRule{{conds: args, action: act}}
	}
	out := make([]seccompRule, len(args))
	for i, a := range args {
		out[i] = seccompRule{conds: []specs.LinuxSeccompArg{a}, action: act}
	}
	return out
}

// buildSeccomp emits the program: architecture check, x32 check, the
// ENOSYS stub, a binary search on the syscall number, and each syscall's
// rules.
func buildSeccomp(rules map[uintptr][]seccompRule, def uint32, x32 bool, maxNr uintptr) ([]unix.SockFilter, error) {
	var a asm
	rets := make(map[uint32]label)
	ret := func(v uint32) label {
		l, ok := rets[v]
		if !ok {
			l = a.newLabel()
			rets[v] = l
		}
		return l
	}
	badArch := ret(unix.SECCOMP_RET_KILL_THREAD)
	lDef := ret(def)

	a.stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offArch)
	a.jump(unix.BPF_JEQ, unix.AUDIT_ARCH_X86_64, next, badArch)
	a.stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offNr)
	if x32 {
		a.jump(unix.BPF_JGE, x32SyscallBit, lDef, next)
	} else {
		a.jump(unix.BPF_JGE, x32SyscallBit, badArch, next)
	}
	refuses := def&unix.SECCOMP_RET_ACTION_FULL != unix.SECCOMP_RET_ALLOW && def&unix.SECCOMP_RET_ACTION_FULL != unix.SECCOMP_RET_LOG
	if refuses && maxNr > 0 {
		a.jump(unix.BPF_JGT, uint32(maxNr), ret(unix.SECCOMP_RET_ERRNO|uint32(unix.ENOSYS)), next)
	}

	nrs := make([]uintptr, 0, len(rules))
	for nr := range rules {
		nrs = append(nrs, nr)
	}
	sort.Slice(nrs, func(i, j int) bool { return nrs[i] < nrs[j] })
	bodies := make(map[uintptr]label, len(nrs))
	for _, nr := range nrs {
		rs := rules[nr]
		if len(rs) == 1 && len(rs[0].conds) == 0 {
			bodies[nr] = ret(rs[0].action)
		} else {
			bodies[nr] = a.newLabel()
		}
	}
	a.search(nrs, bodies, lDef)

	// Bodies: conditional rules in order, then the first unconditional
	// one, else the default.
	for _, nr := range nrs {
		rs := rules[nr]
		if len(rs) == 1 && len(rs[0].conds) == 0 {
			continue
		}
		a.bind(bodies[nr])
		final := lDef
		found := false
		for _, r := range rs {
			if len(r.conds) == 0 {
				if !found {
					final, found = ret(r.action), true
				}
				continue
			}
			nextRule := a.newLabel()
			for _, c := range r.conds {
				a.cond(c, nextRule)
			}
			a.ja(ret(r.action))
			a.bind(nextRule)
		}
		a.ja(final)
	}

	// The shared returns, in a fixed order.
	vals := make([]uint32, 0, len(rets))
	for v := range rets {
		vals = append(vals, v)
	}
	sort.Slice(vals, func(i, j int) bool { return vals[i] < vals[j] })
	for _, v := range vals {
		a.bind(rets[v])
		a.stmt(unix.BPF_RET|unix.BPF_K, v)
	}
	return a.assemble()
}

// loadSeccomp compiles the profile s, logging the syscall names it
// skips. A nil s gives a nil filter.
func loadSeccomp(s *specs.LinuxSeccomp, log *slog.Logger) (*SeccompFilter, error) {
	if s == nil {
		return nil, nil
	}
	f, err := CompileSeccomp(s)
	if err != nil {
		return nil, err
	}
	if len(f.Skipped) > 0 {
		log.Info("seccomp: skipping syscall names amd64 does not have", "names", strings.Join(f.Skipped, ","))
	}
	return f, nil
}

// install attaches f to t, which has not run yet: as runc installs the
// filter just before it execs the container's process, no privilege is
// needed. A nil f does nothing.
func (f *SeccompFilter) install(t *kernel.Task) error {
	if f == nil {
		return nil
	}
	if _, err := t.AttachSeccompFilter(f.Program, f.Flags); err != nil {
		return fmt.Errorf("installing the seccomp filter: %w", err)
	}
	return nil
}
