package boot

import (
	"encoding/json"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/opencontainers/runtime-spec/specs-go"

	"github.com/moat-sandbox/moat/sentry/bpf"
)

func uintp(v uint) *uint { return &v }

func run(t *testing.T, f *SeccompFilter, nr uintptr, args ...uint64) uint32 {
	t.Helper()
	d := bpf.Data{Nr: int32(nr), Arch: unix.AUDIT_ARCH_X86_64}
	copy(d.Args[:], args)
	return f.Program.Run(&d)
}

const (
	allow = unix.SECCOMP_RET_ALLOW
	eperm = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
)

func TestCompileSeccompActions(t *testing.T) {
	s := &specs.LinuxSeccomp{
		DefaultAction: specs.ActErrno,
		Architectures: []specs.Arch{specs.ArchX86_64, specs.ArchX86, specs.ArchX32},
		Syscalls: []specs.LinuxSyscall{
			{Names: []string{"read", "write", "no_such_call", "_llseek"}, Action: specs.ActAllow},
			{Names: []string{"mkdir"}, Action: specs.ActErrno, ErrnoRet: uintp(uint(unix.EACCES))},
			{Names: []string{"getpid"}, Action: specs.ActTrap},
			{Names: []string{"getppid"}, Action: specs.ActKillProcess},
			{Names: []string{"gettid"}, Action: specs.ActKill},
			{Names: []string{"getuid"}, Action: specs.ActLog},
			{Names: []string{"getgid"}, Action: specs.ActTrace, ErrnoRet: uintp(3)},
			// Same as the default: dropped, but it still counts for
			// the ENOSYS stub.
			{Names: []string{"mknodat"}, Action: specs.ActErrno},
		},
	}
	f, err := CompileSeccomp(s)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(f.Skipped, ",") != "_llseek,no_such_call" {
		t.Errorf("Skipped = %v", f.Skipped)
	}
	cases := []struct {
		name string
		nr   uintptr
		want uint32
	}{
		{"read", unix.SYS_READ, allow},
		{"write", unix.SYS_WRITE, allow},
		{"mkdir", unix.SYS_MKDIR, unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)},
		{"getpid", unix.SYS_GETPID, unix.SECCOMP_RET_TRAP},
		{"getppid", unix.SYS_GETPPID, unix.SECCOMP_RET_KILL_PROCESS},
		{"gettid", unix.SYS_GETTID, unix.SECCOMP_RET_KILL_THREAD},
		{"getuid", unix.SYS_GETUID, unix.SECCOMP_RET_LOG},
		{"getgid", unix.SYS_GETGID, unix.SECCOMP_RET_TRACE | 3},
		{"unlisted", unix.SYS_OPEN, eperm},
		{"mknodat", unix.SYS_MKNODAT, eperm},
		{"above the profile", unix.SYS_MKNODAT + 1, unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
		{"x32 listed", x32SyscallBit | unix.SYS_READ, eperm},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := run(t, f, c.nr); got != c.want {
				t.Fatalf("nr %d: %#x, want %#x", c.nr, got, c.want)
			}
		})
	}
	t.Run("other arch", func(t *testing.T) {
		d := bpf.Data{Nr: unix.SYS_READ, Arch: unix.AUDIT_ARCH_I386}
		if got := f.Program.Run(&d); got != unix.SECCOMP_RET_KILL_THREAD {
			t.Fatalf("%#x", got)
		}
	})
}

