package isolate

import (
	"math/rand"
	"testing"

	"golang.org/x/sys/unix"
)

type call struct {
	name string
	nr   uint32
	arch uint32
	args [6]uint64
	want Action
}

func checkCalls(t *testing.T, f *Filter, calls []call) {
	t.Helper()
	prog, err := f.Build()
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			arch := c.arch
			if arch == 0 {
				arch = auditArch
			}
			got, err := runBPF(prog, seccompData(c.nr, arch, c.args))
			if err != nil {
				t.Fatalf("running program: %v", err)
			}
			if Action(got) != c.want {
				t.Errorf("got %v, want %v", Action(got), c.want)
			}
			if ref := reference(f, c.nr, arch, c.args); ref != c.want {
				t.Errorf("reference evaluator says %v, test wants %v", ref, c.want)
			}
		})
	}
}

func TestBuildDecisions(t *testing.T) {
	f := &Filter{
		Default: ActionKillProcess,
		Rules: Rules{
			unix.SYS_READ:   Allow,
			unix.SYS_OPEN:   Deny,
			unix.SYS_CLONE3: Fail(unix.ENOSYS),
			// Full 64-bit equality.
			unix.SYS_LSEEK: AllowIf(Match{Eq(2, 0x1_0000_0002)}),
			// Low half only.
			unix.SYS_IOCTL: AllowIf(OneOf32(1, unix.TCGETS, unix.TIOCGWINSZ)...),
			// Masks: a bit required, bits forbidden, both (AND).
			unix.SYS_NEWFSTATAT: AllowIf(Match{HasBits(3, unix.AT_EMPTY_PATH)}),
			unix.SYS_CLONE:      AllowIf(Match{NoBits(0, unix.CLONE_NEWUSER|unix.CLONE_NEWNS)}),
			unix.SYS_MMAP:       AllowIf(Match{NoBits(2, unix.PROT_EXEC), Eq32(3, unix.MAP_SHARED)}, Match{Eq(4, 7)}),
			// A mask spanning both halves.
			unix.SYS_PREAD64: AllowIf(Match{MaskedEq(3, 0xff0000_0000ff, 0x120000_000034)}),
		},
	}
	var none [6]uint64
	calls := []call{
		{"read allowed", unix.SYS_READ, 0, none, ActionAllow},
		{"open denied", unix.SYS_OPEN, 0, none, ActionKillProcess},
		{"unlisted gets default", unix.SYS_GETPPID, 0, none, ActionKillProcess},
		{"number above all rules", 460, 0, none, ActionKillProcess},
		{"number zero listed", 0, 0, none, ActionAllow},
		{"clone3 errno", unix.SYS_CLONE3, 0, none, ActionErrno(unix.ENOSYS)},
		{"foreign arch killed", unix.SYS_READ, unix.AUDIT_ARCH_I386, none, ActionKillProcess},
		{"x32 read killed", x32SyscallBit | unix.SYS_READ, 0, none, ActionKillProcess},
		{"huge number killed", 0xffffffff, 0, none, ActionKillProcess},
		{"lseek 64-bit match", unix.SYS_LSEEK, 0, [6]uint64{2: 0x1_0000_0002}, ActionAllow},
		{"lseek low half only", unix.SYS_LSEEK, 0, [6]uint64{2: 2}, ActionKillProcess},
		{"lseek high half only", unix.SYS_LSEEK, 0, [6]uint64{2: 0x1_0000_0000}, ActionKillProcess},
		{"ioctl TCGETS", unix.SYS_IOCTL, 0, [6]uint64{1: unix.TCGETS}, ActionAllow},
		{"ioctl TIOCGWINSZ high garbage", unix.SYS_IOCTL, 0, [6]uint64{1: 0xdead_0000_0000 | unix.TIOCGWINSZ}, ActionAllow},
		{"ioctl TIOCSTI", unix.SYS_IOCTL, 0, [6]uint64{1: unix.TIOCSTI}, ActionKillProcess},
		{"newfstatat empty path", unix.SYS_NEWFSTATAT, 0, [6]uint64{3: unix.AT_EMPTY_PATH | unix.AT_SYMLINK_NOFOLLOW}, ActionAllow},
		{"newfstatat path", unix.SYS_NEWFSTATAT, 0, [6]uint64{3: unix.AT_SYMLINK_NOFOLLOW}, ActionKillProcess},
		{"clone thread", unix.SYS_CLONE, 0, [6]uint64{0: unix.CLONE_VM | unix.CLONE_THREAD | unix.CLONE_SIGHAND}, ActionAllow},
		{"clone newuser", unix.SYS_CLONE, 0, [6]uint64{0: unix.CLONE_VM | unix.CLONE_NEWUSER}, ActionKillProcess},
		{"clone newns", unix.SYS_CLONE, 0, [6]uint64{0: unix.CLONE_NEWNS}, ActionKillProcess},
		{"mmap first match", unix.SYS_MMAP, 0, [6]uint64{2: unix.PROT_READ, 3: unix.MAP_SHARED}, ActionAllow},
		{"mmap first match half", unix.SYS_MMAP, 0, [6]uint64{2: unix.PROT_EXEC, 3: unix.MAP_SHARED}, ActionKillProcess},
		{"mmap second match", unix.SYS_MMAP, 0, [6]uint64{2: unix.PROT_EXEC, 4: 7}, ActionAllow},
		{"pread64 mask both halves", unix.SYS_PREAD64, 0, [6]uint64{3: 0xab12cd00_ef0034}, ActionAllow},
		{"pread64 mask high wrong", unix.SYS_PREAD64, 0, [6]uint64{3: 0xab13cd00_ef0034}, ActionKillProcess},
		{"pread64 mask low wrong", unix.SYS_PREAD64, 0, [6]uint64{3: 0xab12cd00_ef0035}, ActionKillProcess},
	}
	checkCalls(t, f, calls)

	// The same table with a logging default: denials still kill.
	f.Default = ActionLog
	checkCalls(t, f, []call{
		{"log: unlisted logged", unix.SYS_GETPPID, 0, none, ActionLog},
		{"log: failed match logged", unix.SYS_IOCTL, 0, [6]uint64{1: unix.TIOCSTI}, ActionLog},
		{"log: open still killed", unix.SYS_OPEN, 0, none, ActionKillProcess},
		{"log: foreign arch still killed", unix.SYS_READ, unix.AUDIT_ARCH_I386, none, ActionKillProcess},
		{"log: x32 still killed", x32SyscallBit, 0, none, ActionKillProcess},
	})
}

