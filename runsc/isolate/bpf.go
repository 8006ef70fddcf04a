package isolate

import (
	"fmt"
	"sort"

	"golang.org/x/sys/unix"
)

// Action is a seccomp return value (SECCOMP_RET_*), with its data bits.
type Action uint32

// The actions a rule or a filter's default can take.
const (
	ActionAllow       Action = unix.SECCOMP_RET_ALLOW
	ActionKillProcess Action = unix.SECCOMP_RET_KILL_PROCESS
	ActionTrap        Action = unix.SECCOMP_RET_TRAP
	ActionLog         Action = unix.SECCOMP_RET_LOG
)

// ActionErrno makes the syscall fail with errno e without running it.
func ActionErrno(e unix.Errno) Action {
	return Action(unix.SECCOMP_RET_ERRNO | (uint32(e) & unix.SECCOMP_RET_DATA))
}

// String names the action the way the kernel documentation does.
func (a Action) String() string {
	switch a & unix.SECCOMP_RET_ACTION_FULL {
	case unix.SECCOMP_RET_ALLOW:
		return "allow"
	case unix.SECCOMP_RET_KILL_PROCESS:
		return "kill_process"
	case unix.SECCOMP_RET_KILL_THREAD:
		return "kill_thread"
	case unix.SECCOMP_RET_TRAP:
		return "trap"
	case unix.SECCOMP_RET_LOG:
		return "log"
	case unix.SECCOMP_RET_ERRNO:
		return fmt.Sprintf("errno(%d)", uint32(a)&unix.SECCOMP_RET_DATA)
	case unix.SECCOMP_RET_TRACE:
		return "trace"
	case unix.SECCOMP_RET_USER_NOTIF:
		return "user_notif"
	}
	return fmt.Sprintf("action(%#x)", uint32(a))
}

// Cond is one condition on a syscall argument: (args[Arg] & Mask) == Value.
// A mask whose high 32 bits are zero checks only the low half, which is
// what int-typed arguments need (the kernel ignores their high bits).
type Cond struct {
	Arg   int
	Mask  uint64
	Value uint64
}

// Eq requires the whole 64-bit argument arg to equal v.
func Eq(arg int, v uint64) Cond { return Cond{Arg: arg, Mask: ^uint64(0), Value: v} }

// Eq32 requires the low 32 bits of argument arg to equal v (for int and
// unsigned int arguments).
func Eq32(arg int, v uint32) Cond { return Cond{Arg: arg, Mask: 0xffffffff, Value: uint64(v)} }

// MaskedEq requires (argument arg & mask) == v.
func MaskedEq(arg int, mask, v uint64) Cond { return Cond{Arg: arg, Mask: mask, Value: v} }

// HasBits requires every bit of bits to be set in argument arg.
func HasBits(arg int, bits uint64) Cond { return Cond{Arg: arg, Mask: bits, Value: bits} }

// NoBits requires every bit of bits to be clear in argument arg.
func NoBits(arg int, bits uint64) Cond { return Cond{Arg: arg, Mask: bits, Value: 0} }

// Match is a conjunction: it holds when all its conditions hold. An empty
// Match always holds.
type Match []Cond

// Rule says what to do with one syscall: when any of Matches holds (or
// Matches is empty), take Action; otherwise fall through to the filter's
// default.
type Rule struct {
	Matches []Match
	Action  Action
}

// Allow allows a syscall whatever its arguments.
var Allow = Rule{Action: ActionAllow}

// Deny kills the process on a syscall, even in the debug modes: it is for
// the calls whose absence is the point of the filter (open, execve, ...).
var Deny = Rule{Action: ActionKillProcess}

// AllowIf allows a syscall when one of ms holds.
func AllowIf(ms ...Match) Rule { return Rule{Matches: ms, Action: ActionAllow} }

// Fail makes a syscall fail with errno e, whatever its arguments.
func Fail(e unix.Errno) Rule { return Rule{Action: ActionErrno(e)} }

// OneOf32 returns one Match per value: argument arg's low 32 bits equal
// one of vals.
func OneOf32(arg int, vals ...uint32) []Match {
	ms := make([]Match, len(vals))
	for i, v := range vals {
		ms[i] = Match{Eq32(arg, v)}
	}
	return ms
}