func TestCompileSeccompAllowDefault(t *testing.T) {
	f, err := CompileSeccomp(&specs.LinuxSeccomp{
		DefaultAction: specs.ActAllow,
		Syscalls:      []specs.LinuxSyscall{{Names: []string{"mkdir", "mkdirat"}, Action: specs.ActErrno}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for nr, want := range map[uintptr]uint32{
		unix.SYS_MKDIR: eperm, unix.SYS_MKDIRAT: eperm, unix.SYS_READ: allow,
		// No ENOSYS stub when the default allows.
		1000: allow,
		// x32 without SCMP_ARCH_X32: bad architecture.
		x32SyscallBit: unix.SECCOMP_RET_KILL_THREAD,
	} {
		if got := run(t, f, nr); got != want {
			t.Errorf("nr %d: %#x, want %#x", nr, got, want)
		}
	}
}

func TestCompileSeccompArgs(t *testing.T) {
	const big = 0x1_0000_0005 // high half 1, low half 5
	rule := func(op specs.LinuxSeccompOperator, v, v2 uint64) *SeccompFilter {
		f, err := CompileSeccomp(&specs.LinuxSeccomp{
			DefaultAction: specs.ActAllow,
			Syscalls: []specs.LinuxSyscall{{Names: []string{"ioctl"}, Action: specs.ActErrno,
				Args: []specs.LinuxSeccompArg{{Index: 1, Op: op, Value: v, ValueTwo: v2}}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	cases := []struct {
		op      specs.LinuxSeccompOperator
		v, v2   uint64
		arg     uint64
		matches bool
	}{
		{specs.OpEqualTo, big, 0, big, true},
		{specs.OpEqualTo, big, 0, 5, false},
		{specs.OpEqualTo, big, 0, 1 << 32, false},
		{specs.OpNotEqual, big, 0, big, false},
		{specs.OpNotEqual, big, 0, 5, true},
		{specs.OpNotEqual, big, 0, big + 1<<32, true},
		{specs.OpGreaterThan, big, 0, big, false},
		{specs.OpGreaterThan, big, 0, big + 1, true},
		{specs.OpGreaterThan, big, 0, 0xffffffff, false},
		{specs.OpGreaterThan, big, 0, 2 << 32, true},
		{specs.OpGreaterEqual, big, 0, big, true},
		{specs.OpGreaterEqual, big, 0, big - 1, false},
		{specs.OpGreaterEqual, big, 0, 2<<32 | 0, true},
		{specs.OpLessThan, big, 0, big, false},
		{specs.OpLessThan, big, 0, big - 1, true},
		{specs.OpLessThan, big, 0, 0xffffffff, true},
		{specs.OpLessThan, big, 0, 2 << 32, false},
		{specs.OpLessEqual, big, 0, big, true},
		{specs.OpLessEqual, big, 0, big + 1, false},
		{specs.OpLessEqual, big, 0, 6, true},
		{specs.OpMaskedEqual, 0xff000000ff, 0x1200000034, 0xab1200cd0034, true},
		{specs.OpMaskedEqual, 0xff000000ff, 0x1200000034, 0xab1300cd0034, false},
		{specs.OpMaskedEqual, 0xff000000ff, 0x1200000034, 0xab1200cd0035, false},
	}
	for _, c := range cases {
		f := rule(c.op, c.v, c.v2)
		want := uint32(allow)
		if c.matches {
			want = eperm
		}
		if got := run(t, f, unix.SYS_IOCTL, 0, c.arg); got != want {
			t.Errorf("%s %#x (%#x) on %#x: %#x, want %#x", c.op, c.v, c.v2, c.arg, got, want)
		}
		// Other arguments and syscalls are not affected.
		if got := run(t, f, unix.SYS_READ, 0, c.arg); got != allow {
			t.Errorf("read: %#x", got)
		}
	}
}

func TestCompileSeccompRuleOrder(t *testing.T) {
	f, err := CompileSeccomp(&specs.LinuxSeccomp{
		DefaultAction: specs.ActErrno,
		Syscalls: []specs.LinuxSyscall{
			// Unconditional first in the spec, yet the conditional
			// rule is tried before it.
			{Names: []string{"personality"}, Action: specs.ActAllow},
			{Names: []string{"personality"}, Action: specs.ActErrno, ErrnoRet: uintp(22),
				Args: []specs.LinuxSeccompArg{{Index: 0, Op: specs.OpEqualTo, Value: 0xffffffff}}},
			// Index 0 twice: either condition allows (runc's split).
			{Names: []string{"socket"}, Action: specs.ActAllow, Args: []specs.LinuxSeccompArg{
				{Index: 0, Op: specs.OpEqualTo, Value: unix.AF_INET},
				{Index: 0, Op: specs.OpEqualTo, Value: unix.AF_UNIX},
			}},
			// Distinct indexes: both must hold.
			{Names: []string{"kill"}, Action: specs.ActAllow, Args: []specs.LinuxSeccompArg{
				{Index: 0, Op: specs.OpEqualTo, Value: 1},
				{Index: 1, Op: specs.OpEqualTo, Value: 9},
			}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		nr   uintptr
		args []uint64
		want uint32
	}{
		{"personality query", unix.SYS_PERSONALITY, []uint64{0xffffffff}, unix.SECCOMP_RET_ERRNO | 22},
		{"personality set", unix.SYS_PERSONALITY, []uint64{0}, allow},
		{"socket inet", unix.SYS_SOCKET, []uint64{unix.AF_INET}, allow},
		{"socket unix", unix.SYS_SOCKET, []uint64{unix.AF_UNIX}, allow},
		{"socket netlink", unix.SYS_SOCKET, []uint64{unix.AF_NETLINK}, eperm},
		{"kill both", unix.SYS_KILL, []uint64{1, 9}, allow},
		{"kill one", unix.SYS_KILL, []uint64{1, 15}, eperm},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := run(t, f, c.nr, c.args...); got != c.want {
				t.Fatalf("%#x, want %#x", got, c.want)
			}
		})
	}
}

// TestCompileSeccompWholeTable allows every syscall of the table but one
// and checks each number reaches its rule through the search.
func TestCompileSeccompWholeTable(t *testing.T) {
	var names []string
	for name, nr := range syscallNumbers() {
		if nr != unix.SYS_MKDIR {
			names = append(names, name)
		}
	}
	f, err := CompileSeccomp(&specs.LinuxSeccomp{
		DefaultAction: specs.ActErrno,
		Syscalls: []specs.LinuxSyscall{
			{Names: names, Action: specs.ActAllow},
			{Names: []string{"clone"}, Action: specs.ActAllow, Args: []specs.LinuxSeccompArg{
				{Index: 0, Op: specs.OpMaskedEqual, Value: unix.CLONE_NEWNS, ValueTwo: 0}}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d syscalls, %d instructions", len(names), f.Program.Len())
	for _, nr := range syscallNumbers() {
		want := uint32(allow)
		if nr == unix.SYS_MKDIR {
			want = eperm
		}
		if got := run(t, f, nr); got != want {
			t.Errorf("nr %d: %#x, want %#x", nr, got, want)
		}
	}
	// clone: the conditional rule is tried first and fails for
	// CLONE_NEWNS, then the unconditional allow applies.
	if got := run(t, f, unix.SYS_CLONE, unix.CLONE_NEWNS); got != allow {
		t.Errorf("clone: %#x", got)
	}
}

func TestCompileSeccompErrors(t *testing.T) {
	cases := []struct {
		name string
		s    specs.LinuxSeccomp
		want string
	}{
		{"notify default", specs.LinuxSeccomp{DefaultAction: specs.ActNotify}, "not supported"},
		{"listener", specs.LinuxSeccomp{DefaultAction: specs.ActAllow, ListenerPath: "/x"}, "listenerPath"},
		{"unknown action", specs.LinuxSeccomp{DefaultAction: "SCMP_ACT_FOO"}, "unknown seccomp action"},
		{"errnoRet on allow", specs.LinuxSeccomp{DefaultAction: specs.ActAllow, DefaultErrnoRet: uintp(1)}, "errnoRet"},
		{"errnoRet too big", specs.LinuxSeccomp{DefaultAction: specs.ActErrno, DefaultErrnoRet: uintp(70000)}, "out of range"},
		{"bad flag", specs.LinuxSeccomp{DefaultAction: specs.ActAllow, Flags: []specs.LinuxSeccompFlag{"SECCOMP_FILTER_FLAG_NEW_LISTENER"}}, "flag"},
		{"bad arch", specs.LinuxSeccomp{DefaultAction: specs.ActAllow, Architectures: []specs.Arch{"mips"}}, "architecture"},
		{"bad index", specs.LinuxSeccomp{DefaultAction: specs.ActAllow, Syscalls: []specs.LinuxSyscall{{Names: []string{"read"}, Action: specs.ActErrno,
			Args: []specs.LinuxSeccompArg{{Index: 6, Op: specs.OpEqualTo}}}}}, "index"},
		{"bad op", specs.LinuxSeccomp{DefaultAction: specs.ActAllow, Syscalls: []specs.LinuxSyscall{{Names: []string{"read"}, Action: specs.ActErrno,
			Args: []specs.LinuxSeccompArg{{Index: 0, Op: "SCMP_CMP_FOO"}}}}}, "operator"},
		{"notify rule", specs.LinuxSeccomp{DefaultAction: specs.ActAllow, Syscalls: []specs.LinuxSyscall{{Names: []string{"read"}, Action: specs.ActNotify}}}, "not supported"},
		{"no names", specs.LinuxSeccomp{DefaultAction: specs.ActAllow, Syscalls: []specs.LinuxSyscall{{Action: specs.ActErrno}}}, "no names"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := CompileSeccomp(&c.s)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one containing %q", err, c.want)
			}
		})
	}
}

// FuzzCompileSeccomp feeds arbitrary seccomp sections (a bundle's
// config.json is untrusted) to CompileSeccomp: it must never panic, and
// what it accepts must run on any syscall.
func FuzzCompileSeccomp(f *testing.F) {
	f.Add([]byte(`{"defaultAction":"SCMP_ACT_ERRNO","syscalls":[{"names":["read","write"],"action":"SCMP_ACT_ALLOW"}]}`), uint16(0), uint64(0))
	f.Add([]byte(`{"defaultAction":"SCMP_ACT_ALLOW","architectures":["SCMP_ARCH_X32"],"syscalls":[{"names":["ioctl"],"action":"SCMP_ACT_ERRNO","errnoRet":1,"args":[{"index":1,"value":21505,"op":"SCMP_CMP_NE"},{"index":1,"value":7,"valueTwo":3,"op":"SCMP_CMP_MASKED_EQ"}]}]}`), uint16(16), uint64(21505))
	f.Add([]byte(`{"defaultAction":"SCMP_ACT_KILL","syscalls":[{"names":["clone"],"action":"SCMP_ACT_TRAP","args":[{"index":0,"value":5,"op":"SCMP_CMP_LE"},{"index":2,"value":9,"op":"SCMP_CMP_GT"}]}]}`), uint16(56), uint64(4))
	f.Fuzz(func(t *testing.T, js []byte, nr uint16, arg uint64) {
		var s specs.LinuxSeccomp
		if json.Unmarshal(js, &s) != nil {
			return
		}
		sf, err := CompileSeccomp(&s)
		if err != nil {
			return
		}
		d := bpf.Data{Nr: int32(nr), Arch: unix.AUDIT_ARCH_X86_64, Args: [6]uint64{arg, arg, arg, arg, arg, arg}}
		sf.Program.Run(&d)
	})
}