func TestSentryFilterDecisions(t *testing.T) {
	for _, m := range []Mode{ModeKill, ModeTrap, ModeLog} {
		t.Run(m.String(), func(t *testing.T) {
			def := m.DefaultAction()
			var none [6]uint64
			threadFlags := uint64(unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND | unix.CLONE_SYSVSEM | unix.CLONE_THREAD)
			checkCalls(t, SentryFilter(m), []call{
				{"open", unix.SYS_OPEN, 0, none, ActionKillProcess},
				{"openat", unix.SYS_OPENAT, 0, none, ActionKillProcess},
				{"openat2", unix.SYS_OPENAT2, 0, none, ActionKillProcess},
				{"creat", unix.SYS_CREAT, 0, none, ActionKillProcess},
				{"execve", unix.SYS_EXECVE, 0, none, ActionKillProcess},
				{"execveat", unix.SYS_EXECVEAT, 0, none, ActionKillProcess},
				{"mount", unix.SYS_MOUNT, 0, none, ActionKillProcess},
				{"socket", unix.SYS_SOCKET, 0, none, ActionKillProcess},
				{"read", unix.SYS_READ, 0, none, ActionAllow},
				{"futex", unix.SYS_FUTEX, 0, none, ActionAllow},
				{"ptrace", unix.SYS_PTRACE, 0, none, ActionAllow},
				{"wait4", unix.SYS_WAIT4, 0, none, ActionAllow},
				{"clone thread", unix.SYS_CLONE, 0, [6]uint64{0: threadFlags}, ActionAllow},
				{"clone fork", unix.SYS_CLONE, 0, [6]uint64{0: uint64(unix.SIGCHLD)}, ActionAllow},
				{"clone newpid", unix.SYS_CLONE, 0, [6]uint64{0: unix.CLONE_NEWPID | uint64(unix.SIGCHLD)}, def},
				{"clone3", unix.SYS_CLONE3, 0, none, ActionErrno(unix.ENOSYS)},
				{"newfstatat fd", unix.SYS_NEWFSTATAT, 0, [6]uint64{3: unix.AT_EMPTY_PATH}, ActionAllow},
				{"newfstatat path", unix.SYS_NEWFSTATAT, 0, [6]uint64{3: 0}, def},
				{"ioctl TCSETSW", unix.SYS_IOCTL, 0, [6]uint64{1: unix.TCSETSW}, ActionAllow},
				{"ioctl FIONBIO", unix.SYS_IOCTL, 0, [6]uint64{1: fionbio}, ActionAllow},
				{"ioctl TIOCSTI", unix.SYS_IOCTL, 0, [6]uint64{1: unix.TIOCSTI}, def},
				{"prctl PR_SET_VMA", unix.SYS_PRCTL, 0, [6]uint64{0: unix.PR_SET_VMA}, ActionAllow},
				{"prctl PR_SET_PDEATHSIG", unix.SYS_PRCTL, 0, [6]uint64{0: unix.PR_SET_PDEATHSIG}, ActionAllow},
				{"prctl PR_SET_SECCOMP", unix.SYS_PRCTL, 0, [6]uint64{0: unix.PR_SET_SECCOMP}, def},
				{"getpgid unlisted", unix.SYS_GETPGID, 0, none, def},
			})
		})
	}
}

