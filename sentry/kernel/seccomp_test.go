package kernel

import (
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/bpf"
)

// retProgram returns a filter that answers ret for syscall nr and allows
// the rest.
func retProgram(t *testing.T, nr uint32, ret uint32) bpf.Program {
	t.Helper()
	p, err := bpf.Compile([]unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0},
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: nr, Jt: 0, Jf: 1},
		{Code: unix.BPF_RET | unix.BPF_K, K: ret},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// chain builds a filter chain, oldest first.
func chain(progs ...bpf.Program) *seccompState {
	var f *seccompFilter
	for _, p := range progs {
		f = &seccompFilter{prog: p, prev: f}
	}
	return &seccompState{mode: SeccompModeFilter, filter: f}
}

func TestSeccompPrecedence(t *testing.T) {
	const nr = 39
	errno := func(e uint32) uint32 { return unix.SECCOMP_RET_ERRNO | e }
	cases := []struct {
		name string
		rets []uint32 // oldest first
		want uint32
	}{
		{"allow", []uint32{unix.SECCOMP_RET_ALLOW}, unix.SECCOMP_RET_ALLOW},
		{"newest data among equals", []uint32{errno(1), errno(2)}, errno(2)},
		{"errno beats log", []uint32{errno(1), unix.SECCOMP_RET_LOG}, errno(1)},
		{"trap beats errno", []uint32{errno(1), unix.SECCOMP_RET_TRAP | 5}, unix.SECCOMP_RET_TRAP | 5},
		{"kill thread beats trap", []uint32{unix.SECCOMP_RET_TRAP, unix.SECCOMP_RET_KILL_THREAD}, unix.SECCOMP_RET_KILL_THREAD},
		{"kill process beats all", []uint32{unix.SECCOMP_RET_KILL_THREAD, unix.SECCOMP_RET_KILL_PROCESS, errno(3)}, unix.SECCOMP_RET_KILL_PROCESS},
		{"errno beats user_notif and trace", []uint32{unix.SECCOMP_RET_TRACE, errno(4), unix.SECCOMP_RET_USER_NOTIF}, errno(4)},
		{"trace beats log", []uint32{unix.SECCOMP_RET_LOG, unix.SECCOMP_RET_TRACE | 9}, unix.SECCOMP_RET_TRACE | 9},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var progs []bpf.Program
			for _, r := range c.rets {
				progs = append(progs, retProgram(t, nr, r))
			}
			task := &Task{}
			var args arch.SyscallArguments
			got, _ := task.runSeccomp(chain(progs...), nr, &args)
			if got != c.want {
				t.Fatalf("got %#x, want %#x", got, c.want)
			}
			if got, _ := task.runSeccomp(chain(progs...), nr+1, &args); got != unix.SECCOMP_RET_ALLOW {
				t.Fatalf("other syscall: %#x", got)
			}
		})
	}
}

func TestSeccompAncestor(t *testing.T) {
	a := &seccompFilter{}
	b := &seccompFilter{prev: a}
	c := &seccompFilter{prev: b}
	other := &seccompFilter{prev: a}
	cases := []struct {
		name string
		f, c *seccompFilter
		want bool
	}{
		{"nil of nil", nil, nil, true},
		{"nil of any", nil, c, true},
		{"self", c, c, true},
		{"older", a, c, true},
		{"sibling", other, c, false},
		{"newer", c, a, false},
		{"something of nil", a, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.f.isAncestorOf(tc.c); got != tc.want {
				t.Fatalf("got %v", got)
			}
		})
	}
}

func TestSeccompSigsys(t *testing.T) {
	i := seccompSigsys(0x401000, 39, 0x42)
	le := binary.LittleEndian
	if i.Signo() != SIGSYS || i.Code() != sysSeccomp {
		t.Fatalf("signo %d code %d", i.Signo(), i.Code())
	}
	if e := int32(le.Uint32(i.Raw[4:])); e != 0x42 {
		t.Errorf("si_errno %#x", e)
	}
	if a := le.Uint64(i.Raw[16:]); a != 0x401000 {
		t.Errorf("si_call_addr %#x", a)
	}
	if n := int32(le.Uint32(i.Raw[24:])); n != 39 {
		t.Errorf("si_syscall %d", n)
	}
	if a := le.Uint32(i.Raw[28:]); a != unix.AUDIT_ARCH_X86_64 {
		t.Errorf("si_arch %#x", a)
	}
}

func TestSeccompCheckDoesNotAllocate(t *testing.T) {
	task := &Task{}
	s := chain(retProgram(t, 39, unix.SECCOMP_RET_ERRNO|1), retProgram(t, 40, unix.SECCOMP_RET_LOG))
	var args arch.SyscallArguments
	if n := testing.AllocsPerRun(100, func() { task.runSeccomp(s, 41, &args) }); n != 0 {
		t.Fatalf("runSeccomp allocates %v times", n)
	}
}
