package bpf

import (
	"encoding/binary"
	"errors"
	"testing"

	"golang.org/x/sys/unix"
)

func stmt(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }

func jump(code uint16, k uint32, jt, jf uint8) unix.SockFilter {
	return unix.SockFilter{Code: code, Jt: jt, Jf: jf, K: k}
}

const (
	retAllow = unix.SECCOMP_RET_ALLOW
	retKill  = unix.SECCOMP_RET_KILL_PROCESS
)

// denyNr returns a program that answers errno e for syscall nr and allows
// everything else.
func denyNr(nr uint32, e uint32) []unix.SockFilter {
	return []unix.SockFilter{
		stmt(opLdAbsW, 0),
		jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, nr, 0, 1),
		stmt(opRetK, unix.SECCOMP_RET_ERRNO|e),
		stmt(opRetK, retAllow),
	}
}

func TestCompileRejects(t *testing.T) {
	long := make([]unix.SockFilter, MaxInstructions+1)
	for i := range long {
		long[i] = stmt(opRetK, retAllow)
	}
	cases := []struct {
		name string
		prog []unix.SockFilter
	}{
		{"empty", nil},
		{"too long", long},
		{"no final return", []unix.SockFilter{stmt(opLdAbsW, 0)}},
		{"load past seccomp_data", []unix.SockFilter{stmt(opLdAbsW, 64), stmt(opRetA, 0)}},
		{"unaligned load", []unix.SockFilter{stmt(opLdAbsW, 2), stmt(opRetA, 0)}},
		{"half-word load", []unix.SockFilter{stmt(unix.BPF_LD|unix.BPF_H|unix.BPF_ABS, 0), stmt(opRetA, 0)}},
		{"indirect load", []unix.SockFilter{stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_IND, 0), stmt(opRetA, 0)}},
		{"modulo", []unix.SockFilter{stmt(unix.BPF_ALU|unix.BPF_MOD|unix.BPF_K, 3), stmt(opRetA, 0)}},
		{"division by zero", []unix.SockFilter{stmt(unix.BPF_ALU|unix.BPF_DIV|unix.BPF_K, 0), stmt(opRetA, 0)}},
		{"shift by 32", []unix.SockFilter{stmt(unix.BPF_ALU|unix.BPF_LSH|unix.BPF_K, 32), stmt(opRetA, 0)}},
		{"return X", []unix.SockFilter{stmt(unix.BPF_RET|unix.BPF_X, 0)}},
		{"memory index", []unix.SockFilter{stmt(opSt, 16), stmt(opRetA, 0)}},
		{"read before write", []unix.SockFilter{stmt(opLdMem, 3), stmt(opRetA, 0)}},
		{"write on one path only", []unix.SockFilter{
			jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, 0, 0, 1),
			stmt(opSt, 1),
			stmt(opLdMem, 1),
			stmt(opRetA, 0),
		}},
		{"ja past end", []unix.SockFilter{stmt(opJa, 1), stmt(opRetA, 0)}},
		{"ja huge", []unix.SockFilter{stmt(opJa, 0xffffffff), stmt(opRetA, 0)}},
		{"jt past end", []unix.SockFilter{jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, 0, 1, 0), stmt(opRetA, 0)}},
		{"jf past end", []unix.SockFilter{jump(unix.BPF_JMP|unix.BPF_JGT|unix.BPF_X, 0, 0, 1), stmt(opRetA, 0)}},
		{"unknown opcode", []unix.SockFilter{stmt(0xff, 0), stmt(opRetA, 0)}},
		{"high opcode bits", []unix.SockFilter{stmt(0x100|opRetK, 0)}},
		{"jump with size bits", []unix.SockFilter{jump(unix.BPF_JMP|unix.BPF_JEQ|0x100, 0, 0, 0), stmt(opRetA, 0)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Compile(c.prog)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Compile = %v, want an *Error", err)
			}
			if e.Errno() != unix.EINVAL {
				t.Fatalf("Errno = %v", e.Errno())
			}
		})
	}
}