func TestGoferFilterDecisions(t *testing.T) {
	var none [6]uint64
	checkCalls(t, GoferFilter(ModeKill, 1234), []call{
		{"openat O_PATH", unix.SYS_OPENAT, 0, [6]uint64{2: unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC}, ActionAllow},
		{"openat O_RDONLY", unix.SYS_OPENAT, 0, [6]uint64{2: unix.O_RDONLY | unix.O_DIRECTORY}, ActionAllow},
		{"openat O_WRONLY", unix.SYS_OPENAT, 0, [6]uint64{2: unix.O_WRONLY}, ActionKillProcess},
		{"openat O_RDWR", unix.SYS_OPENAT, 0, [6]uint64{2: unix.O_RDWR}, ActionKillProcess},
		{"openat O_CREAT", unix.SYS_OPENAT, 0, [6]uint64{2: unix.O_CREAT}, ActionKillProcess},
		{"open", unix.SYS_OPEN, 0, none, ActionKillProcess},
		{"ptrace", unix.SYS_PTRACE, 0, none, ActionKillProcess},
		{"execve", unix.SYS_EXECVE, 0, none, ActionKillProcess},
		{"socketpair seqpacket", unix.SYS_SOCKETPAIR, 0, [6]uint64{0: unix.AF_UNIX, 1: unix.SOCK_SEQPACKET | unix.SOCK_CLOEXEC}, ActionAllow},
		{"socketpair stream", unix.SYS_SOCKETPAIR, 0, [6]uint64{0: unix.AF_UNIX, 1: unix.SOCK_STREAM}, ActionKillProcess},
		{"socketpair inet", unix.SYS_SOCKETPAIR, 0, [6]uint64{0: unix.AF_INET, 1: unix.SOCK_SEQPACKET}, ActionKillProcess},
		{"getsockopt SO_TYPE", unix.SYS_GETSOCKOPT, 0, [6]uint64{1: unix.SOL_SOCKET, 2: unix.SO_TYPE}, ActionAllow},
		{"getsockopt SO_PEERCRED", unix.SYS_GETSOCKOPT, 0, [6]uint64{1: unix.SOL_SOCKET, 2: unix.SO_PEERCRED}, ActionKillProcess},
		{"fcntl F_SETFL", unix.SYS_FCNTL, 0, [6]uint64{1: unix.F_SETFL}, ActionAllow},
		{"fcntl F_DUPFD", unix.SYS_FCNTL, 0, [6]uint64{1: unix.F_DUPFD}, ActionKillProcess},
		{"newfstatat nofollow", unix.SYS_NEWFSTATAT, 0, [6]uint64{3: unix.AT_SYMLINK_NOFOLLOW}, ActionAllow},
		{"newfstatat follow", unix.SYS_NEWFSTATAT, 0, [6]uint64{3: 0}, ActionKillProcess},
		{"getdents64", unix.SYS_GETDENTS64, 0, none, ActionAllow},
		{"pread64 (Go runtime cgroup limit)", unix.SYS_PREAD64, 0, none, ActionAllow},
		{"tgkill own", unix.SYS_TGKILL, 0, [6]uint64{0: 1234, 1: 1240, 2: uint64(unix.SIGURG)}, ActionAllow},
		{"tgkill other", unix.SYS_TGKILL, 0, [6]uint64{0: 1, 1: 1, 2: uint64(unix.SIGKILL)}, ActionKillProcess},
		{"kill", unix.SYS_KILL, 0, [6]uint64{0: 1, 1: uint64(unix.SIGKILL)}, ActionKillProcess},
	})
}

