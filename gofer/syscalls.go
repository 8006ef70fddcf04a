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
// AF_UNIX/SOCK_SEQPACKET; fcntl only F_GETFL/F_SETFL. A read-write server
// also makes the calls in WriteSyscalls.
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
	// Read-only requests a read-only server serves too: Tgetxattr,
	// Tlistxattr, Tfsync and Tconnect (see write.go).
	"fgetxattr",
	"flistxattr",
	"fsync",
	"fdatasync",
	"socket", // AF_UNIX, for connect (and bind on a read-write server)
	"connect",
	"fchdir", // into the socket's directory and back
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

// WriteSyscalls lists the host syscalls a read-write server makes on top
// of Syscalls. Arguments worth pinning: socket only AF_UNIX; the *at calls
// that take flags never without AT_SYMLINK_NOFOLLOW where it exists
// (fchownat, utimensat); openat may now create and open for writing, but
// always with O_NOFOLLOW.
var WriteSyscalls = []string{
	"mkdirat",
	"mknodat", // FIFOs, sockets, regular files (never devices)
	"symlinkat",
	"linkat",
	"unlinkat",
	"renameat2",
	"fchownat",  // owner through the O_PATH fd (AT_EMPTY_PATH)
	"fchmodat2", // mode through the O_PATH fd (Linux 6.6+)
	"fchmodat",  // a socket's mode by name, without fchmodat2
	"fchmod",    // mode through a reopened fd, without fchmodat2
	"utimensat", // times through the O_PATH fd (AT_EMPTY_PATH)
	"ftruncate", // setattr size, O_TRUNC
	"fallocate",
	"fstat", // identity check of a created file's fd
	"fsetxattr",
	"fremovexattr",
	"bind",
}
