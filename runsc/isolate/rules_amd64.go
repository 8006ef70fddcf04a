package isolate

import "golang.org/x/sys/unix"

// This file holds the seccomp allowlists of runsc's processes, as tables
// keyed by syscall number. To add an entry, put it in the group it belongs
// to, with the narrowest argument conditions that are cheap to check.
// Groups are combined with Merge; a syscall listed in two groups of the
// same filter gets the union of their matches.

// nsCloneFlags are the clone flags that create namespaces: none of our
// processes may make new namespaces once confined.
const nsCloneFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
	unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP

// fionbio is FIONBIO (asm-generic/ioctls.h), which x/sys/unix does not
// name.
const fionbio = 0x5421

// goRuntimeRules are the syscalls the Go runtime makes on its own after
// start-up: memory, threads, signals, scheduling, time, the netpoller and
// randomness. Both the Sentry and the gofer need them.
//
// The tables are functions rather than variables: a map variable is built
// when the package is initialised, in every runsc process, where each
// process needs at most one filter, once.
func goRuntimeRules() Rules {
	return Rules{
		// Memory.
		unix.SYS_MMAP:     Allow,
		unix.SYS_MUNMAP:   Allow,
		unix.SYS_MADVISE:  Allow,
		unix.SYS_MPROTECT: Allow,
		unix.SYS_MREMAP:   Allow,
		// Threads: clone for new Ms (never with namespace flags), clone3 is
		// refused with ENOSYS so that any caller falls back to clone.
		unix.SYS_CLONE:             AllowIf(Match{NoBits(0, nsCloneFlags)}),
		unix.SYS_CLONE3:            Fail(unix.ENOSYS),
		unix.SYS_EXIT:              Allow,
		unix.SYS_EXIT_GROUP:        Allow,
		unix.SYS_GETTID:            Allow,
		unix.SYS_GETPID:            Allow,
		unix.SYS_SET_ROBUST_LIST:   Allow,
		unix.SYS_RSEQ:              Allow,
		unix.SYS_MEMBARRIER:        Allow,
		unix.SYS_FUTEX:             Allow,
		unix.SYS_SCHED_YIELD:       Allow,
		unix.SYS_SCHED_GETAFFINITY: Allow,
		unix.SYS_ARCH_PRCTL:        Allow,
		unix.SYS_PRLIMIT64:         Allow,
		// sysmon re-reads the cgroup CPU limit with pread on files it opened
		// at start-up, to keep GOMAXPROCS in step with it (unless
		// GODEBUG=updatemaxprocs=0).
		unix.SYS_PREAD64:   Allow,
		unix.SYS_GETRLIMIT: Allow,
		unix.SYS_UNAME:     Allow,
		// The runtime names its anonymous mappings (prctl PR_SET_VMA).
		unix.SYS_PRCTL: AllowIf(Match{Eq32(0, unix.PR_SET_VMA)}),
		// Signals: handlers, masks, alternate stacks, preemption (tgkill).
		unix.SYS_RT_SIGACTION:    Allow,
		unix.SYS_RT_SIGPROCMASK:  Allow,
		unix.SYS_RT_SIGRETURN:    Allow,
		unix.SYS_SIGALTSTACK:     Allow,
		unix.SYS_TGKILL:          Allow,
		unix.SYS_RESTART_SYSCALL: Allow,
		// Time and sleeping (the vDSO covers most of it; these are the
		// fallbacks), and the profiling timers.
		unix.SYS_CLOCK_GETTIME:   Allow,
		unix.SYS_CLOCK_GETRES:    Allow,
		unix.SYS_CLOCK_NANOSLEEP: Allow,
		unix.SYS_GETTIMEOFDAY:    Allow,
		unix.SYS_NANOSLEEP:       Allow,
		unix.SYS_SETITIMER:       Allow,
		unix.SYS_TIMER_CREATE:    Allow,
		unix.SYS_TIMER_SETTIME:   Allow,
		unix.SYS_TIMER_DELETE:    Allow,
		// The netpoller.
		unix.SYS_EPOLL_CREATE1: Allow,
		unix.SYS_EPOLL_CTL:     Allow,
		unix.SYS_EPOLL_PWAIT:   Allow,
		unix.SYS_EPOLL_WAIT:    Allow,
		unix.SYS_EVENTFD2:      Allow,
		unix.SYS_PIPE2:         Allow,
		// Descriptors it already holds, and randomness.
		unix.SYS_READ:      Allow,
		unix.SYS_WRITE:     Allow,
		unix.SYS_CLOSE:     Allow,
		unix.SYS_GETRANDOM: Allow,
	}
}

