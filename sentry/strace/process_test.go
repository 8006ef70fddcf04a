package strace

import (
	"testing"

	"golang.org/x/sys/unix"
)

func TestProcess(t *testing.T) {
	runCases(t, []lineCase{
		{
			name: "execve", sysno: unix.SYS_EXECVE,
			setup: func(m *fakeMem) [6]uintptr {
				return a(m.cstr("/bin/true"), m.strs("/bin/true", "-x", "a b"), m.strs("A=1", "B=2"))
			},
			ret:  neg(unix.ENOENT),
			exit: `execve("/bin/true", ["/bin/true", "-x", "a b"], 0x1e000 /* 2 vars */) = -1 ENOENT (No such file or directory)`,
		},
		{
			name: "execve one var", sysno: unix.SYS_EXECVE,
			setup: func(m *fakeMem) [6]uintptr {
				return a(m.cstr("./a"), m.strs("./a"), m.strs("A=1"))
			},
			entry: `execve("./a", ["./a"], 0x18000 /* 1 var */)`,
		},
		{
			name: "execve bad pointers", sysno: unix.SYS_EXECVE,
			setup: func(m *fakeMem) [6]uintptr { return a(m.cstr("/x"), 0x10, 0x10) },
			ret:   neg(unix.ENOENT),
			exit:  `execve("/x", 0x10, 0x10) = -1 ENOENT (No such file or directory)`,
		},
		{
			name: "execve bad element", sysno: unix.SYS_EXECVE,
			setup: func(m *fakeMem) [6]uintptr { return a(m.cstr("/x"), m.u64s(m.cstr("a"), 0x10, 0), 0) },
			ret:   neg(unix.ENOENT),
			exit:  `execve("/x", ["a", 0x10], NULL) = -1 ENOENT (No such file or directory)`,
		},
		{
			name: "execve many args", sysno: unix.SYS_EXECVE,
			setup: func(m *fakeMem) [6]uintptr {
				args := make([]string, 39)
				for i := range args {
					args[i] = "z"
				}
				return a(m.cstr("/x"), m.strs(args...), 0)
			},
			ret:  neg(unix.ENOENT),
			exit: `execve("/x", ["z", "z", "z", "z", "z", "z", "z", "z", "z", "z", "z", "z", "z", "z", "z", "z", "z", "z", "z", "z", "z", "z", "z", "z", "z", "z", "z", "z", "z", "z", "z", "z", ...], NULL) = -1 ENOENT (No such file or directory)`,
		},
		{
			name: "exit_group", sysno: unix.SYS_EXIT_GROUP,
			setup: fixed(a(263)),
			ret:   0,
			entry: `exit_group(263)`,
			exit:  `exit_group(263) = ?`,
		},
		{
			name: "getpid", sysno: unix.SYS_GETPID,
			setup: fixed(a(1, 2, 3)),
			ret:   5571,
			exit:  `getpid() = 5571`,
		},
		{
			name: "set_tid_address", sysno: unix.SYS_SET_TID_ADDRESS,
			setup: fixed(a(0x7fbc081b7a10)),
			ret:   5571,
			exit:  `set_tid_address(0x7fbc081b7a10) = 5571`,
		},
		{
			name: "clone fork", sysno: unix.SYS_CLONE,
			setup: fixed(a(unix.CLONE_CHILD_CLEARTID|unix.CLONE_CHILD_SETTID|uint64(unix.SIGCHLD), 0, 0, 0x7fbc081b7a10, 0)),
			ret:   5572,
			exit:  `clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7fbc081b7a10) = 5572`,
		},
		{
			name: "clone every flag", sysno: unix.SYS_CLONE,
			setup: fixed(a(0xfffffffffffffe00|uint64(unix.SIGUSR1), 0x1234, 0x5678, 0x9abc, 0xdef0)),
			ret:   neg(unix.EINVAL),
			exit:  `clone(child_stack=0x1234, flags=CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_PIDFD|CLONE_PTRACE|CLONE_VFORK|CLONE_PARENT|CLONE_THREAD|CLONE_NEWNS|CLONE_SYSVSEM|CLONE_SETTLS|CLONE_PARENT_SETTID|CLONE_CHILD_CLEARTID|CLONE_UNTRACED|CLONE_CHILD_SETTID|CLONE_NEWCGROUP|CLONE_NEWUTS|CLONE_NEWIPC|CLONE_NEWUSER|CLONE_NEWPID|CLONE_NEWNET|CLONE_IO|0xffffffff00400000|SIGUSR1, parent_tid=0x5678, tls=0xdef0, child_tidptr=0x9abc) = -1 EINVAL (Invalid argument)`,
		},
		{
			name: "clone zero", sysno: unix.SYS_CLONE,
			setup: fixed(a(0)),
			ret:   6471,
			exit:  `clone(child_stack=NULL, flags=0) = 6471`,
		},
		{
			name: "clone bad signal", sysno: unix.SYS_CLONE,
			setup: fixed(a(0x7f)),
			ret:   6477,
			exit:  `clone(child_stack=NULL, flags=127) = 6477`,
		},
		{
			name: "clone thread", sysno: unix.SYS_CLONE,
			setup: func(m *fakeMem) [6]uintptr {
				flags := uint64(unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND | unix.CLONE_THREAD | unix.CLONE_SYSVSEM | unix.CLONE_SETTLS | unix.CLONE_PARENT_SETTID | unix.CLONE_CHILD_CLEARTID)
				return a(flags, 0x7f0000001000, m.u32s(5608), 0x7f0000002000, 0x7f0000003000)
			},
			ret:   5608,
			entry: `clone(child_stack=0x7f0000001000, flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM|CLONE_SETTLS|CLONE_PARENT_SETTID|CLONE_CHILD_CLEARTID, parent_tid=0x10000, tls=0x7f0000003000, child_tidptr=0x7f0000002000)`,
			exit:  `clone(child_stack=0x7f0000001000, flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM|CLONE_SETTLS|CLONE_PARENT_SETTID|CLONE_CHILD_CLEARTID, parent_tid=[5608], tls=0x7f0000003000, child_tidptr=0x7f0000002000) = 5608`,
		},
		{
			name: "clone3", sysno: unix.SYS_CLONE3,
			setup: func(m *fakeMem) [6]uintptr {
				b := (&builder{}).u64(unix.CLONE_VM | unix.CLONE_VFORK | 0x100000000).u64(0x3000).u64(0x4000).u64(0x5000).
					u64(uint64(unix.SIGCHLD)).u64(0x1000).u64(0x2000).u64(0x6000).u64(0).u64(0).u64(0)
				return a(m.put(b.b), 88)
			},
			ret:  6481,
			exit: `clone3({flags=CLONE_VM|CLONE_VFORK|CLONE_CLEAR_SIGHAND, exit_signal=SIGCHLD, stack=0x1000, stack_size=0x2000}, 88) = 6481`,
		},
		{
			name: "clone3 tids", sysno: unix.SYS_CLONE3,
			setup: func(m *fakeMem) [6]uintptr {
				b := (&builder{}).u64(unix.CLONE_PIDFD | unix.CLONE_PARENT_SETTID | unix.CLONE_CHILD_CLEARTID | unix.CLONE_SETTLS).
					u64(0x3000).u64(0x4000).u64(0x5000).u64(0).u64(0).u64(0).u64(0x6000).u64(0).u64(0).u64(0)
				return a(m.put(b.b), 88)
			},
			ret:  1,
			exit: `clone3({flags=CLONE_PIDFD|CLONE_SETTLS|CLONE_PARENT_SETTID|CLONE_CHILD_CLEARTID, pidfd=0x3000, child_tid=0x4000, parent_tid=0x5000, exit_signal=0, stack=NULL, stack_size=0, tls=0x6000}, 88) = 1`,
		},
		{
			name: "clone3 fault", sysno: unix.SYS_CLONE3,
			setup: fixed(a(0x10, 88)),
			ret:   neg(unix.EFAULT),
			exit:  `clone3(0x10, 88) = -1 EFAULT (Bad address)`,
		},
		{
			name: "wait4 exited", sysno: unix.SYS_WAIT4,
			setup: func(m *fakeMem) [6]uintptr { return a(5572, m.u32s(3<<8), 0, 0) },
			ret:   5572,
			entry: `wait4(5572, 0x10000, 0, NULL)`,
			exit:  `wait4(5572, [{WIFEXITED(s) && WEXITSTATUS(s) == 3}], 0, NULL) = 5572`,
		},
		{
			name: "wait4 killed", sysno: unix.SYS_WAIT4,
			setup: func(m *fakeMem) [6]uintptr { return a(5573, m.u32s(9), 0, 0) },
			ret:   5573,
			exit:  `wait4(5573, [{WIFSIGNALED(s) && WTERMSIG(s) == SIGKILL}], 0, NULL) = 5573`,
		},
		{
			name: "wait4 core dumped", sysno: unix.SYS_WAIT4,
			setup: func(m *fakeMem) [6]uintptr { return a(5573, m.u32s(11|0x80), 0, 0) },
			ret:   5573,
			exit:  `wait4(5573, [{WIFSIGNALED(s) && WTERMSIG(s) == SIGSEGV && WCOREDUMP(s)}], 0, NULL) = 5573`,
		},
		{
			name: "wait4 stopped", sysno: unix.SYS_WAIT4,
			setup: func(m *fakeMem) [6]uintptr { return a(8746, m.u32s(19<<8|0x7f), unix.WUNTRACED, 0) },
			ret:   8746,
			exit:  `wait4(8746, [{WIFSTOPPED(s) && WSTOPSIG(s) == SIGSTOP}], WSTOPPED, NULL) = 8746`,
		},
		{
			name: "wait4 continued", sysno: unix.SYS_WAIT4,
			setup: func(m *fakeMem) [6]uintptr { return a(8746, m.u32s(0xffff), unix.WCONTINUED, 0) },
			ret:   8746,
			exit:  `wait4(8746, [{WIFCONTINUED(s)}], WCONTINUED, NULL) = 8746`,
		},
		{
			name: "wait4 nohang nothing", sysno: unix.SYS_WAIT4,
			setup: fixed(a(0xffffffffffffffff, 0x7ffdfdd4defc, unix.WNOHANG|unix.WALL, 0)),
			ret:   0,
			exit:  `wait4(-1, 0x7ffdfdd4defc, WNOHANG|__WALL, NULL) = 0`,
		},
		{
			name: "wait4 every option", sysno: unix.SYS_WAIT4,
			setup: fixed(a(0xffffffffffffffff, 0, 0xffffffff, 0)),
			ret:   neg(unix.EINVAL),
			exit:  `wait4(-1, NULL, WNOHANG|WEXITED|WSTOPPED|WCONTINUED|WNOWAIT|__WCLONE|__WALL|__WNOTHREAD|0x1efffff0, NULL) = -1 EINVAL (Invalid argument)`,
		},
		{
			name: "wait4 rusage error", sysno: unix.SYS_WAIT4,
			setup: fixed(a(8746, 0x7ffdee6316fc, 0, 0x7ffdee631800)),
			ret:   neg(unix.ECHILD),
			exit:  `wait4(8746, 0x7ffdee6316fc, 0, 0x7ffdee631800) = -1 ECHILD (No child processes)`,
		},
		{
			name: "waitid", sysno: unix.SYS_WAITID,
			setup: fixed(a(unix.P_ALL, 0, 0, unix.WEXITED, 0)),
			ret:   0,
			exit:  `waitid(P_ALL, 0, NULL, WEXITED, NULL) = 0`,
		},
		{
			name: "kill", sysno: unix.SYS_KILL,
			setup: fixed(a(5571, uint64(unix.SIGUSR1))),
			ret:   0,
			exit:  `kill(5571, SIGUSR1) = 0`,
		},
		{
			name: "kill zero", sysno: unix.SYS_KILL,
			setup: fixed(a(0, 0)),
			ret:   0,
			exit:  `kill(0, 0) = 0`,
		},
		{
			name: "kill bad signal", sysno: unix.SYS_KILL,
			setup: fixed(a(1, 99)),
			ret:   neg(unix.EINVAL),
			exit:  `kill(1, 99) = -1 EINVAL (Invalid argument)`,
		},
		{
			name: "kill realtime", sysno: unix.SYS_KILL,
			setup: fixed(a(1, 40)),
			ret:   0,
			exit:  `kill(1, SIGRT_8) = 0`,
		},
		{
			name: "tgkill", sysno: unix.SYS_TGKILL,
			setup: fixed(a(5571, 5571, uint64(unix.SIGUSR1))),
			ret:   0,
			exit:  `tgkill(5571, 5571, SIGUSR1) = 0`,
		},
		{
			name: "setuid -1", sysno: unix.SYS_SETUID,
			setup: fixed(a(0xffffffff)),
			ret:   neg(unix.EINVAL),
			exit:  `setuid(-1) = -1 EINVAL (Invalid argument)`,
		},
		{
			name: "getresuid", sysno: unix.SYS_GETRESUID,
			setup: func(m *fakeMem) [6]uintptr { return a(m.u32s(0), m.u32s(1000), m.u32s(0)) },
			ret:   0,
			exit:  `getresuid([0], [1000], [0]) = 0`,
		},
		{
			name: "uname", sysno: unix.SYS_UNAME,
			setup: func(m *fakeMem) [6]uintptr {
				b := (&builder{}).bytes([]byte("Linux")).at(65).bytes([]byte("vm")).at(65 * 6)
				return a(m.put(b.b))
			},
			ret:   0,
			entry: `uname(0x10000)`,
			exit:  `uname({sysname="Linux", nodename="vm", ...}) = 0`,
		},
		{
			name: "prlimit64 stack", sysno: unix.SYS_PRLIMIT64,
			setup: func(m *fakeMem) [6]uintptr { return a(0, unix.RLIMIT_STACK, 0, m.u64s(8192*1024, ^uint64(0))) },
			ret:   0,
			exit:  `prlimit64(0, RLIMIT_STACK, NULL, {rlim_cur=8192*1024, rlim_max=RLIM64_INFINITY}) = 0`,
		},
		{
			name: "prlimit64 nofile", sysno: unix.SYS_PRLIMIT64,
			setup: func(m *fakeMem) [6]uintptr { return a(0, unix.RLIMIT_NOFILE, 0, m.u64s(20000, 20000)) },
			ret:   0,
			exit:  `prlimit64(0, RLIMIT_NOFILE, NULL, {rlim_cur=20000, rlim_max=20000}) = 0`,
		},
		{
			name: "prlimit64 set", sysno: unix.SYS_PRLIMIT64,
			setup: func(m *fakeMem) [6]uintptr { return a(0, unix.RLIMIT_CORE, m.u64s(0, 0), 0) },
			ret:   0,
			exit:  `prlimit64(0, RLIMIT_CORE, {rlim_cur=0, rlim_max=0}, NULL) = 0`,
		},
		{
			name: "prlimit64 unknown", sysno: unix.SYS_PRLIMIT64,
			setup: fixed(a(0, 99, 0, 0)),
			ret:   neg(unix.EINVAL),
			exit:  `prlimit64(0, 0x63 /* RLIMIT_??? */, NULL, NULL) = -1 EINVAL (Invalid argument)`,
		},
		{
			name: "getrlimit", sysno: unix.SYS_GETRLIMIT,
			setup: func(m *fakeMem) [6]uintptr { return a(unix.RLIMIT_AS, m.u64s(^uint64(0), ^uint64(0))) },
			ret:   0,
			exit:  `getrlimit(RLIMIT_AS, {rlim_cur=RLIM_INFINITY, rlim_max=RLIM_INFINITY}) = 0`,
		},
		{
			name: "getrusage", sysno: unix.SYS_GETRUSAGE,
			setup: func(m *fakeMem) [6]uintptr {
				b := (&builder{}).u64(0).u64(2929).u64(0).u64(1464).at(144)
				return a(0, m.put(b.b))
			},
			ret:  0,
			exit: `getrusage(RUSAGE_SELF, {ru_utime={tv_sec=0, tv_usec=2929}, ru_stime={tv_sec=0, tv_usec=1464}, ...}) = 0`,
		},
		{
			name: "times", sysno: unix.SYS_TIMES,
			setup: func(m *fakeMem) [6]uintptr { return a(m.u64s(0, 0, 0, 0)) },
			ret:   1718030038,
			exit:  `times({tms_utime=0, tms_stime=0, tms_cutime=0, tms_cstime=0}) = 1718030038`,
		},
		{
			name: "sysinfo", sysno: unix.SYS_SYSINFO,
			setup: func(m *fakeMem) [6]uintptr {
				b := (&builder{}).u64(570).u64(12768).u64(16736).u64(8960).u64(25276026880).u64(24911306752).
					u64(9097216).u64(8916992).u64(0).u64(0).u16(99).at(88).u64(0).u64(0).u32(1).at(112)
				return a(m.put(b.b))
			},
			ret:  0,
			exit: `sysinfo({uptime=570, loads=[12768, 16736, 8960], totalram=25276026880, freeram=24911306752, sharedram=9097216, bufferram=8916992, totalswap=0, freeswap=0, procs=99, totalhigh=0, freehigh=0, mem_unit=1}) = 0`,
		},
		{
			name: "sched_getaffinity", sysno: unix.SYS_SCHED_GETAFFINITY,
			setup: func(m *fakeMem) [6]uintptr { return a(0, 128, m.put(append([]byte{3}, make([]byte, 127)...))) },
			ret:   32,
			exit:  `sched_getaffinity(0, 128, [0 1]) = 32`,
		},
		{
			name: "prctl set name", sysno: unix.SYS_PRCTL,
			setup: func(m *fakeMem) [6]uintptr { return a(unix.PR_SET_NAME, m.cstr("foo")) },
			ret:   0,
			exit:  `prctl(PR_SET_NAME, "foo") = 0`,
		},
		{
			name: "prctl get name", sysno: unix.SYS_PRCTL,
			setup: func(m *fakeMem) [6]uintptr { return a(unix.PR_GET_NAME, m.cstr("d")) },
			ret:   0,
			entry: `prctl(PR_GET_NAME, 0x10000)`,
			exit:  `prctl(PR_GET_NAME, "d") = 0`,
		},
		{
			name: "prctl get dumpable", sysno: unix.SYS_PRCTL,
			setup: fixed(a(unix.PR_GET_DUMPABLE)),
			ret:   1,
			exit:  `prctl(PR_GET_DUMPABLE) = 1`,
		},
		{
			name: "prctl pdeathsig", sysno: unix.SYS_PRCTL,
			setup: fixed(a(unix.PR_SET_PDEATHSIG, uint64(unix.SIGKILL))),
			ret:   0,
			exit:  `prctl(PR_SET_PDEATHSIG, SIGKILL) = 0`,
		},
		{
			name: "prctl no new privs", sysno: unix.SYS_PRCTL,
			setup: fixed(a(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)),
			ret:   0,
			exit:  `prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) = 0`,
		},
		{
			name: "prctl seccomp", sysno: unix.SYS_PRCTL,
			setup: fixed(a(unix.PR_SET_SECCOMP, 2, 0)),
			ret:   neg(unix.EFAULT),
			exit:  `prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, NULL) = -1 EFAULT (Bad address)`,
		},
		{
			name: "prctl capbset", sysno: unix.SYS_PRCTL,
			setup: fixed(a(unix.PR_CAPBSET_READ, 1)),
			ret:   1,
			exit:  `prctl(PR_CAPBSET_READ, CAP_DAC_OVERRIDE) = 1`,
		},
		{
			name: "prctl unknown", sysno: unix.SYS_PRCTL,
			setup: fixed(a(9999, 1, 2, 3, 4)),
			ret:   neg(unix.EINVAL),
			exit:  `prctl(0x270f /* PR_??? */, 0x1, 0x2, 0x3, 0x4) = -1 EINVAL (Invalid argument)`,
		},
		{
			name: "unshare", sysno: unix.SYS_UNSHARE,
			setup: fixed(a(unix.CLONE_NEWNS | unix.CLONE_NEWPID)),
			ret:   0,
			exit:  `unshare(CLONE_NEWNS|CLONE_NEWPID) = 0`,
		},
		{
			name: "capget", sysno: unix.SYS_CAPGET,
			setup: fixed(a(0x1000, 0)),
			ret:   neg(unix.EFAULT),
			exit:  `capget(0x1000, NULL) = -1 EFAULT (Bad address)`,
		},
	})
}