func TestBuildErrors(t *testing.T) {
	tests := []struct {
		name string
		f    Filter
	}{
		{"zero default", Filter{Rules: Rules{0: Allow}}},
		{"arg index", Filter{Default: ActionKillProcess, Rules: Rules{0: AllowIf(Match{Eq(6, 1)})}}},
		{"negative arg index", Filter{Default: ActionKillProcess, Rules: Rules{0: AllowIf(Match{Eq(-1, 1)})}}},
		{"impossible value", Filter{Default: ActionKillProcess, Rules: Rules{0: AllowIf(Match{MaskedEq(0, 0xf0, 0x0f)})}}},
		{"number out of range", Filter{Default: ActionKillProcess, Rules: Rules{x32SyscallBit: Allow}}},
		{"rule without action", Filter{Default: ActionKillProcess, Rules: Rules{0: {}}}},
		{"too long", Filter{Default: ActionKillProcess, Rules: Rules{unix.SYS_IOCTL: AllowIf(manyMatches(3000)...)}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.f.Build(); err == nil {
				t.Errorf("Build succeeded, want an error")
			}
		})
	}
}

func manyMatches(n int) []Match {
	ms := make([]Match, n)
	for i := range ms {
		ms[i] = Match{Eq(1, uint64(i)*0x1_0000_0001)}
	}
	return ms
}

func TestMerge(t *testing.T) {
	a := Rules{1: AllowIf(Match{Eq32(0, 1)}), 2: Allow, 3: AllowIf(Match{Eq32(0, 3)})}
	b := Rules{1: AllowIf(Match{Eq32(0, 2)}), 2: AllowIf(Match{Eq32(0, 9)}), 4: Deny}
	m, err := Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(m[1].Matches); got != 2 {
		t.Errorf("syscall 1 has %d matches, want 2 (OR of both)", got)
	}
	if got := len(m[2].Matches); got != 0 {
		t.Errorf("syscall 2 has %d matches, want 0 (unconditional wins)", got)
	}
	if len(m) != 4 {
		t.Errorf("merged %d syscalls, want 4", len(m))
	}
	if _, err := Merge(Rules{5: Allow}, Rules{5: Deny}); err == nil {
		t.Errorf("merging allow and deny of one syscall succeeded")
	}
}

// randomFilter makes a filter with n syscalls, some with many matches so
// that jumps exceed 255 instructions and need trampolines.
func randomFilter(rng *rand.Rand, n int) *Filter {
	actions := []Action{ActionAllow, ActionKillProcess, ActionErrno(unix.EPERM), ActionLog, ActionTrap}
	f := &Filter{Rules: make(Rules), Default: actions[rng.Intn(len(actions))]}
	for len(f.Rules) < n {
		nr := uintptr(rng.Intn(500))
		r := Rule{Action: actions[rng.Intn(len(actions))]}
		nm := rng.Intn(4)
		if rng.Intn(10) == 0 {
			nm = 30 + rng.Intn(40)
		}
		for i := 0; i < nm; i++ {
			var m Match
			for j := rng.Intn(3); j >= 0; j-- {
				m = append(m, randomCond(rng))
			}
			r.Matches = append(r.Matches, m)
		}
		f.Rules[nr] = r
	}
	return f
}