// deniedRules kill the process in every mode, the debug ones included:
// reaching host paths or executables, changing mounts or namespaces, and
// the classic escape routes. (Everything unlisted is refused too; these
// are listed so that no debug run can hide them.)
func deniedRules() Rules {
	return Rules{
		unix.SYS_OPEN:              Deny,
		unix.SYS_CREAT:             Deny,
		unix.SYS_OPENAT2:           Deny,
		unix.SYS_OPEN_BY_HANDLE_AT: Deny,
		unix.SYS_NAME_TO_HANDLE_AT: Deny,
		unix.SYS_EXECVE:            Deny,
		unix.SYS_EXECVEAT:          Deny,
		unix.SYS_MOUNT:             Deny,
		unix.SYS_UMOUNT2:           Deny,
		unix.SYS_PIVOT_ROOT:        Deny,
		unix.SYS_CHROOT:            Deny,
		unix.SYS_UNSHARE:           Deny,
		unix.SYS_SETNS:             Deny,
		unix.SYS_FSOPEN:            Deny,
		unix.SYS_FSMOUNT:           Deny,
		unix.SYS_FSPICK:            Deny,
		unix.SYS_OPEN_TREE:         Deny,
		unix.SYS_MOVE_MOUNT:        Deny,
		unix.SYS_SOCKET:            Deny,
		unix.SYS_BPF:               Deny,
		unix.SYS_KEXEC_LOAD:        Deny,
		unix.SYS_INIT_MODULE:       Deny,
		unix.SYS_FINIT_MODULE:      Deny,
	}
}

// sentryDeniedRules adds what only the Sentry must never do: open any path
// (files come from the gofer).
func sentryDeniedRules() Rules {
	return Rules{
		unix.SYS_OPENAT: Deny,
	}
}

// sentryRules are the Sentry's own needs beyond the Go runtime.
func sentryRules() Rules {
	return Rules{
		// The ptrace platform: it traces its stub processes, waits for their
		// stops, signals and kills them, and copies memory in and out.
		unix.SYS_PTRACE:            Allow,
		unix.SYS_WAIT4:             Allow,
		unix.SYS_WAITID:            Allow,
		unix.SYS_KILL:              Allow,
		unix.SYS_TKILL:             Allow,
		unix.SYS_PROCESS_VM_READV:  Allow,
		unix.SYS_PROCESS_VM_WRITEV: Allow,
		// It binds each stub thread to the CPU its tracer runs on, so a
		// system call's stop and resume do not cross CPUs.
		unix.SYS_SCHED_SETAFFINITY: Allow,
		// Stub processes inherit the filter if the platform forks them after
		// confinement; their start-up code parks in pause and closes every
		// descriptor but the memory file with close_range.
		unix.SYS_PAUSE:       Allow,
		unix.SYS_CLOSE_RANGE: Allow,
		// mincore(2) answers from the residency of the memory file's pages
		// in the Sentry's own mapping of it.
		unix.SYS_MINCORE: Allow,
		// I/O on descriptors it holds: the memory file, gofer-donated files,
		// the app's host stdio, the gofer connection.
		unix.SYS_PREAD64:    Allow,
		unix.SYS_PWRITE64:   Allow,
		unix.SYS_READV:      Allow,
		unix.SYS_WRITEV:     Allow,
		unix.SYS_PREADV:     Allow,
		unix.SYS_PWRITEV:    Allow,
		unix.SYS_PREADV2:    Allow,
		unix.SYS_PWRITEV2:   Allow,
		unix.SYS_LSEEK:      Allow,
		unix.SYS_FSTAT:      Allow,
		unix.SYS_FSTATFS:    Allow,
		unix.SYS_FTRUNCATE:  Allow,
		unix.SYS_FALLOCATE:  Allow,
		unix.SYS_FSYNC:      Allow,
		unix.SYS_FDATASYNC:  Allow,
		unix.SYS_GETDENTS64: Allow,
		unix.SYS_FCNTL:      Allow,
		unix.SYS_DUP:        Allow,
		unix.SYS_DUP2:       Allow,
		unix.SYS_DUP3:       Allow,
		unix.SYS_POLL:       Allow,
		unix.SYS_PPOLL:      Allow,
		// Descriptor-to-descriptor copies, which Go's io.Copy between files
		// tries first.
		unix.SYS_COPY_FILE_RANGE: Allow,
		unix.SYS_SPLICE:          Allow,
		unix.SYS_SENDFILE:        Allow,
		// fstat by descriptor only: newfstatat with AT_EMPTY_PATH.
		unix.SYS_NEWFSTATAT: AllowIf(Match{HasBits(3, unix.AT_EMPTY_PATH)}),
		// The gofer connection (and later, others it is handed); gofer/proto
		// checks the socket type of a connection it is given.
		unix.SYS_GETSOCKOPT: AllowIf(Match{Eq32(1, unix.SOL_SOCKET), Eq32(2, unix.SO_TYPE)}),
		unix.SYS_RECVMSG:    Allow,
		unix.SYS_SENDMSG:    Allow,
		unix.SYS_RECVFROM:   Allow,
		unix.SYS_SENDTO:     Allow,
		unix.SYS_SHUTDOWN:   Allow,
		// A container's control socket: runsc create binds and listens on
		// it and hands the sandbox the listening descriptor (boot/control.go).
		unix.SYS_ACCEPT4: Allow,
		// A socket bound on a host path (--host-uds=create) listens when
		// the application's does (sentry/socket/unix/host.go).
		unix.SYS_LISTEN: Allow,
		// Memory: the memory file and its mappings.
		unix.SYS_MEMFD_CREATE: Allow,
		unix.SYS_MSYNC:        Allow,
		// Terminal control on the host stdio, for the app's tty.
		unix.SYS_IOCTL: AllowIf(OneOf32(1,
			unix.TCGETS, unix.TCSETS, unix.TCSETSW, unix.TCSETSF,
			unix.TIOCGWINSZ, unix.TIOCSWINSZ, unix.TIOCGPGRP, unix.TIOCSPGRP,
			unix.TIOCINQ /* FIONREAD */, fionbio)...),
		// Process attributes.
		unix.SYS_PRCTL: AllowIf(OneOf32(0,
			unix.PR_SET_PDEATHSIG, unix.PR_GET_PDEATHSIG,
			unix.PR_SET_NAME, unix.PR_GET_NAME,
			unix.PR_SET_NO_NEW_PRIVS, unix.PR_GET_NO_NEW_PRIVS,
			unix.PR_SET_DUMPABLE, unix.PR_GET_DUMPABLE)...),
		unix.SYS_GETPPID:   Allow,
		unix.SYS_GETUID:    Allow,
		unix.SYS_GETEUID:   Allow,
		unix.SYS_GETGID:    Allow,
		unix.SYS_GETEGID:   Allow,
		unix.SYS_GETRUSAGE: Allow,
		unix.SYS_GETCPU:    Allow,
		unix.SYS_TIME:      Allow,
	}
}