func TestRun(t *testing.T) {
	data := Data{Nr: 39, Arch: unix.AUDIT_ARCH_X86_64, InstructionPointer: 0x1122334455667788,
		Args: [6]uint64{0xaaaabbbbccccdddd, 1, 2, 3, 4, 0xffffffff00000005}}
	cases := []struct {
		name string
		prog []unix.SockFilter
		want uint32
	}{
		{"allow", []unix.SockFilter{stmt(opRetK, retAllow)}, retAllow},
		{"deny getpid", denyNr(39, 1), unix.SECCOMP_RET_ERRNO | 1},
		{"deny other", denyNr(40, 1), retAllow},
		{"arch", []unix.SockFilter{stmt(opLdAbsW, 4), stmt(opRetA, 0)}, unix.AUDIT_ARCH_X86_64},
		{"ip low", []unix.SockFilter{stmt(opLdAbsW, 8), stmt(opRetA, 0)}, 0x55667788},
		{"ip high", []unix.SockFilter{stmt(opLdAbsW, 12), stmt(opRetA, 0)}, 0x11223344},
		{"arg0 low", []unix.SockFilter{stmt(opLdAbsW, 16), stmt(opRetA, 0)}, 0xccccdddd},
		{"arg0 high", []unix.SockFilter{stmt(opLdAbsW, 20), stmt(opRetA, 0)}, 0xaaaabbbb},
		{"arg5 low", []unix.SockFilter{stmt(opLdAbsW, 56), stmt(opRetA, 0)}, 5},
		{"arg5 high", []unix.SockFilter{stmt(opLdAbsW, 60), stmt(opRetA, 0)}, 0xffffffff},
		{"len", []unix.SockFilter{stmt(opLdLenW, 0), stmt(opRetA, 0)}, 64},
		{"ldx len, txa", []unix.SockFilter{stmt(opLdxLenW, 0), stmt(opTxa, 0), stmt(opRetA, 0)}, 64},
		{"alu", []unix.SockFilter{
			stmt(opLdImm, 10),
			stmt(unix.BPF_ALU|unix.BPF_ADD|unix.BPF_K, 5),  // 15
			stmt(unix.BPF_ALU|unix.BPF_MUL|unix.BPF_K, 4),  // 60
			stmt(unix.BPF_ALU|unix.BPF_SUB|unix.BPF_K, 6),  // 54
			stmt(unix.BPF_ALU|unix.BPF_DIV|unix.BPF_K, 9),  // 6
			stmt(unix.BPF_ALU|unix.BPF_LSH|unix.BPF_K, 4),  // 96
			stmt(unix.BPF_ALU|unix.BPF_RSH|unix.BPF_K, 1),  // 48
			stmt(unix.BPF_ALU|unix.BPF_OR|unix.BPF_K, 1),   // 49
			stmt(unix.BPF_ALU|unix.BPF_AND|unix.BPF_K, 33), // 33
			stmt(unix.BPF_ALU|unix.BPF_XOR|unix.BPF_K, 3),  // 34
			stmt(opRetA, 0),
		}, 34},
		{"neg", []unix.SockFilter{stmt(opLdImm, 1), stmt(opNeg, 0), stmt(opRetA, 0)}, 0xffffffff},
		{"alu x", []unix.SockFilter{
			stmt(opLdxImm, 3), stmt(opLdImm, 7),
			stmt(unix.BPF_ALU|unix.BPF_MUL|unix.BPF_X, 0), // 21
			stmt(unix.BPF_ALU|unix.BPF_LSH|unix.BPF_X, 0), // 168
			stmt(opRetA, 0),
		}, 168},
		{"div by zero X returns 0", []unix.SockFilter{
			stmt(opLdxImm, 0), stmt(opLdImm, 7),
			stmt(unix.BPF_ALU|unix.BPF_DIV|unix.BPF_X, 0),
			stmt(opRetK, retAllow),
		}, 0},
		{"memory", []unix.SockFilter{
			stmt(opLdImm, 42), stmt(opSt, 15), stmt(opLdImm, 0),
			stmt(opLdxMem, 15), stmt(opStx, 0), stmt(opLdMem, 0), stmt(opRetA, 0),
		}, 42},
		{"ja", []unix.SockFilter{stmt(opJa, 1), stmt(opRetK, 1), stmt(opRetK, 2)}, 2},
		{"jgt k", []unix.SockFilter{stmt(opLdAbsW, 0), jump(unix.BPF_JMP|unix.BPF_JGT|unix.BPF_K, 38, 0, 1), stmt(opRetK, 1), stmt(opRetK, 2)}, 1},
		{"jge k equal", []unix.SockFilter{stmt(opLdAbsW, 0), jump(unix.BPF_JMP|unix.BPF_JGE|unix.BPF_K, 39, 0, 1), stmt(opRetK, 1), stmt(opRetK, 2)}, 1},
		{"jgt k equal", []unix.SockFilter{stmt(opLdAbsW, 0), jump(unix.BPF_JMP|unix.BPF_JGT|unix.BPF_K, 39, 0, 1), stmt(opRetK, 1), stmt(opRetK, 2)}, 2},
		{"jset", []unix.SockFilter{stmt(opLdAbsW, 0), jump(unix.BPF_JMP|unix.BPF_JSET|unix.BPF_K, 0x40, 1, 0), stmt(opRetK, 1), stmt(opRetK, 2)}, 1},
		{"jeq x", []unix.SockFilter{stmt(opLdxImm, 39), stmt(opLdAbsW, 0), jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_X, 0, 0, 1), stmt(opRetK, 1), stmt(opRetK, 2)}, 1},
		{"memory set on both paths", []unix.SockFilter{
			stmt(opLdAbsW, 0),
			jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, 39, 0, 2),
			stmt(opSt, 2),
			stmt(opJa, 1),
			stmt(opSt, 2),
			stmt(opLdMem, 2),
			stmt(opRetA, 0),
		}, 39},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Compile(c.prog)
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			if got := p.Run(&data); got != c.want {
				t.Fatalf("Run = %#x, want %#x", got, c.want)
			}
		})
	}
}

