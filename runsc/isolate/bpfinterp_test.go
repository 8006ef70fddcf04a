package isolate

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"
)

// This file is a small classic-BPF interpreter, the subset seccomp allows,
// used to check what the programs Build emits decide, and a reference
// evaluator of a Filter written straight from Rule's documentation.

// seccompData lays out struct seccomp_data.
func seccompData(nr, arch uint32, args [6]uint64) []byte {
	b := make([]byte, 64)
	binary.LittleEndian.PutUint32(b[0:], nr)
	binary.LittleEndian.PutUint32(b[4:], arch)
	binary.LittleEndian.PutUint64(b[8:], 0x401000) // instruction pointer
	for i, a := range args {
		binary.LittleEndian.PutUint64(b[16+8*i:], a)
	}
	return b
}

// runBPF executes prog on data and returns what it returns. It checks what
// the kernel's verifier would: jumps inside the program, aligned in-range
// loads, and that the program cannot fall off its end.
func runBPF(prog []unix.SockFilter, data []byte) (uint32, error) {
	if len(prog) == 0 || len(prog) > maxInsns {
		return 0, fmt.Errorf("bad program length %d", len(prog))
	}
	var acc uint32
	pc := 0
	for steps := 0; steps <= len(prog); steps++ {
		if pc < 0 || pc >= len(prog) {
			return 0, fmt.Errorf("pc %d out of program", pc)
		}
		ins := prog[pc]
		jump := func(off int) error {
			t := pc + 1 + off
			if t >= len(prog) {
				return fmt.Errorf("insn %d jumps to %d, past the end", pc, t)
			}
			pc = t
			return nil
		}
		switch ins.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			if ins.K%4 != 0 || int(ins.K)+4 > len(data) {
				return 0, fmt.Errorf("insn %d: bad load offset %d", pc, ins.K)
			}
			acc = binary.LittleEndian.Uint32(data[ins.K:])
			pc++
		case unix.BPF_ALU | unix.BPF_AND | unix.BPF_K:
			acc &= ins.K
			pc++
		case unix.BPF_JMP | unix.BPF_JA:
			if err := jump(int(ins.K)); err != nil {
				return 0, err
			}
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K,
			unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K,
			unix.BPF_JMP | unix.BPF_JGT | unix.BPF_K,
			unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			var cond bool
			switch ins.Code &^ (unix.BPF_JMP | unix.BPF_K) {
			case unix.BPF_JEQ:
				cond = acc == ins.K
			case unix.BPF_JGE:
				cond = acc >= ins.K
			case unix.BPF_JGT:
				cond = acc > ins.K
			case unix.BPF_JSET:
				cond = acc&ins.K != 0
			}
			off := int(ins.Jf)
			if cond {
				off = int(ins.Jt)
			}
			if err := jump(off); err != nil {
				return 0, err
			}
		case unix.BPF_RET | unix.BPF_K:
			return ins.K, nil
		default:
			return 0, fmt.Errorf("insn %d: unsupported opcode %#x", pc, ins.Code)
		}
	}
	return 0, fmt.Errorf("program did not return")
}

// reference decides a syscall the way Filter documents, without BPF.
func reference(f *Filter, nr, arch uint32, args [6]uint64) Action {
	if arch != auditArch || nr >= x32SyscallBit {
		return ActionKillProcess
	}
	r, ok := f.Rules[uintptr(nr)]
	if !ok {
		return f.Default
	}
	if len(r.Matches) == 0 {
		return r.Action
	}
	for _, m := range r.Matches {
		holds := true
		for _, c := range m {
			if args[c.Arg]&c.Mask != c.Value {
				holds = false
			}
		}
		if holds {
			return r.Action
		}
	}
	return f.Default
}