// goferDeniedRules: the gofer must not trace anything.
func goferDeniedRules() Rules {
	return Rules{
		unix.SYS_PTRACE: Deny,
	}
}

// goferRules are what package gofer lists in gofer.Syscalls, with the
// argument conditions it asks for: files are opened for reading only,
// stat never follows a symlink, socket pairs are unix seqpacket ones.
func goferRules() Rules {
	return Rules{
		unix.SYS_OPENAT:     AllowIf(Match{NoBits(2, unix.O_WRONLY|unix.O_RDWR|unix.O_CREAT|unix.O_TRUNC)}),
		unix.SYS_NEWFSTATAT: AllowIf(Match{HasBits(3, unix.AT_SYMLINK_NOFOLLOW)}),
		unix.SYS_READLINKAT: Allow,
		unix.SYS_GETDENTS64: Allow,
		unix.SYS_LSEEK:      Allow,
		unix.SYS_FSTATFS:    Allow,
		unix.SYS_FCNTL: AllowIf(OneOf32(1,
			unix.F_GETFL, unix.F_SETFL, unix.F_GETFD, unix.F_SETFD)...),
		unix.SYS_RECVMSG: Allow,
		unix.SYS_SENDMSG: Allow,
		unix.SYS_SOCKETPAIR: AllowIf(Match{
			Eq32(0, unix.AF_UNIX),
			MaskedEq(1, 0xffffffff&^(unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK), unix.SOCK_SEQPACKET),
		}),
		unix.SYS_GETSOCKOPT: AllowIf(Match{Eq32(1, unix.SOL_SOCKET), Eq32(2, unix.SO_TYPE)}),
		// Requests that change nothing, served read-only too: xattr reads,
		// fsync, and connecting to unix sockets on host paths.
		unix.SYS_FGETXATTR:  Allow,
		unix.SYS_FLISTXATTR: Allow,
		unix.SYS_FSYNC:      Allow,
		unix.SYS_FDATASYNC:  Allow,
		unix.SYS_SOCKET:     AllowIf(Match{Eq32(0, unix.AF_UNIX)}),
		unix.SYS_CONNECT:    Allow,
		unix.SYS_FCHDIR:     Allow,
	}
}