func TestDecode(t *testing.T) {
	b := []byte{0x20, 0, 1, 2, 4, 0, 0, 0, 0x06, 0, 0, 0, 0, 0, 0xff, 0x7f}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	want := []unix.SockFilter{{Code: 0x20, Jt: 1, Jf: 2, K: 4}, {Code: 6, K: 0x7fff0000}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("Decode = %+v, want %+v", got, want)
	}
	if _, err := Decode(b[:7]); err == nil {
		t.Fatal("Decode of 7 bytes succeeded")
	}
}

func TestRunDoesNotAllocate(t *testing.T) {
	p, err := Compile(denyNr(39, 1))
	if err != nil {
		t.Fatal(err)
	}
	d := Data{Nr: 39}
	if n := testing.AllocsPerRun(100, func() { p.Run(&d) }); n != 0 {
		t.Fatalf("Run allocates %v times", n)
	}
}

func BenchmarkRun(b *testing.B) {
	p, err := Compile(denyNr(39, 1))
	if err != nil {
		b.Fatal(err)
	}
	d := Data{Nr: 40}
	for i := 0; i < b.N; i++ {
		p.Run(&d)
	}
}

// FuzzCompileRun feeds arbitrary programs to Compile and runs the ones it
// accepts: neither may panic, and Run must end within the program's
// length (jumps only go forward).
func FuzzCompileRun(f *testing.F) {
	enc := func(p []unix.SockFilter) []byte {
		b := make([]byte, len(p)*InstructionSize)
		for i, ins := range p {
			binary.LittleEndian.PutUint16(b[i*8:], ins.Code)
			b[i*8+2], b[i*8+3] = ins.Jt, ins.Jf
			binary.LittleEndian.PutUint32(b[i*8+4:], ins.K)
		}
		return b
	}
	f.Add(enc(denyNr(39, 1)), int32(39), uint64(0))
	f.Add(enc([]unix.SockFilter{stmt(opLdImm, 42), stmt(opSt, 15), stmt(opLdMem, 15), stmt(opRetA, 0)}), int32(0), uint64(7))
	f.Add(enc([]unix.SockFilter{stmt(opLdxImm, 0), stmt(unix.BPF_ALU|unix.BPF_DIV|unix.BPF_X, 0), stmt(opRetA, 0)}), int32(1), uint64(1))
	f.Fuzz(func(t *testing.T, b []byte, nr int32, arg uint64) {
		insns, err := Decode(b[:len(b)/InstructionSize*InstructionSize])
		if err != nil {
			t.Fatalf("Decode of whole instructions: %v", err)
		}
		p, err := Compile(insns)
		if err != nil {
			return
		}
		if last := insns[len(insns)-1].Code; last != opRetK && last != opRetA {
			t.Fatalf("accepted a program not ending in a return")
		}
		d := Data{Nr: nr, Arch: unix.AUDIT_ARCH_X86_64, Args: [6]uint64{arg, ^arg}}
		p.Run(&d)
	})
}
