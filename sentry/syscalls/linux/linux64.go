// Package linux holds the Linux syscall handlers and the amd64 syscall
// table. Handlers decode arguments, call into the kernel, the memory
// manager or the VFS, and map errors; the logic lives there.
package linux

import (
	"sync"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel"
	"github.com/moat-sandbox/moat/sentry/strace"
)

// Shorthands for table entries.
func full(name string, fn kernel.SyscallFn) kernel.Syscall {
	return kernel.Syscall{Name: name, Fn: fn, Support: kernel.SupportFull}
}

func partial(name string, fn kernel.SyscallFn, note string) kernel.Syscall {
	return kernel.Syscall{Name: name, Fn: fn, Support: kernel.SupportPartial, Note: note}
}

func unimplemented(name string, errno unix.Errno, note string) kernel.Syscall {
	return kernel.Syscall{Name: name, Support: kernel.SupportUnimplemented, Errno: errno, Note: note}
}

// AMD64 returns the amd64 syscall table. Every syscall number Linux
// assigns has an entry; those without a handler return their errno (ENOSYS
// unless noted) and are logged once. It is built on first use: only the
// sandbox process needs it, and building it in package init cost every
// runsc process (runsc do, the gofer) about 0.6 ms.
var AMD64 = sync.OnceValue(func() *kernel.SyscallTable {
	t := baseSyscalls()
	for n, s := range miscSyscalls() {
		t[n] = s
	}
	// Every other number Linux assigns is unimplemented.
	for n := uintptr(0); n < strace.MaxSyscall; n++ {
		if _, ok := t[n]; ok {
			continue
		}
		if name := strace.Name(n); name != "" {
			t[n] = unimplemented(name, unix.ENOSYS, "")
		}
	}
	// Then the other files' tables, in file order, each replacing the
	// entries it has.
	for _, part := range tableParts {
		for n, s := range part() {
			t[n] = s
		}
	}
	return &kernel.SyscallTable{Table: t}
})

// tableParts are the syscall tables the other files add (by init, so in
// file name order): table_*.go and sys_inotify.go.
var tableParts []func() map[uintptr]kernel.Syscall

