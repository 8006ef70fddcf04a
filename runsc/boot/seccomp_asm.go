package boot

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/opencontainers/runtime-spec/specs-go"

	"github.com/moat-sandbox/moat/sentry/bpf"
)

// label names a position in a program being assembled; jumps to it are
// resolved when the program is complete. Jumps only go forward, so a label
// is always bound after the jumps to it.
type label int

// next, as a jump target, is the instruction right after the jump.
const next label = -1

// asm assembles a classic BPF program front to back. Every jump to a label
// is an unconditional jump (32-bit offset); a conditional jump skips over
// one, so no target is ever out of a conditional jump's 8-bit reach.
type asm struct {
	insns  []unix.SockFilter
	labels []int
	fixups []int // indexes of BPF_JA instructions; K holds the label
}

func (a *asm) newLabel() label {
	a.labels = append(a.labels, -1)
	return label(len(a.labels) - 1)
}

func (a *asm) bind(l label) { a.labels[l] = len(a.insns) }

func (a *asm) stmt(code uint16, k uint32) {
	a.insns = append(a.insns, unix.SockFilter{Code: code, K: k})
}

func (a *asm) ja(l label) {
	a.fixups = append(a.fixups, len(a.insns))
	a.stmt(unix.BPF_JMP|unix.BPF_JA, uint32(l))
}

// jump emits BPF_JMP|op|BPF_K on k, going to lt when it holds and to lf
// otherwise.
func (a *asm) jump(op uint16, k uint32, lt, lf label) {
	code := unix.BPF_JMP | op | unix.BPF_K
	switch {
	case lt == next && lf == next:
	case lt == next:
		a.insns = append(a.insns, unix.SockFilter{Code: code, Jt: 1, K: k})
		a.ja(lf)
	case lf == next:
		a.insns = append(a.insns, unix.SockFilter{Code: code, Jf: 1, K: k})
		a.ja(lt)
	default:
		a.insns = append(a.insns, unix.SockFilter{Code: code, Jf: 1, K: k})
		a.ja(lt)
		a.ja(lf)
	}
}

// linearMax is the most syscall numbers tested one by one instead of
// splitting further.
const linearMax = 4

// search emits a binary search over the sorted numbers nrs, with the
// syscall number in A, going to the number's body or to def.
func (a *asm) search(nrs []uintptr, bodies map[uintptr]label, def label) {
	if len(nrs) <= linearMax {
		for _, nr := range nrs {
			a.jump(unix.BPF_JEQ, uint32(nr), bodies[nr], next)
		}
		a.ja(def)
		return
	}
	mid := len(nrs) / 2
	hi := a.newLabel()
	a.jump(unix.BPF_JGE, uint32(nrs[mid]), hi, next)
	a.search(nrs[:mid], bodies, def)
	a.bind(hi)
	a.search(nrs[mid:], bodies, def)
}

// cond emits a 64-bit comparison of an argument: it falls through when c
// holds and jumps to fail otherwise.
func (a *asm) cond(c specs.LinuxSeccompArg, fail label) {
	lo := uint32(offArgs + 8*c.Index)
	hi := lo + 4
	ld := func(off uint32) { a.stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, off) }
	vhi, vlo := uint32(c.Value>>32), uint32(c.Value)
	pass := a.newLabel()
	switch c.Op {
	case specs.OpEqualTo:
		ld(hi)
		a.jump(unix.BPF_JEQ, vhi, next, fail)
		ld(lo)
		a.jump(unix.BPF_JEQ, vlo, next, fail)
	case specs.OpNotEqual:
		ld(hi)
		a.jump(unix.BPF_JEQ, vhi, next, pass)
		ld(lo)
		a.jump(unix.BPF_JEQ, vlo, fail, next)
	case specs.OpMaskedEqual:
		// (arg & Value) == ValueTwo.
		whi, wlo := uint32(c.ValueTwo>>32), uint32(c.ValueTwo)
		ld(hi)
		a.stmt(unix.BPF_ALU|unix.BPF_AND|unix.BPF_K, vhi)
		a.jump(unix.BPF_JEQ, whi, next, fail)
		ld(lo)
		a.stmt(unix.BPF_ALU|unix.BPF_AND|unix.BPF_K, vlo)
		a.jump(unix.BPF_JEQ, wlo, next, fail)
	case specs.OpGreaterThan, specs.OpGreaterEqual:
		ld(hi)
		a.jump(unix.BPF_JGT, vhi, pass, next)
		a.jump(unix.BPF_JEQ, vhi, next, fail)
		ld(lo)
		op := uint16(unix.BPF_JGT)
		if c.Op == specs.OpGreaterEqual {
			op = unix.BPF_JGE
		}
		a.jump(op, vlo, next, fail)
	case specs.OpLessThan, specs.OpLessEqual:
		// The negation of GE and GT.
		ld(hi)
		a.jump(unix.BPF_JGT, vhi, fail, next)
		a.jump(unix.BPF_JEQ, vhi, next, pass)
		ld(lo)
		op := uint16(unix.BPF_JGE)
		if c.Op == specs.OpLessEqual {
			op = unix.BPF_JGT
		}
		a.jump(op, vlo, fail, next)
	}
	a.bind(pass)
}

// assemble resolves the jumps and returns the program.
func (a *asm) assemble() ([]unix.SockFilter, error) {
	for _, pc := range a.fixups {
		l := label(a.insns[pc].K)
		target := a.labels[l]
		if target < 0 {
			return nil, fmt.Errorf("seccomp assembler: label %d never placed", l)
		}
		off := target - pc - 1
		if off < 0 {
			return nil, fmt.Errorf("seccomp assembler: backward jump at %d", pc)
		}
		a.insns[pc].K = uint32(off)
	}
	if len(a.insns) > bpf.MaxInstructions {
		return nil, fmt.Errorf("seccomp profile compiles to %d instructions, more than the limit of %d", len(a.insns), bpf.MaxInstructions)
	}
	return a.insns, nil
}
