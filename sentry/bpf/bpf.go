// Package bpf checks and runs classic BPF programs as Linux's seccomp does:
// Compile validates a program with the rules of the kernel's classic BPF
// checker plus the narrower opcode set seccomp accepts, and Program.Run
// evaluates it on a struct seccomp_data. A compiled program only jumps
// forward, so Run always ends, in at most as many steps as the program has
// instructions. The package has no locks and no state beyond the Program
// values, which are immutable and safe to share between goroutines.
package bpf

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"
)

// MaxInstructions is BPF_MAXINSNS, the longest program the kernel takes.
const MaxInstructions = 4096

// memWords is BPF_MEMWORDS, the size of the scratch memory M[].
const memWords = 16

// DataSize is sizeof(struct seccomp_data).
const DataSize = 64

// InstructionSize is sizeof(struct sock_filter).
const InstructionSize = 8

// Data is struct seccomp_data: what a seccomp filter sees of a syscall.
type Data struct {
	Nr                 int32
	Arch               uint32
	InstructionPointer uint64
	Args               [6]uint64
}

// word returns the 32-bit word of d's little-endian image at byte offset
// off, which Compile has checked to be aligned and in range.
func (d *Data) word(off uint32) uint32 {
	switch i := off / 4; i {
	case 0:
		return uint32(d.Nr)
	case 1:
		return d.Arch
	case 2:
		return uint32(d.InstructionPointer)
	case 3:
		return uint32(d.InstructionPointer >> 32)
	default:
		a := d.Args[(i-4)/2]
		if i%2 == 1 {
			return uint32(a >> 32)
		}
		return uint32(a)
	}
}

// Error is a program Compile refuses; Linux answers EINVAL for all of
// them.
type Error struct {
	// Index is the offending instruction, -1 for the program as a whole.
	Index  int
	Reason string
}

func (e *Error) Error() string {
	if e.Index < 0 {
		return "bpf: " + e.Reason
	}
	return fmt.Sprintf("bpf: instruction %d: %s", e.Index, e.Reason)
}

// Errno is unix.EINVAL, so callers can return an Error as the syscall's
// error through errors.As.
func (e *Error) Errno() unix.Errno { return unix.EINVAL }

// Program is a validated seccomp program.
type Program struct {
	insns []unix.SockFilter
}

// Len returns the number of instructions.
func (p Program) Len() int { return len(p.insns) }

// Instructions returns a copy of the program.
func (p Program) Instructions() []unix.SockFilter {
	return append([]unix.SockFilter(nil), p.insns...)
}

// Decode reads struct sock_filter values from their in-memory form (as an
// application passes them to seccomp(2)). len(b) must be a multiple of
// InstructionSize.
func Decode(b []byte) ([]unix.SockFilter, error) {
	if len(b)%InstructionSize != 0 {
		return nil, &Error{Index: -1, Reason: fmt.Sprintf("%d bytes is not a whole number of instructions", len(b))}
	}
	out := make([]unix.SockFilter, len(b)/InstructionSize)
	for i := range out {
		c := b[i*InstructionSize:]
		out[i] = unix.SockFilter{
			Code: binary.LittleEndian.Uint16(c[0:]),
			Jt:   c[2],
			Jf:   c[3],
			K:    binary.LittleEndian.Uint32(c[4:]),
		}
	}
	return out, nil
}

// Opcodes, spelled out as the classic BPF encoding composes them.
const (
	opLdAbsW  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	opLdLenW  = unix.BPF_LD | unix.BPF_W | unix.BPF_LEN
	opLdxLenW = unix.BPF_LDX | unix.BPF_W | unix.BPF_LEN
	opLdImm   = unix.BPF_LD | unix.BPF_IMM
	opLdxImm  = unix.BPF_LDX | unix.BPF_IMM
	opLdMem   = unix.BPF_LD | unix.BPF_MEM
	opLdxMem  = unix.BPF_LDX | unix.BPF_MEM
	opSt      = unix.BPF_ST
	opStx     = unix.BPF_STX
	opRetK    = unix.BPF_RET | unix.BPF_K
	opRetA    = unix.BPF_RET | unix.BPF_A
	opTax     = unix.BPF_MISC | unix.BPF_TAX
	opTxa     = unix.BPF_MISC | unix.BPF_TXA
	opJa      = unix.BPF_JMP | unix.BPF_JA
	opNeg     = unix.BPF_ALU | unix.BPF_NEG
)

