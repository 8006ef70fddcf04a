package gofer

// Syscalls lists the host syscalls the gofer makes once it serves, for
// generating its seccomp allowlist (runsc/isolate). It covers this package,
// gofer/proto's transport and the Go poller work on the connections;
// the Go runtime's own needs (futex, mmap, munmap, madvise, clone,
// rt_sigaction, rt_sigprocmask, rt_sigreturn, sigaltstack, sched_yield,
// nanosleep, tgkill, getpid, gettid, exit, exit_group, ...) come on top.
// Confine runs before the filter is installed and is not listed (it uses
// mount, chdir, pivot_root, umount2, stat, readlinkat, getppid).
//
// Arguments worth pinning in the filter: openat only with O_PATH or
// O_RDONLY access (never O_WRONLY/O_RDWR/O_CREAT/O_TRUNC); socketpair only
// AF_UNIX/SOCK_SEQPACKET; fcntl only F_GETFL/F_SETFL.
var Syscalls = []string{
	// Serving files.
	"openat",     // walk (O_PATH|O_NOFOLLOW), reopen for reading, the root at start
	"newfstatat", // stat of a node (AT_EMPTY_PATH), d_type fallback
	"readlinkat", // readlink of a node (empty path)
	"getdents64", // directory pages
	"lseek",      // directory page cookies
	"fstatfs",    // statfs
	"fcntl",      // clearing O_NONBLOCK on donated fds; F_GETFL/F_SETFL on sockets
	"close",
	// Connections.
	"recvmsg",
	"sendmsg",
	"socketpair", // Tdup
	"getsockopt", // SO_TYPE check of a connection
	// The Go poller, which parks goroutines waiting on the sockets.
	"epoll_create1",
	"epoll_ctl",
	"epoll_pwait",
	"eventfd2",
}