// Rules maps a syscall number to its rule.
type Rules map[uintptr]Rule

// Merge returns the union of groups. Two rules for the same syscall must
// have the same action; their matches are OR-ed, and an unconditional rule
// wins over a conditional one.
func Merge(groups ...Rules) (Rules, error) {
	out := make(Rules)
	for _, g := range groups {
		for nr, r := range g {
			old, ok := out[nr]
			if !ok {
				out[nr] = r
				continue
			}
			if old.Action != r.Action {
				return nil, fmt.Errorf("syscall %d: conflicting actions %v and %v", nr, old.Action, r.Action)
			}
			if len(old.Matches) == 0 || len(r.Matches) == 0 {
				out[nr] = Rule{Action: r.Action}
				continue
			}
			ms := append(append([]Match(nil), old.Matches...), r.Matches...)
			out[nr] = Rule{Matches: ms, Action: r.Action}
		}
	}
	return out, nil
}

// Offsets in struct seccomp_data.
const (
	dataNR   = 0
	dataArch = 4
	dataArgs = 16
)

// maxInsns is BPF_MAXINSNS: the kernel refuses longer programs.
const maxInsns = 4096

// Filter is a syscall allowlist ready to compile.
type Filter struct {
	// Rules is the per-syscall table.
	Rules Rules
	// Default is the action for a syscall missing from Rules or whose
	// rule's matches all fail. ActionKillProcess in production.
	Default Action
}

// Build compiles the filter to a classic BPF program for seccomp. The
// program:
//   - kills the process unless seccomp_data.arch is this architecture's;
//   - kills the process on x32 syscall numbers;
//   - finds the syscall's rule by binary search over the sorted numbers;
//   - tests the rule's matches in order and returns its action on the
//     first that holds, the default otherwise.
func (f *Filter) Build() ([]unix.SockFilter, error) {
	if f.Default == unix.SECCOMP_RET_KILL_THREAD {
		return nil, fmt.Errorf("filter default action is kill_thread (zero): set Default explicitly")
	}
	nrs := make([]uintptr, 0, len(f.Rules))
	for nr, r := range f.Rules {
		if err := validateRule(nr, r); err != nil {
			return nil, err
		}
		nrs = append(nrs, nr)
	}
	sort.Slice(nrs, func(i, j int) bool { return nrs[i] < nrs[j] })

	var a asm
	rets := make(map[Action]label)
	ret := func(act Action) label {
		if l, ok := rets[act]; ok {
			return l
		}
		l := a.emit(unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: uint32(act)})
		rets[act] = l
		return l
	}
	kill := ret(ActionKillProcess)
	def := ret(f.Default)

	// Rule bodies, emitted back to front: each body tests its matches and
	// falls through to the default.
	bodies := make(map[uintptr]label, len(nrs))
	for i := len(nrs) - 1; i >= 0; i-- {
		r := f.Rules[nrs[i]]
		bodies[nrs[i]] = a.rule(r, ret(r.Action), def)
	}

	// Dispatch on the syscall number, which is in A.
	tree := a.dispatch(nrs, bodies, def)

	// Header: architecture check, then reject x32 numbers.
	a.cond(unix.BPF_JMP|unix.BPF_JGE|unix.BPF_K, x32SyscallBit, kill, tree)
	a.load(dataNR)
	a.cond(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, auditArch, a.next(), kill)
	a.load(dataArch)

	prog := a.program()
	if len(prog) > maxInsns {
		return nil, fmt.Errorf("seccomp program has %d instructions, more than the kernel's limit of %d", len(prog), maxInsns)
	}
	return prog, nil
}

func validateRule(nr uintptr, r Rule) error {
	if nr >= x32SyscallBit {
		return fmt.Errorf("syscall number %#x is out of range", nr)
	}
	if r.Action == unix.SECCOMP_RET_KILL_THREAD {
		return fmt.Errorf("syscall %d: rule has no action", nr)
	}
	for _, m := range r.Matches {
		for _, c := range m {
			if c.Arg < 0 || c.Arg > 5 {
				return fmt.Errorf("syscall %d: argument index %d out of range 0-5", nr, c.Arg)
			}
			if c.Value&^c.Mask != 0 {
				return fmt.Errorf("syscall %d: condition on arg %d can never hold (value %#x outside mask %#x)", nr, c.Arg, c.Value, c.Mask)
			}
		}
	}
	return nil
}