// Compile validates insns as seccomp_prepare_filter does and returns the
// program. The rules, all answered with an *Error (EINVAL):
//   - 1 to MaxInstructions instructions, the last a return;
//   - only the opcodes seccomp allows: loads of 32-bit words of
//     seccomp_data at offsets below DataSize that are multiples of 4,
//     length loads, immediates, scratch memory, ALU operations other than
//     modulo, unconditional and conditional jumps, TAX/TXA and returns;
//   - no division by a zero constant, no constant shift of 32 or more;
//   - scratch memory indexes below 16, and no load of a word that is not
//     stored on every path to the load;
//   - jumps land inside the program.
func Compile(insns []unix.SockFilter) (Program, error) {
	n := len(insns)
	if n == 0 || n > MaxInstructions {
		return Program{}, &Error{Index: -1, Reason: fmt.Sprintf("length %d is outside 1..%d", n, MaxInstructions)}
	}
	for pc, ins := range insns {
		if err := checkInstruction(pc, n, ins); err != nil {
			return Program{}, err
		}
	}
	if c := insns[n-1].Code; c != opRetK && c != opRetA {
		return Program{}, &Error{Index: n - 1, Reason: "the last instruction is not a return"}
	}
	if err := checkMemory(insns); err != nil {
		return Program{}, err
	}
	return Program{insns: append([]unix.SockFilter(nil), insns...)}, nil
}

func checkInstruction(pc, n int, ins unix.SockFilter) error {
	bad := func(format string, a ...any) error {
		return &Error{Index: pc, Reason: fmt.Sprintf(format, a...)}
	}
	switch ins.Code {
	case opLdAbsW:
		if ins.K >= DataSize || ins.K%4 != 0 {
			return bad("load at offset %d is outside seccomp_data or unaligned", ins.K)
		}
	case opLdLenW, opLdxLenW, opLdImm, opLdxImm, opRetK, opRetA, opTax, opTxa, opNeg:
	case opLdMem, opLdxMem, opSt, opStx:
		if ins.K >= memWords {
			return bad("scratch memory index %d out of range", ins.K)
		}
	case opJa:
		if uint64(ins.K) >= uint64(n-pc-1) {
			return bad("jump past the end")
		}
	default:
		switch ins.Code & 0x07 {
		case unix.BPF_ALU:
			if !aluOK(ins.Code) {
				return bad("opcode %#x not allowed", ins.Code)
			}
			if ins.Code&unix.BPF_X == 0 {
				op := ins.Code & 0xf0
				if op == unix.BPF_DIV && ins.K == 0 {
					return bad("division by zero")
				}
				if (op == unix.BPF_LSH || op == unix.BPF_RSH) && ins.K >= 32 {
					return bad("shift by %d", ins.K)
				}
			}
		case unix.BPF_JMP:
			switch ins.Code &^ unix.BPF_X {
			case unix.BPF_JMP | unix.BPF_JEQ, unix.BPF_JMP | unix.BPF_JGT, unix.BPF_JMP | unix.BPF_JGE, unix.BPF_JMP | unix.BPF_JSET:
			default:
				return bad("opcode %#x not allowed", ins.Code)
			}
			if pc+int(ins.Jt)+1 >= n || pc+int(ins.Jf)+1 >= n {
				return bad("jump past the end")
			}
		default:
			return bad("opcode %#x not allowed", ins.Code)
		}
	}
	return nil
}