// baseSyscalls returns the table's entries listed here.
func baseSyscalls() map[uintptr]kernel.Syscall {
	return map[uintptr]kernel.Syscall{
		unix.SYS_READ:              full("read", Read),
		unix.SYS_WRITE:             full("write", Write),
		unix.SYS_OPEN:              full("open", Open),
		unix.SYS_CLOSE:             full("close", Close),
		unix.SYS_STAT:              full("stat", Stat),
		unix.SYS_FSTAT:             full("fstat", Fstat),
		unix.SYS_LSTAT:             full("lstat", Lstat),
		unix.SYS_POLL:              full("poll", Poll),
		unix.SYS_LSEEK:             full("lseek", Lseek),
		unix.SYS_MMAP:              partial("mmap", Mmap, "MAP_SHARED file mappings are snapshots of read-only files; MAP_HUGETLB unsupported"),
		unix.SYS_MPROTECT:          full("mprotect", Mprotect),
		unix.SYS_MUNMAP:            full("munmap", Munmap),
		unix.SYS_BRK:               full("brk", Brk),
		unix.SYS_RT_SIGACTION:      full("rt_sigaction", RtSigaction),
		unix.SYS_RT_SIGPROCMASK:    full("rt_sigprocmask", RtSigprocmask),
		unix.SYS_RT_SIGRETURN:      full("rt_sigreturn", RtSigreturn),
		unix.SYS_IOCTL:             partial("ioctl", Ioctl, "terminal, FIONREAD, FIONBIO, FIOCLEX/FIONCLEX only"),
		unix.SYS_PREAD64:           full("pread64", Pread64),
		unix.SYS_PWRITE64:          full("pwrite64", Pwrite64),
		unix.SYS_READV:             full("readv", Readv),
		unix.SYS_WRITEV:            full("writev", Writev),
		unix.SYS_ACCESS:            full("access", Access),
		unix.SYS_PIPE:              full("pipe", Pipe),
		unix.SYS_SELECT:            full("select", Select),
		unix.SYS_MREMAP:            partial("mremap", Mremap, "MREMAP_DONTUNMAP unsupported"),
		unix.SYS_MSYNC:             full("msync", Msync),
		unix.SYS_MINCORE:           full("mincore", Mincore),
		unix.SYS_MADVISE:           partial("madvise", Madvise, "advice other than DONTNEED/FREE/DONTFORK/WIPEONFORK is accepted as a hint"),
		unix.SYS_DUP:               full("dup", Dup),
		unix.SYS_DUP2:              full("dup2", Dup2),
		unix.SYS_PAUSE:             full("pause", Pause),
		unix.SYS_NANOSLEEP:         full("nanosleep", Nanosleep),
		unix.SYS_GETITIMER:         full("getitimer", Getitimer),
		unix.SYS_ALARM:             full("alarm", Alarm),
		unix.SYS_SETITIMER:         partial("setitimer", Setitimer, "ITIMER_VIRTUAL and ITIMER_PROF are checked every 5 ms"),
		unix.SYS_GETPPID:           full("getppid", Getppid),
		unix.SYS_GETTIMEOFDAY:      full("gettimeofday", Gettimeofday),
		unix.SYS_SETTIMEOFDAY:      partial("settimeofday", Settimeofday, "the sandbox cannot set the clock (EPERM)"),
		unix.SYS_TKILL:             full("tkill", Tkill),
		unix.SYS_GETPID:            full("getpid", Getpid),
		unix.SYS_SOCKET:            unimplemented("socket", unix.EAFNOSUPPORT, "sockets come with the network issue"),
		unix.SYS_SOCKETPAIR:        unimplemented("socketpair", unix.EAFNOSUPPORT, "sockets come with the network issue"),
		unix.SYS_CLONE:             partial("clone", Clone, "CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWPID and CLONE_NEWUSER supported; CLONE_NEWNET, CLONE_NEWCGROUP and CLONE_NEWTIME unsupported (EINVAL)"),
		unix.SYS_FORK:              full("fork", Fork),
		unix.SYS_VFORK:             full("vfork", Vfork),
		unix.SYS_EXECVE:            partial("execve", Execve, "set-user-ID bits are not honoured"),
		unix.SYS_EXIT:              full("exit", Exit),
		unix.SYS_WAIT4:             full("wait4", Wait4),
		unix.SYS_KILL:              full("kill", Kill),
		unix.SYS_FCNTL:             partial("fcntl", Fcntl, "leases and F_NOTIFY are not implemented (EINVAL); O_ASYNC signals come from pipes, FIFOs and inotify files (not yet terminals or sockets)"),
		unix.SYS_FLOCK:             full("flock", Flock),
		unix.SYS_FSYNC:             full("fsync", Fsync),
		unix.SYS_FDATASYNC:         full("fdatasync", Fdatasync),
		unix.SYS_TRUNCATE:          full("truncate", Truncate),
		unix.SYS_FTRUNCATE:         full("ftruncate", Ftruncate),
		unix.SYS_GETDENTS:          full("getdents", Getdents),
		unix.SYS_GETCWD:            full("getcwd", Getcwd),
		unix.SYS_CHDIR:             full("chdir", Chdir),
		unix.SYS_FCHDIR:            full("fchdir", Fchdir),
		unix.SYS_RENAME:            full("rename", Rename),
		unix.SYS_MKDIR:             full("mkdir", Mkdir),
		unix.SYS_RMDIR:             full("rmdir", Rmdir),
		unix.SYS_CREAT:             full("creat", Creat),
		unix.SYS_LINK:              full("link", Link),
		unix.SYS_UNLINK:            full("unlink", Unlink),
		unix.SYS_SYMLINK:           full("symlink", Symlink),
		unix.SYS_READLINK:          full("readlink", Readlink),
		unix.SYS_CHMOD:             full("chmod", Chmod),
		unix.SYS_FCHMOD:            full("fchmod", Fchmod),
		unix.SYS_CHOWN:             full("chown", Chown),
		unix.SYS_FCHOWN:            full("fchown", Fchown),
		unix.SYS_LCHOWN:            full("lchown", Lchown),
		unix.SYS_UMASK:             full("umask", Umask),
		unix.SYS_GETRUSAGE:         partial("getrusage", Getrusage, "only CPU times"),
		unix.SYS_TIMES:             full("times", Times),
		unix.SYS_RT_SIGPENDING:     full("rt_sigpending", RtSigpending),
		unix.SYS_RT_SIGTIMEDWAIT:   full("rt_sigtimedwait", RtSigtimedwait),
		unix.SYS_RT_SIGQUEUEINFO:   full("rt_sigqueueinfo", RtSigqueueinfo),
		unix.SYS_RT_SIGSUSPEND:     full("rt_sigsuspend", RtSigsuspend),
		unix.SYS_SIGALTSTACK:       full("sigaltstack", Sigaltstack),
		unix.SYS_UTIME:             full("utime", Utime),
		unix.SYS_MKNOD:             full("mknod", Mknod),
		unix.SYS_STATFS:            full("statfs", Statfs),
		unix.SYS_FSTATFS:           full("fstatfs", Fstatfs),
		unix.SYS_MLOCK:             full("mlock", Mlock),
		unix.SYS_MUNLOCK:           full("munlock", Munlock),
		unix.SYS_MLOCKALL:          full("mlockall", Mlockall),
		unix.SYS_MUNLOCKALL:        full("munlockall", Munlockall),
		unix.SYS_ARCH_PRCTL:        full("arch_prctl", ArchPrctl),
		unix.SYS_CHROOT:            full("chroot", Chroot),
		unix.SYS_SYNC:              full("sync", Sync),
		unix.SYS_GETTID:            full("gettid", Gettid),
		unix.SYS_TIME:              full("time", Time),
		unix.SYS_FUTEX:             partial("futex", Futex, "PI locks and PI requeues (FUTEX_WAIT_REQUEUE_PI, FUTEX_CMP_REQUEUE_PI) without priority boosting (the Sentry does not schedule by priority)"),
		unix.SYS_GETDENTS64:        full("getdents64", Getdents64),
		unix.SYS_SET_TID_ADDRESS:   full("set_tid_address", SetTidAddress),
		unix.SYS_RESTART_SYSCALL:   full("restart_syscall", RestartSyscall),
		unix.SYS_TIMER_CREATE:      full("timer_create", TimerCreate),
		unix.SYS_TIMER_SETTIME:     full("timer_settime", TimerSettime),
		unix.SYS_TIMER_GETTIME:     full("timer_gettime", TimerGettime),
		unix.SYS_TIMER_GETOVERRUN:  full("timer_getoverrun", TimerGetoverrun),
		unix.SYS_TIMER_DELETE:      full("timer_delete", TimerDelete),
		unix.SYS_CLOCK_SETTIME:     full("clock_settime", ClockSettime),
		unix.SYS_ADJTIMEX:          partial("adjtimex", Adjtimex, "queries only: the host clock is reported unsynchronised and never adjusted (EPERM)"),
		unix.SYS_CLOCK_ADJTIME:     partial("clock_adjtime", ClockAdjtime, "queries of CLOCK_REALTIME only, as adjtimex; other clocks EOPNOTSUPP"),
		unix.SYS_CLOCK_GETTIME:     full("clock_gettime", ClockGettime),
		unix.SYS_CLOCK_GETRES:      full("clock_getres", ClockGetres),
		unix.SYS_CLOCK_NANOSLEEP:   full("clock_nanosleep", ClockNanosleep),
		unix.SYS_EXIT_GROUP:        full("exit_group", ExitGroup),
		unix.SYS_EPOLL_WAIT:        full("epoll_wait", EpollWait),
		unix.SYS_EPOLL_CTL:         full("epoll_ctl", EpollCtl),
		unix.SYS_TGKILL:            full("tgkill", Tgkill),
		unix.SYS_UTIMES:            full("utimes", Utimes),
		unix.SYS_WAITID:            full("waitid", Waitid),
		unix.SYS_OPENAT:            full("openat", Openat),
		unix.SYS_MKDIRAT:           full("mkdirat", Mkdirat),
		unix.SYS_MKNODAT:           full("mknodat", Mknodat),
		unix.SYS_FCHOWNAT:          full("fchownat", Fchownat),
		unix.SYS_FUTIMESAT:         full("futimesat", Futimesat),
		unix.SYS_NEWFSTATAT:        full("newfstatat", Newfstatat),
		unix.SYS_UNLINKAT:          full("unlinkat", Unlinkat),
		unix.SYS_RENAMEAT:          full("renameat", Renameat),
		unix.SYS_LINKAT:            full("linkat", Linkat),
		unix.SYS_SYMLINKAT:         full("symlinkat", Symlinkat),
		unix.SYS_READLINKAT:        full("readlinkat", Readlinkat),
		unix.SYS_FCHMODAT:          full("fchmodat", Fchmodat),
		unix.SYS_FACCESSAT:         full("faccessat", Faccessat),
		unix.SYS_PSELECT6:          full("pselect6", Pselect6),
		unix.SYS_PPOLL:             full("ppoll", Ppoll),
		unix.SYS_SET_ROBUST_LIST:   full("set_robust_list", SetRobustList),
		unix.SYS_FUTEX_WAITV:       full("futex_waitv", FutexWaitv),
		unix.SYS_GET_ROBUST_LIST:   full("get_robust_list", GetRobustList),
		unix.SYS_UTIMENSAT:         full("utimensat", Utimensat),
		unix.SYS_EPOLL_PWAIT:       full("epoll_pwait", EpollPwait),
		unix.SYS_EVENTFD:           full("eventfd", Eventfd),
		unix.SYS_EVENTFD2:          full("eventfd2", Eventfd2),
		unix.SYS_EPOLL_CREATE:      full("epoll_create", EpollCreate),
		unix.SYS_EPOLL_CREATE1:     full("epoll_create1", EpollCreate1),
		unix.SYS_DUP3:              full("dup3", Dup3),
		unix.SYS_PIPE2:             full("pipe2", Pipe2),
		unix.SYS_PREADV:            full("preadv", Preadv),
		unix.SYS_PWRITEV:           full("pwritev", Pwritev),
		unix.SYS_RT_TGSIGQUEUEINFO: full("rt_tgsigqueueinfo", RtTgsigqueueinfo),
		unix.SYS_SYNCFS:            full("syncfs", Syncfs),
		unix.SYS_RENAMEAT2:         full("renameat2", Renameat2),
		unix.SYS_EXECVEAT:          partial("execveat", Execveat, "set-user-ID bits are not honoured"),
		unix.SYS_PREADV2:           full("preadv2", Preadv2),
		unix.SYS_PWRITEV2:          full("pwritev2", Pwritev2),
		unix.SYS_STATX:             full("statx", Statx),
		unix.SYS_CLONE3:            partial("clone3", Clone3, "set_tid and CLONE_INTO_CGROUP unsupported"),
		unix.SYS_CLOSE_RANGE:       full("close_range", CloseRange),
		unix.SYS_OPENAT2:           full("openat2", Openat2),
		unix.SYS_FACCESSAT2:        full("faccessat2", Faccessat2),
		unix.SYS_EPOLL_PWAIT2:      full("epoll_pwait2", EpollPwait2),
		unix.SYS_FCHMODAT2:         full("fchmodat2", Fchmodat2),
		unix.SYS_GETXATTR:          partial("getxattr", Getxattr, "no file system stores extended attributes yet: ENODATA"),
		unix.SYS_LGETXATTR:         partial("lgetxattr", Lgetxattr, "no file system stores extended attributes yet: ENODATA"),
		unix.SYS_FGETXATTR:         partial("fgetxattr", Fgetxattr, "no file system stores extended attributes yet: ENODATA"),
		unix.SYS_LISTXATTR:         partial("listxattr", Listxattr, "lists are empty"),
		unix.SYS_LLISTXATTR:        partial("llistxattr", Llistxattr, "lists are empty"),
		unix.SYS_FLISTXATTR:        partial("flistxattr", Flistxattr, "lists are empty"),
		unix.SYS_SETXATTR:          partial("setxattr", Setxattr, "EROFS on the read-only root"),
		unix.SYS_LSETXATTR:         partial("lsetxattr", Lsetxattr, "EROFS on the read-only root"),
		unix.SYS_FSETXATTR:         partial("fsetxattr", Fsetxattr, "EROFS on the read-only root"),
		unix.SYS_REMOVEXATTR:       partial("removexattr", Removexattr, "EROFS on the read-only root"),
		unix.SYS_LREMOVEXATTR:      partial("lremovexattr", Lremovexattr, "EROFS on the read-only root"),
		unix.SYS_FREMOVEXATTR:      partial("fremovexattr", Fremovexattr, "EROFS on the read-only root"),
		unix.SYS_SENDFILE:          partial("sendfile", Sendfile, "copies through a Sentry buffer"),
		unix.SYS_SPLICE:            partial("splice", Splice, "one buffer per call between a file and a pipe"),
		unix.SYS_TEE:               full("tee", Tee),
		unix.SYS_MLOCK2:            full("mlock2", Mlock2),
		unix.SYS_RSEQ:              unimplemented("rseq", unix.ENOSYS, "restartable sequences need preemption notification"),
		unix.SYS_PTRACE:            unimplemented("ptrace", unix.EPERM, "debugging inside the sandbox is not supported"),
		unix.SYS_IO_URING_SETUP:    unimplemented("io_uring_setup", unix.ENOSYS, ""),
		unix.SYS_SECCOMP:           partial("seccomp", Seccomp, "SECCOMP_FILTER_FLAG_NEW_LISTENER (user notification) is refused with EINVAL and SECCOMP_RET_USER_NOTIF reported unavailable; SECCOMP_RET_TRACE gives ENOSYS as no tracer can attach"),
		unix.SYS_BPF:               unimplemented("bpf", unix.EPERM, ""),
		unix.SYS_PERF_EVENT_OPEN:   unimplemented("perf_event_open", unix.ENODEV, ""),
		unix.SYS_MOUNT:             partial("mount", Mount, "in the caller's mount namespace: new tmpfs, proc and sysfs instances, bind mounts (MS_REC too), remounts of per-mount flags, MS_MOVE, propagation types (shared, slave, private, unbindable; mounts and unmounts reach peers and slaves, no propagate_from); other types ENODEV"),
		unix.SYS_UMOUNT2:           partial("umount2", Umount2, "open files never make a mount busy (every unmount is lazy); MNT_EXPIRE gives EAGAIN"),
		unix.SYS_PIVOT_ROOT:        full("pivot_root", PivotRoot),
		unix.SYS_INIT_MODULE:       unimplemented("init_module", unix.EPERM, ""),
		unix.SYS_FINIT_MODULE:      unimplemented("finit_module", unix.EPERM, ""),
		unix.SYS_DELETE_MODULE:     unimplemented("delete_module", unix.EPERM, ""),
		unix.SYS_KEXEC_LOAD:        unimplemented("kexec_load", unix.EPERM, ""),
		unix.SYS_SWAPON:            unimplemented("swapon", unix.EPERM, ""),
		unix.SYS_SWAPOFF:           unimplemented("swapoff", unix.EPERM, ""),
		unix.SYS_IOPL:              unimplemented("iopl", unix.EPERM, ""),
		unix.SYS_IOPERM:            unimplemented("ioperm", unix.EPERM, ""),
		unix.SYS_USERFAULTFD:       unimplemented("userfaultfd", unix.ENOSYS, ""),
	}
}