// label names an instruction by its index counted from the end of the
// program: the assembler emits back to front, so every jump target is
// already placed when the jump is emitted.
type label int

// asm is a back-to-front classic BPF assembler. r holds the program
// reversed: r[0] is the last instruction.
type asm struct {
	r []unix.SockFilter
}

func (a *asm) emit(ins unix.SockFilter) label {
	a.r = append(a.r, ins)
	return label(len(a.r) - 1)
}

// next is the label of the instruction emitted last, which is the one that
// follows the next instruction emitted.
func (a *asm) next() label { return label(len(a.r) - 1) }

func (a *asm) load(off uint32) label {
	return a.emit(unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off})
}

// ja emits an unconditional jump to t (32-bit offset).
func (a *asm) ja(t label) label {
	i := len(a.r)
	return a.emit(unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JA, K: uint32(i - int(t) - 1)})
}

// cond emits a conditional jump. Conditional offsets are 8 bits, so a
// target further than 255 instructions is reached through a trampoline
// (an unconditional jump) placed right after the conditional.
func (a *asm) cond(code uint16, k uint32, jt, jf label) label {
	n := len(a.r)
	// With up to two trampolines the jump lands at index n+2, so a target
	// t is in reach when n+2-t-1 <= 255.
	if n+1-int(jf) > 255 {
		jf = a.ja(jf)
	}
	if n+1-int(jt) > 255 {
		jt = a.ja(jt)
	}
	i := len(a.r)
	return a.emit(unix.SockFilter{Code: code, Jt: uint8(i - int(jt) - 1), Jf: uint8(i - int(jf) - 1), K: k})
}

// rule emits the body of r: its matches in order, each jumping to pass
// when it holds and to the next match (finally fail) when it does not.
func (a *asm) rule(r Rule, pass, fail label) label {
	if len(r.Matches) == 0 {
		return pass
	}
	next := fail
	for i := len(r.Matches) - 1; i >= 0; i-- {
		next = a.match(r.Matches[i], pass, next)
	}
	return next
}

// match emits the conditions of m, each a load of a 32-bit half of an
// argument, an optional AND with the mask, and a comparison.
func (a *asm) match(m Match, pass, fail label) label {
	ok := pass
	for i := len(m) - 1; i >= 0; i-- {
		c := m[i]
		off := uint32(dataArgs + 8*c.Arg)
		// Low half first in the program, so emitted last.
		halves := []struct {
			off         uint32
			mask, value uint32
		}{
			{off, uint32(c.Mask), uint32(c.Value)},
			{off + 4, uint32(c.Mask >> 32), uint32(c.Value >> 32)},
		}
		for h := len(halves) - 1; h >= 0; h-- {
			hv := halves[h]
			if hv.mask == 0 {
				continue // nothing to check in this half
			}
			ok = a.cond(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, hv.value, ok, fail)
			if hv.mask != 0xffffffff {
				ok = a.emit(unix.SockFilter{Code: unix.BPF_ALU | unix.BPF_AND | unix.BPF_K, K: hv.mask})
			}
			ok = a.load(hv.off)
		}
	}
	return ok
}

// linearMax is the largest set of syscall numbers dispatched by a chain of
// equality tests rather than a further split.
const linearMax = 4

// dispatch emits a binary search over the sorted numbers nrs, with the
// syscall number in A, jumping to the number's body or to def.
func (a *asm) dispatch(nrs []uintptr, bodies map[uintptr]label, def label) label {
	if len(nrs) <= linearMax {
		next := def
		for i := len(nrs) - 1; i >= 0; i-- {
			next = a.cond(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, uint32(nrs[i]), bodies[nrs[i]], next)
		}
		return next
	}
	mid := len(nrs) / 2
	hi := a.dispatch(nrs[mid:], bodies, def)
	lo := a.dispatch(nrs[:mid], bodies, def)
	return a.cond(unix.BPF_JMP|unix.BPF_JGE|unix.BPF_K, uint32(nrs[mid]), hi, lo)
}

// program returns the instructions in execution order.
func (a *asm) program() []unix.SockFilter {
	p := make([]unix.SockFilter, len(a.r))
	for i, ins := range a.r {
		p[len(a.r)-1-i] = ins
	}
	return p
}