// aluOK reports whether code is one of the ALU operations seccomp allows
// (everything but modulo; NEG is handled by the caller).
func aluOK(code uint16) bool {
	if code&^(0xf0|unix.BPF_X) != unix.BPF_ALU {
		return false
	}
	switch code & 0xf0 {
	case unix.BPF_ADD, unix.BPF_SUB, unix.BPF_MUL, unix.BPF_DIV, unix.BPF_AND, unix.BPF_OR, unix.BPF_XOR, unix.BPF_LSH, unix.BPF_RSH:
		return true
	}
	return false
}

// checkMemory refuses a program that may load a scratch word before
// storing it. Like the kernel's check it follows the program in order:
// the words known stored at an instruction are those stored on the
// straight-line path to it and on every jump to it.
func checkMemory(insns []unix.SockFilter) error {
	masks := make([]uint16, len(insns))
	for i := range masks {
		masks[i] = 0xffff
	}
	valid := uint16(0)
	for pc, ins := range insns {
		valid &= masks[pc]
		switch ins.Code {
		case opSt, opStx:
			valid |= 1 << ins.K
		case opLdMem, opLdxMem:
			if valid&(1<<ins.K) == 0 {
				return &Error{Index: pc, Reason: fmt.Sprintf("scratch word %d may be read before it is written", ins.K)}
			}
		case opJa:
			masks[pc+1+int(ins.K)] &= valid
			valid = 0xffff
		default:
			if ins.Code&0x07 == unix.BPF_JMP {
				masks[pc+1+int(ins.Jt)] &= valid
				masks[pc+1+int(ins.Jf)] &= valid
				valid = 0xffff
			}
		}
	}
	return nil
}

// Run evaluates p on d and returns the program's return value. It does not
// allocate. A division by a zero X returns 0, as in the kernel.
func (p Program) Run(d *Data) uint32 {
	var a, x uint32
	var mem [memWords]uint32
	insns := p.insns
	for pc := 0; pc < len(insns); pc++ {
		ins := &insns[pc]
		switch ins.Code {
		case opLdAbsW:
			a = d.word(ins.K)
		case opLdLenW:
			a = DataSize
		case opLdxLenW:
			x = DataSize
		case opLdImm:
			a = ins.K
		case opLdxImm:
			x = ins.K
		case opLdMem:
			a = mem[ins.K]
		case opLdxMem:
			x = mem[ins.K]
		case opSt:
			mem[ins.K] = a
		case opStx:
			mem[ins.K] = x
		case opRetK:
			return ins.K
		case opRetA:
			return a
		case opTax:
			x = a
		case opTxa:
			a = x
		case opJa:
			pc += int(ins.K)
		case opNeg:
			a = -a
		default:
			src := ins.K
			if ins.Code&unix.BPF_X != 0 {
				src = x
			}
			if ins.Code&0x07 == unix.BPF_JMP {
				var taken bool
				switch ins.Code & 0xf0 {
				case unix.BPF_JEQ:
					taken = a == src
				case unix.BPF_JGT:
					taken = a > src
				case unix.BPF_JGE:
					taken = a >= src
				case unix.BPF_JSET:
					taken = a&src != 0
				}
				if taken {
					pc += int(ins.Jt)
				} else {
					pc += int(ins.Jf)
				}
				continue
			}
			switch ins.Code & 0xf0 {
			case unix.BPF_ADD:
				a += src
			case unix.BPF_SUB:
				a -= src
			case unix.BPF_MUL:
				a *= src
			case unix.BPF_DIV:
				if src == 0 {
					return 0
				}
				a /= src
			case unix.BPF_AND:
				a &= src
			case unix.BPF_OR:
				a |= src
			case unix.BPF_XOR:
				a ^= src
			case unix.BPF_LSH:
				a <<= src & 31
			case unix.BPF_RSH:
				a >>= src & 31
			}
		}
	}
	// Unreachable for a compiled program: its last instruction returns.
	return 0
}