// goferWriteRules are what package gofer lists in gofer.WriteSyscalls,
// for a gofer serving read-write: files may be created and opened for
// writing, but never through a final symlink (O_NOFOLLOW); owners and
// times change only with AT_SYMLINK_NOFOLLOW; sockets are unix ones.
func goferWriteRules() Rules {
	return Rules{
		unix.SYS_OPENAT:  AllowIf(Match{HasBits(2, unix.O_NOFOLLOW)}),
		unix.SYS_MKDIRAT: Allow,
		unix.SYS_MKNODAT: AllowIf(
			Match{MaskedEq(2, unix.S_IFMT, unix.S_IFIFO)},
			Match{MaskedEq(2, unix.S_IFMT, unix.S_IFSOCK)},
			Match{MaskedEq(2, unix.S_IFMT, unix.S_IFREG)}),
		unix.SYS_SYMLINKAT:    Allow,
		unix.SYS_LINKAT:       Allow,
		unix.SYS_UNLINKAT:     Allow,
		unix.SYS_RENAMEAT2:    Allow,
		unix.SYS_FCHOWNAT:     AllowIf(Match{HasBits(4, unix.AT_SYMLINK_NOFOLLOW)}),
		unix.SYS_FCHMODAT2:    Allow,
		unix.SYS_FCHMODAT:     Allow,
		unix.SYS_FCHMOD:       Allow,
		unix.SYS_UTIMENSAT:    AllowIf(Match{HasBits(3, unix.AT_SYMLINK_NOFOLLOW)}),
		unix.SYS_FTRUNCATE:    Allow,
		unix.SYS_FALLOCATE:    Allow,
		unix.SYS_FSTAT:        Allow,
		unix.SYS_FSETXATTR:    Allow,
		unix.SYS_FREMOVEXATTR: Allow,
		unix.SYS_BIND:         Allow,
		// An O_TMPFILE file's node keeps a duplicate of its fd.
		unix.SYS_FCNTL: AllowIf(Match{Eq32(1, unix.F_DUPFD_CLOEXEC)}),
	}
}

// SentryRules returns the Sentry's allowlist: the Go runtime, the
// Sentry's own needs and the explicit denials (open, openat, execve, ...).
func SentryRules() Rules {
	return mustMerge(goRuntimeRules(), sentryRules(), deniedRules(), sentryDeniedRules())
}

// GoferRules returns the gofer's allowlist: the Go runtime, read-only file
// serving and the explicit denials. socket, denied outright elsewhere, is
// allowed for AF_UNIX only (connect to sockets on host paths); other
// families meet the filter's default action.
func GoferRules() Rules {
	return mustMerge(goRuntimeRules(), goferRules(), goferDenied(), goferDeniedRules())
}

// goferDenied is deniedRules() without socket, which goferRules() allows for
// AF_UNIX.
func goferDenied() Rules {
	denied := Rules{}
	for nr, r := range deniedRules() {
		if nr != unix.SYS_SOCKET {
			denied[nr] = r
		}
	}
	return denied
}

// GoferWriteRules returns the allowlist of a gofer serving read-write:
// GoferRules plus creating, changing and removing files.
func GoferWriteRules() Rules {
	return mustMerge(goRuntimeRules(), goferRules(), goferWriteRules(), goferDenied(), goferDeniedRules())
}

func mustMerge(groups ...Rules) Rules {
	r, err := Merge(groups...)
	if err != nil {
		panic("isolate: inconsistent rule tables: " + err.Error())
	}
	return r
}

// SentryFilter is the Sentry's filter in mode m.
func SentryFilter(m Mode) *Filter {
	return &Filter{Rules: SentryRules(), Default: m.DefaultAction()}
}

// GoferFilter is the gofer's filter in mode m for the gofer process pid
// (its pid as it sees itself): signals it sends with tgkill (the Go
// runtime's preemption and raise) may only target its own threads, since
// the gofer may share a PID namespace with other processes.
func GoferFilter(m Mode, pid int) *Filter {
	r := GoferRules()
	r[unix.SYS_TGKILL] = AllowIf(Match{Eq32(0, uint32(pid))})
	return &Filter{Rules: r, Default: m.DefaultAction()}
}

// GoferWriteFilter is GoferFilter for a gofer serving read-write.
func GoferWriteFilter(m Mode, pid int) *Filter {
	r := GoferWriteRules()
	r[unix.SYS_TGKILL] = AllowIf(Match{Eq32(0, uint32(pid))})
	return &Filter{Rules: r, Default: m.DefaultAction()}
}