func randomCond(rng *rand.Rand) Cond {
	arg := rng.Intn(6)
	v := uint64(rng.Intn(4))
	if rng.Intn(2) == 0 {
		v |= uint64(rng.Intn(3)) << 32
	}
	switch rng.Intn(4) {
	case 0:
		return Eq(arg, v)
	case 1:
		return Eq32(arg, uint32(v))
	case 2:
		return HasBits(arg, v)
	default:
		return NoBits(arg, v|1)
	}
}

func TestBuildMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	trampolines := 0
	for i := 0; i < 60; i++ {
		f := randomFilter(rng, 1+rng.Intn(40))
		prog, err := f.Build()
		if err != nil {
			t.Fatalf("filter %d: Build: %v", i, err)
		}
		for _, ins := range prog {
			if ins.Code == unix.BPF_JMP|unix.BPF_JA {
				trampolines++
			}
		}
		for j := 0; j < 2000; j++ {
			nr := uint32(rng.Intn(520))
			if rng.Intn(50) == 0 {
				nr |= x32SyscallBit
			}
			arch := uint32(auditArch)
			if rng.Intn(50) == 0 {
				arch = unix.AUDIT_ARCH_I386
			}
			var args [6]uint64
			for k := range args {
				args[k] = uint64(rng.Intn(4)) | uint64(rng.Intn(3))<<32
			}
			got, err := runBPF(prog, seccompData(nr, arch, args))
			if err != nil {
				t.Fatalf("filter %d: %v", i, err)
			}
			if want := reference(f, nr, arch, args); Action(got) != want {
				t.Fatalf("filter %d, nr %d args %x: program says %v, reference %v", i, nr, args, Action(got), want)
			}
		}
	}
	if trampolines == 0 {
		t.Errorf("no filter needed a long jump: the trampoline path went untested")
	}
}

// FuzzBuild checks that whatever rules the input describes, the compiled
// program decides like the reference evaluator.
func FuzzBuild(f *testing.F) {
	f.Add(int64(1), uint16(10), uint32(1), uint64(0))
	f.Add(int64(7), uint16(300), uint32(16), uint64(1<<32|3))
	f.Fuzz(func(t *testing.T, seed int64, n uint16, nr uint32, arg uint64) {
		rng := rand.New(rand.NewSource(seed))
		flt := randomFilter(rng, 1+int(n%60))
		prog, err := flt.Build()
		if err != nil {
			if len(prog) == 0 {
				return // too large for the kernel: a refusal is fine
			}
			t.Fatal(err)
		}
		args := [6]uint64{arg, arg >> 1, arg & 3, arg >> 32, 1, 0}
		got, err := runBPF(prog, seccompData(nr, auditArch, args))
		if err != nil {
			t.Fatal(err)
		}
		if want := reference(flt, nr, auditArch, args); Action(got) != want {
			t.Fatalf("nr %d: program says %v, reference %v", nr, Action(got), want)
		}
	})
}

func TestRuleTablesKnownNames(t *testing.T) {
	for name, r := range map[string]Rules{"sentry": SentryRules(), "gofer": GoferRules()} {
		for nr := range r {
			if _, ok := syscallNames[nr]; !ok {
				t.Errorf("%s table: syscall %d has no name", name, nr)
			}
		}
	}
	if n, ok := SyscallNumber("openat"); !ok || n != unix.SYS_OPENAT {
		t.Errorf("SyscallNumber(openat) = %d, %v", n, ok)
	}
	if SyscallName(unix.SYS_PTRACE) != "ptrace" {
		t.Errorf("SyscallName(ptrace) = %q", SyscallName(unix.SYS_PTRACE))
	}
}