func TestSignals(t *testing.T) {
	sigact := func(m *fakeMem, handler, flags, restorer, mask uint64) uint64 {
		return m.u64s(handler, flags, restorer, mask)
	}
	bit := func(s unix.Signal) uint64 { return 1 << (uint(s) - 1) }
	runCases(t, []lineCase{
		{
			name: "rt_sigaction set", sysno: unix.SYS_RT_SIGACTION,
			setup: func(m *fakeMem) [6]uintptr {
				return a(uint64(unix.SIGUSR1), sigact(m, 0x55603685b4c9, saRestorer|0x10000000, 0x7fbc081f6050, bit(unix.SIGINT)|bit(unix.SIGTERM)), 0, 8)
			},
			ret:  0,
			exit: `rt_sigaction(SIGUSR1, {sa_handler=0x55603685b4c9, sa_mask=[INT TERM], sa_flags=SA_RESTORER|SA_RESTART, sa_restorer=0x7fbc081f6050}, NULL, 8) = 0`,
		},
		{
			name: "rt_sigaction get", sysno: unix.SYS_RT_SIGACTION,
			setup: func(m *fakeMem) [6]uintptr {
				return a(uint64(unix.SIGUSR1), 0, sigact(m, 0x55603685b4c9, saRestorer|0x10000000, 0x7fbc081f6050, bit(unix.SIGINT)|bit(unix.SIGTERM)), 8)
			},
			ret:   0,
			entry: `rt_sigaction(SIGUSR1, NULL, 0x10000, 8)`,
			exit:  `rt_sigaction(SIGUSR1, NULL, {sa_handler=0x55603685b4c9, sa_mask=[INT TERM], sa_flags=SA_RESTORER|SA_RESTART, sa_restorer=0x7fbc081f6050}, 8) = 0`,
		},
		{
			name: "rt_sigaction ignore all flags", sysno: unix.SYS_RT_SIGACTION,
			setup: func(m *fakeMem) [6]uintptr {
				return a(uint64(unix.SIGINT), sigact(m, 1, 0xffffffff, 0, ^uint64(0)), 0, 8)
			},
			ret:  0,
			exit: `rt_sigaction(SIGINT, {sa_handler=SIG_IGN, sa_mask=~[], sa_flags=SA_RESTORER|SA_ONSTACK|SA_RESTART|SA_INTERRUPT|SA_NODEFER|SA_RESETHAND|SA_SIGINFO|SA_NOCLDSTOP|SA_NOCLDWAIT|0x3fffff8, sa_restorer=NULL}, NULL, 8) = 0`,
		},
		{
			name: "rt_sigaction default", sysno: unix.SYS_RT_SIGACTION,
			setup: func(m *fakeMem) [6]uintptr {
				return a(uint64(unix.SIGINT), sigact(m, 0, 0x08000000|0x40000000|0x80000000|4|1|2, 0, 0x5555), 0, 8)
			},
			ret:  0,
			exit: `rt_sigaction(SIGINT, {sa_handler=SIG_DFL, sa_mask=[HUP QUIT TRAP BUS KILL SEGV PIPE TERM], sa_flags=SA_ONSTACK|SA_NODEFER|SA_RESETHAND|SA_SIGINFO|SA_NOCLDSTOP|SA_NOCLDWAIT}, NULL, 8) = 0`,
		},
		{
			name: "rt_sigaction bad pointers", sysno: unix.SYS_RT_SIGACTION,
			setup: fixed(a(64, 0x10, 0x10, 8)),
			ret:   neg(unix.EFAULT),
			exit:  `rt_sigaction(SIGRT_32, 0x10, 0x10, 8) = -1 EFAULT (Bad address)`,
		},
		{
			name: "rt_sigaction bad signal", sysno: unix.SYS_RT_SIGACTION,
			setup: fixed(a(65, 0, 0, 8)),
			ret:   neg(unix.EINVAL),
			exit:  `rt_sigaction(65, NULL, NULL, 8) = -1 EINVAL (Invalid argument)`,
		},
		{
			name: "rt_sigprocmask block", sysno: unix.SYS_RT_SIGPROCMASK,
			setup: func(m *fakeMem) [6]uintptr {
				return a(unix.SIG_BLOCK, m.u64s(bit(unix.SIGINT)|bit(unix.SIGUSR1)|1<<35), 0, 8)
			},
			ret:  0,
			exit: `rt_sigprocmask(SIG_BLOCK, [INT USR1 RT_4], NULL, 8) = 0`,
		},
		{
			name: "rt_sigprocmask complement", sysno: unix.SYS_RT_SIGPROCMASK,
			setup: func(m *fakeMem) [6]uintptr {
				full := ^uint64(0) &^ (1<<31 | 1<<32)
				return a(unix.SIG_SETMASK, m.u64s(full), m.u64s(bit(unix.SIGINT)|bit(unix.SIGUSR1)|1<<35), 8)
			},
			ret:  0,
			exit: `rt_sigprocmask(SIG_SETMASK, ~[RTMIN RT_1], [INT USR1 RT_4], 8) = 0`,
		},
		{
			name: "rt_sigprocmask empty", sysno: unix.SYS_RT_SIGPROCMASK,
			setup: func(m *fakeMem) [6]uintptr { return a(unix.SIG_SETMASK, m.u64s(0), 0, 8) },
			ret:   0,
			exit:  `rt_sigprocmask(SIG_SETMASK, [], NULL, 8) = 0`,
		},
		{
			name: "rt_sigprocmask bad how", sysno: unix.SYS_RT_SIGPROCMASK,
			setup: fixed(a(5, 0, 0, 8)),
			ret:   0,
			exit:  `rt_sigprocmask(0x5 /* SIG_??? */, NULL, NULL, 8) = 0`,
		},
		{
			name: "rt_sigsuspend", sysno: unix.SYS_RT_SIGSUSPEND,
			setup: func(m *fakeMem) [6]uintptr { return a(m.u64s(bit(unix.SIGHUP)), 8) },
			ret:   neg(unix.EINTR),
			exit:  `rt_sigsuspend([HUP], 8) = -1 EINTR (Interrupted system call)`,
		},
		{
			name: "rt_sigtimedwait", sysno: unix.SYS_RT_SIGTIMEDWAIT,
			setup: func(m *fakeMem) [6]uintptr { return a(m.u64s(bit(unix.SIGCHLD)), 0, m.u64s(0, 1000), 8) },
			ret:   17,
			exit:  `rt_sigtimedwait([CHLD], NULL, {tv_sec=0, tv_nsec=1000}, 8) = 17 (SIGCHLD)`,
		},
		{
			name: "sigaltstack", sysno: unix.SYS_SIGALTSTACK,
			setup: func(m *fakeMem) [6]uintptr {
				return a(m.u64s(0x7ffdee631990, 0, 8192), m.u64s(0, 2, 0))
			},
			ret:  0,
			exit: `sigaltstack({ss_sp=0x7ffdee631990, ss_flags=0, ss_size=8192}, {ss_sp=NULL, ss_flags=SS_DISABLE, ss_size=0}) = 0`,
		},
		{
			name: "signalfd4", sysno: unix.SYS_SIGNALFD4,
			setup: func(m *fakeMem) [6]uintptr { return a(0xffffffff, m.u64s(bit(unix.SIGCHLD)), 8, unix.SFD_CLOEXEC) },
			ret:   11,
			exit:  `signalfd4(-1, [CHLD], 8, SFD_CLOEXEC) = 11`,
		},
		{
			name: "rt_sigreturn", sysno: unix.SYS_RT_SIGRETURN,
			setup: fixed(a()),
			ret:   0,
			exit:  `rt_sigreturn() = 0`,
		},
	})
}
