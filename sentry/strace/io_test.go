package strace

import (
	"testing"

	"golang.org/x/sys/unix"
)

func TestTime(t *testing.T) {
	runCases(t, []lineCase{
		{
			name: "clock_nanosleep", sysno: unix.SYS_CLOCK_NANOSLEEP,
			setup: func(m *fakeMem) [6]uintptr { return a(unix.CLOCK_REALTIME, 0, m.u64s(1, 500), 0) },
			ret:   0,
			exit:  `clock_nanosleep(CLOCK_REALTIME, 0, {tv_sec=1, tv_nsec=500}, NULL) = 0`,
		},
		{
			name: "clock_nanosleep abstime", sysno: unix.SYS_CLOCK_NANOSLEEP,
			setup: func(m *fakeMem) [6]uintptr {
				return a(unix.CLOCK_REALTIME, unix.TIMER_ABSTIME, m.u64s(500, 717235699), 0)
			},
			ret:  0,
			exit: `clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, {tv_sec=500, tv_nsec=717235699}, NULL) = 0`,
		},
		{
			name: "clock_nanosleep interrupted", sysno: unix.SYS_CLOCK_NANOSLEEP,
			setup: func(m *fakeMem) [6]uintptr {
				return a(unix.CLOCK_REALTIME, 0, m.u64s(3, 0), m.u64s(2, 63775))
			},
			ret:  neg(516),
			exit: `clock_nanosleep(CLOCK_REALTIME, 0, {tv_sec=3, tv_nsec=0}, {tv_sec=2, tv_nsec=63775}) = ? ERESTART_RESTARTBLOCK (Interrupted by signal)`,
		},
		{
			name: "nanosleep done", sysno: unix.SYS_NANOSLEEP,
			setup: func(m *fakeMem) [6]uintptr { return a(m.u64s(0, 1000), 0x7fff0000) },
			ret:   0,
			exit:  `nanosleep({tv_sec=0, tv_nsec=1000}, 0x7fff0000) = 0`,
		},
		{
			name: "nanosleep invalid", sysno: unix.SYS_NANOSLEEP,
			setup: func(m *fakeMem) [6]uintptr { return a(m.u64s(^uint64(0), 1000000000), 0) },
			ret:   neg(unix.EINVAL),
			exit:  `nanosleep({tv_sec=-1, tv_nsec=1000000000}, NULL) = -1 EINVAL (Invalid argument)`,
		},
		{
			name: "nanosleep fault", sysno: unix.SYS_NANOSLEEP,
			setup: fixed(a(0x10, 0)),
			ret:   neg(unix.EFAULT),
			exit:  `nanosleep(0x10, NULL) = -1 EFAULT (Bad address)`,
		},
		{
			name: "clock_gettime", sysno: unix.SYS_CLOCK_GETTIME,
			setup: func(m *fakeMem) [6]uintptr { return a(unix.CLOCK_MONOTONIC, m.u64s(500, 717235699)) },
			ret:   0,
			entry: `clock_gettime(CLOCK_MONOTONIC, 0x10000)`,
			exit:  `clock_gettime(CLOCK_MONOTONIC, {tv_sec=500, tv_nsec=717235699}) = 0`,
		},
		{
			name: "clock_gettime unknown clock", sysno: unix.SYS_CLOCK_GETTIME,
			setup: fixed(a(0xfffffffe, 0)),
			ret:   neg(unix.EFAULT),
			exit:  `clock_gettime(0xfffffffe /* CLOCK_??? */, NULL) = -1 EFAULT (Bad address)`,
		},
		{
			name: "gettimeofday", sysno: unix.SYS_GETTIMEOFDAY,
			setup: func(m *fakeMem) [6]uintptr { return a(m.u64s(1718030038, 123456), 0) },
			ret:   0,
			exit:  `gettimeofday({tv_sec=1718030038, tv_usec=123456}, NULL) = 0`,
		},
		{
			name: "setitimer", sysno: unix.SYS_SETITIMER,
			setup: func(m *fakeMem) [6]uintptr {
				return a(unix.ITIMER_REAL, m.u64s(1, 2, 3, 4), m.u64s(0, 0, 0, 0))
			},
			ret:  0,
			exit: `setitimer(ITIMER_REAL, {it_interval={tv_sec=1, tv_usec=2}, it_value={tv_sec=3, tv_usec=4}}, {it_interval={tv_sec=0, tv_usec=0}, it_value={tv_sec=0, tv_usec=0}}) = 0`,
		},
		{
			name: "timerfd_create", sysno: unix.SYS_TIMERFD_CREATE,
			setup: fixed(a(unix.CLOCK_MONOTONIC, unix.TFD_CLOEXEC|unix.TFD_NONBLOCK)),
			ret:   8,
			exit:  `timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC|TFD_NONBLOCK) = 8`,
		},
		{
			name: "timerfd_settime", sysno: unix.SYS_TIMERFD_SETTIME,
			setup: func(m *fakeMem) [6]uintptr { return a(8, unix.TFD_TIMER_ABSTIME, m.u64s(0, 0, 1, 0), 0) },
			ret:   0,
			exit:  `timerfd_settime(8, TFD_TIMER_ABSTIME, {it_interval={tv_sec=0, tv_nsec=0}, it_value={tv_sec=1, tv_nsec=0}}, NULL) = 0`,
		},
		{
			name: "timerfd_gettime", sysno: unix.SYS_TIMERFD_GETTIME,
			setup: func(m *fakeMem) [6]uintptr { return a(8, m.u64s(0, 0, 0, 999945667)) },
			ret:   0,
			exit:  `timerfd_gettime(8, {it_interval={tv_sec=0, tv_nsec=0}, it_value={tv_sec=0, tv_nsec=999945667}}) = 0`,
		},
		{
			name: "alarm", sysno: unix.SYS_ALARM,
			setup: fixed(a(1)),
			ret:   0,
			exit:  `alarm(1) = 0`,
		},
	})
}

func TestMultiplex(t *testing.T) {
	pollfds := func(m *fakeMem, fds ...[3]uint64) uint64 {
		b := &builder{}
		for _, f := range fds {
			b.u32(uint32(f[0])).u16(uint16(f[1])).u16(uint16(f[2]))
		}
		return m.put(b.b)
	}
	epollEvents := func(m *fakeMem, evs ...[2]uint64) uint64 {
		b := &builder{}
		for _, e := range evs {
			b.u32(uint32(e[0])).u64(e[1])
		}
		return m.put(b.b)
	}
	runCases(t, []lineCase{
		{
			name: "poll ready", sysno: unix.SYS_POLL,
			setup: func(m *fakeMem) [6]uintptr {
				return a(pollfds(m, [3]uint64{6, unix.POLLIN, 0}, [3]uint64{1, unix.POLLOUT | unix.POLLPRI, unix.POLLOUT}), 2, 0)
			},
			ret:   1,
			entry: `poll([{fd=6, events=POLLIN}, {fd=1, events=POLLPRI|POLLOUT}], 2, 0)`,
			exit:  `poll([{fd=6, events=POLLIN}, {fd=1, events=POLLPRI|POLLOUT}], 2, 0) = 1 ([{fd=1, revents=POLLOUT}])`,
		},
		{
			name: "poll timeout", sysno: unix.SYS_POLL,
			setup: func(m *fakeMem) [6]uintptr { return a(pollfds(m, [3]uint64{6, unix.POLLIN, 0}), 1, 10) },
			ret:   0,
			exit:  `poll([{fd=6, events=POLLIN}], 1, 10) = 0 (Timeout)`,
		},
		{
			name: "ppoll", sysno: unix.SYS_PPOLL,
			setup: func(m *fakeMem) [6]uintptr {
				return a(pollfds(m, [3]uint64{3, unix.POLLIN | 0x40, unix.POLLIN | 0x40}), 1, m.u64s(0, 0), m.u64s(1), 8)
			},
			ret:  1,
			exit: `ppoll([{fd=3, events=POLLIN|POLLRDNORM}], 1, {tv_sec=0, tv_nsec=0}, [HUP], 8) = 1 ([{fd=3, revents=POLLIN|POLLRDNORM}], left {tv_sec=0, tv_nsec=0})`,
		},
		{
			name: "ppoll no timeout", sysno: unix.SYS_PPOLL,
			setup: func(m *fakeMem) [6]uintptr {
				return a(pollfds(m, [3]uint64{3, unix.POLLIN, unix.POLLIN}), 1, 0, 0, 8)
			},
			ret:  1,
			exit: `ppoll([{fd=3, events=POLLIN}], 1, NULL, NULL, 8) = 1 ([{fd=3, revents=POLLIN}])`,
		},
		{
			name: "pselect6", sysno: unix.SYS_PSELECT6,
			setup: func(m *fakeMem) [6]uintptr {
				return a(4, m.u64s(1<<0|1<<3), m.u64s(1<<1), 0, m.u64s(0, 97735), 0)
			},
			ret:  3,
			exit: `pselect6(4, [0 3], [1], NULL, {tv_sec=0, tv_nsec=97735}, NULL) = 3 (in [0 3], out [1], left {tv_sec=0, tv_nsec=97735})`,
		},
		{
			name: "pselect6 timeout", sysno: unix.SYS_PSELECT6,
			setup: func(m *fakeMem) [6]uintptr {
				return a(5, m.u64s(0), 0, 0, m.u64s(0, 0), m.u64s(m.u64s(1), 8))
			},
			ret:  0,
			exit: `pselect6(5, [], NULL, NULL, {tv_sec=0, tv_nsec=0}, {sigmask=[HUP], sigsetsize=8}) = 0 (Timeout)`,
		},
		{
			name: "select", sysno: unix.SYS_SELECT,
			setup: func(m *fakeMem) [6]uintptr { return a(5, m.u64s(1<<4), 0, 0, m.u64s(1, 5)) },
			ret:   1,
			exit:  `select(5, [4], NULL, NULL, {tv_sec=1, tv_usec=5}) = 1 (in [4], left {tv_sec=1, tv_usec=5})`,
		},
		{
			name: "select ignores bits past nfds", sysno: unix.SYS_SELECT,
			setup: func(m *fakeMem) [6]uintptr { return a(2, m.u64s(0xff), 0, 0, 0) },
			entry: `select(2, [0 1], NULL, NULL, NULL)`,
		},
		{
			name: "epoll_create1", sysno: unix.SYS_EPOLL_CREATE1,
			setup: fixed(a(unix.EPOLL_CLOEXEC)),
			ret:   8,
			exit:  `epoll_create1(EPOLL_CLOEXEC) = 8`,
		},
		{
			name: "epoll_ctl", sysno: unix.SYS_EPOLL_CTL,
			setup: func(m *fakeMem) [6]uintptr {
				return a(5, unix.EPOLL_CTL_ADD, 3, epollEvents(m, [2]uint64{unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLEXCLUSIVE | unix.EPOLLWAKEUP | unix.EPOLLONESHOT, 0x100000007}))
			},
			ret:  neg(unix.EINVAL),
			exit: `epoll_ctl(5, EPOLL_CTL_ADD, 3, {events=EPOLLIN|EPOLLOUT|EPOLLRDHUP|EPOLLEXCLUSIVE|EPOLLWAKEUP|EPOLLONESHOT, data={u32=7, u64=4294967303}}) = -1 EINVAL (Invalid argument)`,
		},
		{
			name: "epoll_ctl edge", sysno: unix.SYS_EPOLL_CTL,
			setup: func(m *fakeMem) [6]uintptr {
				return a(8, unix.EPOLL_CTL_ADD, 1, epollEvents(m, [2]uint64{unix.EPOLLIN | 1<<31, 7}))
			},
			ret:  neg(unix.EPERM),
			exit: `epoll_ctl(8, EPOLL_CTL_ADD, 1, {events=EPOLLIN|EPOLLET, data={u32=7, u64=7}}) = -1 EPERM (Operation not permitted)`,
		},
		{
			name: "epoll_ctl bad op", sysno: unix.SYS_EPOLL_CTL,
			setup: fixed(a(100, 99, 5, 0)),
			ret:   neg(unix.EFAULT),
			exit:  `epoll_ctl(100, 0x63 /* EPOLL_CTL_??? */, 5, NULL) = -1 EFAULT (Bad address)`,
		},
		{
			name: "epoll_wait", sysno: unix.SYS_EPOLL_WAIT,
			setup: func(m *fakeMem) [6]uintptr {
				return a(5, epollEvents(m, [2]uint64{unix.EPOLLIN, 0x100000007}, [2]uint64{0, 0}), 4, 0xffffffff)
			},
			ret:   1,
			entry: `epoll_wait(5, 0x10000, 4, -1)`,
			exit:  `epoll_wait(5, [{events=EPOLLIN, data={u32=7, u64=4294967303}}], 4, -1) = 1`,
		},
		{
			name: "epoll_wait none", sysno: unix.SYS_EPOLL_WAIT,
			setup: func(m *fakeMem) [6]uintptr { return a(8, m.put(make([]byte, 12)), 1, 0) },
			ret:   0,
			exit:  `epoll_wait(8, [], 1, 0) = 0`,
		},
		{
			name: "epoll_wait interrupted", sysno: unix.SYS_EPOLL_WAIT,
			setup: fixed(a(5, 0x7ffe6dcc4900, 4, 0xffffffff)),
			ret:   neg(unix.EINTR),
			exit:  `epoll_wait(5, 0x7ffe6dcc4900, 4, -1) = -1 EINTR (Interrupted system call)`,
		},
		{
			name: "epoll_pwait", sysno: unix.SYS_EPOLL_PWAIT,
			setup: func(m *fakeMem) [6]uintptr {
				return a(5, epollEvents(m, [2]uint64{unix.EPOLLIN, 0x100000007}), 4, 0, m.u64s(1), 8)
			},
			ret:  1,
			exit: `epoll_pwait(5, [{events=EPOLLIN, data={u32=7, u64=4294967303}}], 4, 0, [HUP], 8) = 1`,
		},
		{
			name: "eventfd2", sysno: unix.SYS_EVENTFD2,
			setup: fixed(a(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)),
			ret:   9,
			exit:  `eventfd2(0, EFD_CLOEXEC|EFD_NONBLOCK) = 9`,
		},
		{
			name: "inotify_init1", sysno: unix.SYS_INOTIFY_INIT1,
			setup: fixed(a(unix.IN_NONBLOCK | unix.IN_CLOEXEC)),
			ret:   3,
			exit:  `inotify_init1(IN_NONBLOCK|IN_CLOEXEC) = 3`,
		},
	})
}

func TestVectors(t *testing.T) {
	iov := func(m *fakeMem, bufs ...[]byte) uint64 {
		b := &builder{}
		for _, x := range bufs {
			b.u64(m.put(x)).u64(uint64(len(x)))
		}
		return m.put(b.b)
	}
	runCases(t, []lineCase{
		{
			name: "writev", sysno: unix.SYS_WRITEV,
			setup: func(m *fakeMem) [6]uintptr { return a(1, iov(m, []byte("abc"), []byte("de\n")), 2) },
			ret:   6,
			exit:  `writev(1, [{iov_base="abc", iov_len=3}, {iov_base="de\n", iov_len=3}], 2) = 6`,
		},
		{
			name: "readv partial", sysno: unix.SYS_READV,
			setup: func(m *fakeMem) [6]uintptr {
				return a(3, iov(m, []byte("vm\n\x00"), make([]byte, 100)), 2)
			},
			ret:   3,
			entry: `readv(3, [{iov_base=0x10000, iov_len=4}, {iov_base=0x12000, iov_len=100}], 2)`,
			exit:  `readv(3, [{iov_base="vm\n", iov_len=4}, {iov_base="", iov_len=100}], 2) = 3`,
		},
		{
			name: "readv spread", sysno: unix.SYS_READV,
			setup: func(m *fakeMem) [6]uintptr {
				return a(3, iov(m, []byte("abc"), []byte("defgh\x00\x00")), 2)
			},
			ret:  8,
			exit: `readv(3, [{iov_base="abc", iov_len=3}, {iov_base="defgh", iov_len=7}], 2) = 8`,
		},
		{
			name: "readv empty", sysno: unix.SYS_READV,
			setup: fixed(a(3, 0x1000, 0)),
			ret:   0,
			exit:  `readv(3, [], 0) = 0`,
		},
		{
			name: "preadv error", sysno: unix.SYS_PREADV,
			setup: func(m *fakeMem) [6]uintptr { return a(3, iov(m, []byte("abc"), []byte("defgh\x00\x00")), 2, 0) },
			ret:   neg(unix.ESPIPE),
			exit:  `preadv(3, [{iov_base=0x10000, iov_len=3}, {iov_base=0x12000, iov_len=7}], 2, 0) = -1 ESPIPE (Illegal seek)`,
		},
		{
			name: "pwritev2 skips the high offset", sysno: unix.SYS_PWRITEV2,
			setup: func(m *fakeMem) [6]uintptr { return a(4, iov(m, []byte("abc")), 1, 5, 0, 0x4) },
			ret:   3,
			exit:  `pwritev2(4, [{iov_base="abc", iov_len=3}], 1, 5, 0x4) = 3`,
		},
		{
			name: "writev bad element", sysno: unix.SYS_WRITEV,
			setup: func(m *fakeMem) [6]uintptr { return a(1, iov(m, []byte("abc")), 2) },
			ret:   neg(unix.EFAULT),
			exit:  `writev(1, [{iov_base="abc", iov_len=3}, 0x12010], 2) = -1 EFAULT (Bad address)`,
		},
		{
			name: "pipe", sysno: unix.SYS_PIPE,
			setup: func(m *fakeMem) [6]uintptr { return a(m.u32s(3, 4)) },
			ret:   0,
			entry: `pipe(0x10000)`,
			exit:  `pipe([3, 4]) = 0`,
		},
		{
			name: "pipe2", sysno: unix.SYS_PIPE2,
			setup: func(m *fakeMem) [6]uintptr { return a(m.u32s(6, 7), unix.O_CLOEXEC|unix.O_NONBLOCK) },
			ret:   0,
			exit:  `pipe2([6, 7], O_NONBLOCK|O_CLOEXEC) = 0`,
		},
		{
			name: "pipe2 no flags", sysno: unix.SYS_PIPE2,
			setup: func(m *fakeMem) [6]uintptr { return a(m.u32s(4, 5), 0) },
			ret:   0,
			exit:  `pipe2([4, 5], 0) = 0`,
		},
	})
}

func TestNet(t *testing.T) {
	sockaddrIn := func(m *fakeMem, port uint16, ip [4]byte) uint64 {
		b := (&builder{}).u16(unix.AF_INET).u8(byte(port >> 8)).u8(byte(port)).bytes(ip[:]).at(16)
		return m.put(b.b)
	}
	runCases(t, []lineCase{
		{
			name: "socket inet", sysno: unix.SYS_SOCKET,
			setup: fixed(a(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)),
			ret:   9,
			exit:  `socket(AF_INET, SOCK_STREAM|SOCK_CLOEXEC, IPPROTO_IP) = 9`,
		},
		{
			name: "socket both flags", sysno: unix.SYS_SOCKET,
			setup: fixed(a(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)),
			ret:   4,
			exit:  `socket(AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC|SOCK_NONBLOCK, 0) = 4`,
		},
		{
			name: "socket raw6", sysno: unix.SYS_SOCKET,
			setup: fixed(a(unix.AF_INET6, unix.SOCK_RAW, 255)),
			ret:   13,
			exit:  `socket(AF_INET6, SOCK_RAW, IPPROTO_RAW) = 13`,
		},
		{
			name: "socket netlink", sysno: unix.SYS_SOCKET,
			setup: fixed(a(unix.AF_NETLINK, unix.SOCK_RAW, 0)),
			ret:   3,
			exit:  `socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE) = 3`,
		},
		{
			name: "socket unknown", sysno: unix.SYS_SOCKET,
			setup: fixed(a(99, 99, 99)),
			ret:   neg(unix.EINVAL),
			exit:  `socket(0x63 /* AF_??? */, SOCK_RAW|0x60 /* SOCK_??? */, 99) = -1 EINVAL (Invalid argument)`,
		},
		{
			name: "bind unix", sysno: unix.SYS_BIND,
			setup: func(m *fakeMem) [6]uintptr {
				b := (&builder{}).u16(unix.AF_UNIX).bytes([]byte("/tmp/sock")).at(110)
				return a(3, m.put(b.b), 110)
			},
			ret:  0,
			exit: `bind(3, {sa_family=AF_UNIX, sun_path="/tmp/sock"}, 110) = 0`,
		},
		{
			name: "connect abstract", sysno: unix.SYS_CONNECT,
			setup: func(m *fakeMem) [6]uintptr {
				b := (&builder{}).u16(unix.AF_UNIX).u8(0).bytes([]byte("x\x00y"))
				return a(3, m.put(b.b), 6)
			},
			ret:  neg(unix.ECONNREFUSED),
			exit: `connect(3, {sa_family=AF_UNIX, sun_path=@"x\0y"}, 6) = -1 ECONNREFUSED (Connection refused)`,
		},
		{
			name: "bind inet", sysno: unix.SYS_BIND,
			setup: func(m *fakeMem) [6]uintptr { return a(4, sockaddrIn(m, 8080, [4]byte{127, 0, 0, 1}), 16) },
			ret:   0,
			exit:  `bind(4, {sa_family=AF_INET, sin_port=htons(8080), sin_addr=inet_addr("127.0.0.1")}, 16) = 0`,
		},
		{
			name: "connect inet6", sysno: unix.SYS_CONNECT,
			setup: func(m *fakeMem) [6]uintptr {
				b := (&builder{}).u16(unix.AF_INET6).u8(1).u8(0xbb).u32(0).at(23).u8(1).u32(0)
				return a(7, m.put(b.b), 28)
			},
			ret:  neg(unix.ECONNREFUSED),
			exit: `connect(7, {sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "::1", &sin6_addr), sin6_scope_id=0}, 28) = -1 ECONNREFUSED (Connection refused)`,
		},
		{
			name: "sendto", sysno: unix.SYS_SENDTO,
			setup: func(m *fakeMem) [6]uintptr {
				return a(4, m.put([]byte("ping")), 4, unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL, sockaddrIn(m, 8080, [4]byte{127, 0, 0, 1}), 16)
			},
			ret:  4,
			exit: `sendto(4, "ping", 4, MSG_DONTWAIT|MSG_NOSIGNAL, {sa_family=AF_INET, sin_port=htons(8080), sin_addr=inet_addr("127.0.0.1")}, 16) = 4`,
		},
		{
			name: "recvfrom", sysno: unix.SYS_RECVFROM,
			setup: func(m *fakeMem) [6]uintptr {
				return a(4, m.put([]byte("ping....")), 64, 0, sockaddrIn(m, 8080, [4]byte{127, 0, 0, 1}), m.u32s(16))
			},
			ret:   4,
			entry: `recvfrom(4, 0x10000, 64, 0, 0x12000, [16])`,
			exit:  `recvfrom(4, "ping", 64, 0, {sa_family=AF_INET, sin_port=htons(8080), sin_addr=inet_addr("127.0.0.1")}, [16]) = 4`,
		},
		{
			name: "getsockname", sysno: unix.SYS_GETSOCKNAME,
			setup: func(m *fakeMem) [6]uintptr {
				return a(4, sockaddrIn(m, 8080, [4]byte{127, 0, 0, 1}), m.u32s(16))
			},
			ret:  0,
			exit: `getsockname(4, {sa_family=AF_INET, sin_port=htons(8080), sin_addr=inet_addr("127.0.0.1")}, [16]) = 0`,
		},
		{
			name: "setsockopt", sysno: unix.SYS_SETSOCKOPT,
			setup: func(m *fakeMem) [6]uintptr { return a(4, unix.SOL_SOCKET, unix.SO_REUSEADDR, m.u32s(1), 4) },
			ret:   0,
			exit:  `setsockopt(4, SOL_SOCKET, SO_REUSEADDR, [1], 4) = 0`,
		},
		{
			name: "setsockopt tcp", sysno: unix.SYS_SETSOCKOPT,
			setup: func(m *fakeMem) [6]uintptr { return a(4, unix.IPPROTO_TCP, unix.TCP_NODELAY, m.u32s(1), 4) },
			ret:   0,
			exit:  `setsockopt(4, SOL_TCP, TCP_NODELAY, [1], 4) = 0`,
		},
		{
			name: "getsockopt", sysno: unix.SYS_GETSOCKOPT,
			setup: func(m *fakeMem) [6]uintptr { return a(4, unix.SOL_SOCKET, unix.SO_TYPE, m.u32s(2), m.u32s(4)) },
			ret:   0,
			exit:  `getsockopt(4, SOL_SOCKET, SO_TYPE, [2], [4]) = 0`,
		},
		{
			name: "listen", sysno: unix.SYS_LISTEN,
			setup: fixed(a(3, 128)),
			ret:   0,
			exit:  `listen(3, 128) = 0`,
		},
		{
			name: "shutdown", sysno: unix.SYS_SHUTDOWN,
			setup: fixed(a(3, unix.SHUT_RDWR)),
			ret:   0,
			exit:  `shutdown(3, SHUT_RDWR) = 0`,
		},
		{
			name: "accept4", sysno: unix.SYS_ACCEPT4,
			setup: fixed(a(3, 0, 0, unix.SOCK_CLOEXEC)),
			ret:   neg(unix.EINVAL),
			exit:  `accept4(3, NULL, NULL, SOCK_CLOEXEC) = -1 EINVAL (Invalid argument)`,
		},
		{
			name: "socketpair", sysno: unix.SYS_SOCKETPAIR,
			setup: func(m *fakeMem) [6]uintptr { return a(unix.AF_UNIX, unix.SOCK_STREAM, 0, m.u32s(5, 6)) },
			ret:   0,
			exit:  `socketpair(AF_UNIX, SOCK_STREAM, 0, [5, 6]) = 0`,
		},
		{
			name: "sendmsg", sysno: unix.SYS_SENDMSG,
			setup: func(m *fakeMem) [6]uintptr {
				iov := (&builder{}).u64(m.put([]byte("hello"))).u64(5)
				mh := (&builder{}).u64(0).u32(0).at(16).u64(m.put(iov.b)).u64(1).u64(0).u64(0).u32(0).at(56)
				return a(5, m.put(mh.b), 0)
			},
			ret:  5,
			exit: `sendmsg(5, {msg_name=NULL, msg_namelen=0, msg_iov=[{iov_base="hello", iov_len=5}], msg_iovlen=1, msg_controllen=0, msg_flags=0}, 0) = 5`,
		},
		{
			name: "recvmsg", sysno: unix.SYS_RECVMSG,
			setup: func(m *fakeMem) [6]uintptr {
				iov := (&builder{}).u64(m.put([]byte("hello\x00\x00\x00\x00\x00"))).u64(10)
				mh := (&builder{}).u64(0).u32(0).at(16).u64(m.put(iov.b)).u64(1).u64(0).u64(0).u32(0).at(56)
				return a(6, m.put(mh.b), unix.MSG_DONTWAIT)
			},
			ret:   5,
			entry: `recvmsg(6, {msg_namelen=0}, MSG_DONTWAIT)`,
			exit:  `recvmsg(6, {msg_name=NULL, msg_namelen=0, msg_iov=[{iov_base="hello", iov_len=10}], msg_iovlen=1, msg_controllen=0, msg_flags=0}, MSG_DONTWAIT) = 5`,
		},
		{
			name: "recvmsg error", sysno: unix.SYS_RECVMSG,
			setup: func(m *fakeMem) [6]uintptr { return a(0, m.put(make([]byte, 56)), unix.MSG_DONTWAIT) },
			ret:   neg(unix.ENOTSOCK),
			exit:  `recvmsg(0, {msg_namelen=0}, MSG_DONTWAIT) = -1 ENOTSOCK (Socket operation on non-socket)`,
		},
	})
}

func TestControl(t *testing.T) {
	runCases(t, []lineCase{
		{
			name: "fcntl getfl", sysno: unix.SYS_FCNTL,
			setup: fixed(a(3, unix.F_GETFL)),
			ret:   0x8000,
			exit:  `fcntl(3, F_GETFL) = 0x8000 (flags O_RDONLY|O_LARGEFILE)`,
		},
		{
			name: "fcntl setfl", sysno: unix.SYS_FCNTL,
			setup: fixed(a(3, unix.F_SETFL, unix.O_NONBLOCK|unix.O_APPEND)),
			ret:   0,
			exit:  `fcntl(3, F_SETFL, O_RDONLY|O_APPEND|O_NONBLOCK) = 0`,
		},
		{
			name: "fcntl setfd", sysno: unix.SYS_FCNTL,
			setup: fixed(a(0, unix.F_SETFD, 5)),
			ret:   0,
			exit:  `fcntl(0, F_SETFD, FD_CLOEXEC|0x4) = 0`,
		},
		{
			name: "fcntl getfd set", sysno: unix.SYS_FCNTL,
			setup: fixed(a(8, unix.F_GETFD)),
			ret:   1,
			exit:  `fcntl(8, F_GETFD) = 0x1 (flags FD_CLOEXEC)`,
		},
		{
			name: "fcntl getfd clear", sysno: unix.SYS_FCNTL,
			setup: fixed(a(8, unix.F_GETFD)),
			ret:   0,
			exit:  `fcntl(8, F_GETFD) = 0`,
		},
		{
			name: "fcntl dupfd", sysno: unix.SYS_FCNTL,
			setup: fixed(a(3, unix.F_DUPFD_CLOEXEC, 10)),
			ret:   11,
			exit:  `fcntl(3, F_DUPFD_CLOEXEC, 10) = 11`,
		},
		{
			name: "fcntl getlk", sysno: unix.SYS_FCNTL,
			setup: func(m *fakeMem) [6]uintptr {
				b := (&builder{}).u16(unix.F_UNLCK).u16(0).at(32)
				return a(8, unix.F_GETLK, m.put(b.b))
			},
			ret:  0,
			exit: `fcntl(8, F_GETLK, {l_type=F_UNLCK, l_whence=SEEK_SET, l_start=0, l_len=0, l_pid=0}) = 0`,
		},
		{
			name: "fcntl setlk", sysno: unix.SYS_FCNTL,
			setup: func(m *fakeMem) [6]uintptr {
				b := (&builder{}).u16(unix.F_WRLCK).u16(1).at(8).u64(10).u64(20).at(32)
				return a(8, unix.F_SETLK, m.put(b.b))
			},
			ret:  0,
			exit: `fcntl(8, F_SETLK, {l_type=F_WRLCK, l_whence=SEEK_CUR, l_start=10, l_len=20}) = 0`,
		},
		{
			name: "fcntl setlk NULL", sysno: unix.SYS_FCNTL,
			setup: fixed(a(0, unix.F_SETLK, 0)),
			ret:   neg(unix.EFAULT),
			exit:  `fcntl(0, F_SETLK, NULL) = -1 EFAULT (Bad address)`,
		},
		{
			name: "fcntl unknown", sysno: unix.SYS_FCNTL,
			setup: fixed(a(0, 1234, 5)),
			ret:   neg(unix.EINVAL),
			exit:  `fcntl(0, 0x4d2 /* F_??? */, 0x5) = -1 EINVAL (Invalid argument)`,
		},
		{
			name: "ioctl TCGETS", sysno: unix.SYS_IOCTL,
			setup: func(m *fakeMem) [6]uintptr {
				b := (&builder{}).u32(unix.ICRNL | unix.IXON).u32(unix.OPOST | unix.ONLCR).u32(unix.B38400 | unix.CS8 | unix.CREAD).
					u32(unix.ISIG | unix.ICANON | unix.ECHO | unix.ECHOE | unix.ECHOK | unix.IEXTEN | unix.ECHOCTL | unix.ECHOKE).at(36)
				return a(0, unix.TCGETS, m.put(b.b))
			},
			ret:   0,
			entry: `ioctl(0, TCGETS, 0x10000)`,
			exit:  `ioctl(0, TCGETS, {c_iflag=ICRNL|IXON, c_oflag=NL0|CR0|TAB0|BS0|VT0|FF0|OPOST|ONLCR, c_cflag=B38400|CS8|CREAD, c_lflag=ISIG|ICANON|ECHO|ECHOE|ECHOK|IEXTEN|ECHOCTL|ECHOKE, ...}) = 0`,
		},
		{
			name: "ioctl TCGETS not a tty", sysno: unix.SYS_IOCTL,
			setup: fixed(a(0, unix.TCGETS, 0x7ffdfdd4e100)),
			ret:   neg(unix.ENOTTY),
			exit:  `ioctl(0, TCGETS, 0x7ffdfdd4e100) = -1 ENOTTY (Inappropriate ioctl for device)`,
		},
		{
			name: "ioctl TIOCGWINSZ", sysno: unix.SYS_IOCTL,
			setup: func(m *fakeMem) [6]uintptr {
				b := (&builder{}).u16(24).u16(80).u16(0).u16(0)
				return a(1, unix.TIOCGWINSZ, m.put(b.b))
			},
			ret:  0,
			exit: `ioctl(1, TIOCGWINSZ, {ws_row=24, ws_col=80, ws_xpixel=0, ws_ypixel=0}) = 0`,
		},
		{
			name: "ioctl FIONREAD", sysno: unix.SYS_IOCTL,
			setup: func(m *fakeMem) [6]uintptr { return a(3, 0x541b, m.u32s(5)) },
			ret:   0,
			exit:  `ioctl(3, FIONREAD, [5]) = 0`,
		},
		{
			name: "ioctl FIONBIO", sysno: unix.SYS_IOCTL,
			setup: func(m *fakeMem) [6]uintptr { return a(6, 0x5421, m.u32s(1)) },
			ret:   0,
			entry: `ioctl(6, FIONBIO, [1])`,
			exit:  `ioctl(6, FIONBIO, [1]) = 0`,
		},
		{
			name: "ioctl TIOCGPGRP", sysno: unix.SYS_IOCTL,
			setup: func(m *fakeMem) [6]uintptr { return a(0, unix.TIOCGPGRP, m.u32s(6618)) },
			ret:   0,
			exit:  `ioctl(0, TIOCGPGRP, [6618]) = 0`,
		},
		{
			name: "ioctl TIOCSPGRP", sysno: unix.SYS_IOCTL,
			setup: func(m *fakeMem) [6]uintptr { return a(0, unix.TIOCSPGRP, m.u32s(6618)) },
			ret:   0,
			exit:  `ioctl(0, TIOCSPGRP, [6618]) = 0`,
		},
		{
			name: "ioctl TIOCSCTTY", sysno: unix.SYS_IOCTL,
			setup: fixed(a(0, unix.TIOCSCTTY, 0)),
			ret:   neg(unix.EPERM),
			exit:  `ioctl(0, TIOCSCTTY, 0) = -1 EPERM (Operation not permitted)`,
		},
		{
			name: "ioctl FIOCLEX", sysno: unix.SYS_IOCTL,
			setup: fixed(a(0, 0x5451)),
			ret:   0,
			exit:  `ioctl(0, FIOCLEX) = 0`,
		},
		{
			name: "ioctl unknown", sysno: unix.SYS_IOCTL,
			setup: fixed(a(6, 0x12345678, 0)),
			ret:   neg(unix.ENOTTY),
			exit:  `ioctl(6, _IOC(_IOC_NONE, 0x56, 0x78, 0x1234), 0) = -1 ENOTTY (Inappropriate ioctl for device)`,
		},
		{
			name: "ioctl TIOCGPTN", sysno: unix.SYS_IOCTL,
			setup: fixed(a(0, unix.TIOCGPTN, 0x7ffe6dcc4994)),
			ret:   neg(unix.ENOTTY),
			exit:  `ioctl(0, TIOCGPTN, 0x7ffe6dcc4994) = -1 ENOTTY (Inappropriate ioctl for device)`,
		},
		{
			name: "futex wake private", sysno: unix.SYS_FUTEX,
			setup: fixed(a(0x7ffdfdd4df00, futexWake|futexPrivate, 1)),
			ret:   0,
			exit:  `futex(0x7ffdfdd4df00, FUTEX_WAKE_PRIVATE, 1) = 0`,
		},
		{
			name: "futex wait", sysno: unix.SYS_FUTEX,
			setup: fixed(a(0x7ffdfdd4df00, futexWait, 1, 0)),
			ret:   neg(unix.EAGAIN),
			exit:  `futex(0x7ffdfdd4df00, FUTEX_WAIT, 1, NULL) = -1 EAGAIN (Resource temporarily unavailable)`,
		},
		{
			name: "futex wait bitset", sysno: unix.SYS_FUTEX,
			setup: func(m *fakeMem) [6]uintptr {
				return a(0x7ffdfdd4df00, futexWaitBitset|futexClockRealtime, 1, m.u64s(500, 717235699), 0, 0xffffffff)
			},
			ret:  neg(unix.EAGAIN),
			exit: `futex(0x7ffdfdd4df00, FUTEX_WAIT_BITSET|FUTEX_CLOCK_REALTIME, 1, {tv_sec=500, tv_nsec=717235699}, FUTEX_BITSET_MATCH_ANY) = -1 EAGAIN (Resource temporarily unavailable)`,
		},
		{
			name: "futex wait bitset private", sysno: unix.SYS_FUTEX,
			setup: fixed(a(0x1000, futexWaitBitset|futexPrivate, 0, 0, 0, 0xffffffff)),
			ret:   0,
			exit:  `futex(0x1000, FUTEX_WAIT_BITSET_PRIVATE, 0, NULL, FUTEX_BITSET_MATCH_ANY) = 0`,
		},
		{
			name: "futex unknown", sysno: unix.SYS_FUTEX,
			setup: fixed(a(0x1000, 0x7f, 1, 0, 0, 0)),
			ret:   neg(unix.ENOSYS),
			exit:  `futex(0x1000, 0x7f /* FUTEX_??? */, 1, NULL, NULL, 0) = -1 ENOSYS (Function not implemented)`,
		},
		{
			name: "futex wake op", sysno: unix.SYS_FUTEX,
			setup: fixed(a(0x1000, futexWakeOp, 1, 2, 0x2000, 0x12345678)),
			ret:   neg(unix.EFAULT),
			exit:  `futex(0x1000, FUTEX_WAKE_OP, 1, 2, 0x2000, FUTEX_OP_ADD<<28|0x345<<12|FUTEX_OP_CMP_LT<<24|0x678) = -1 EFAULT (Bad address)`,
		},
		{
			name: "futex cmp requeue", sysno: unix.SYS_FUTEX,
			setup: fixed(a(0x1000, futexCmpRequeue|futexPrivate, 1, 2, 0x2000, 7)),
			ret:   neg(unix.EFAULT),
			exit:  `futex(0x1000, FUTEX_CMP_REQUEUE_PRIVATE, 1, 2, 0x2000, 7) = -1 EFAULT (Bad address)`,
		},
		{
			name: "futex requeue", sysno: unix.SYS_FUTEX,
			setup: fixed(a(0x1000, futexRequeue, 1, 2, 0x2000, 7)),
			ret:   neg(unix.EFAULT),
			exit:  `futex(0x1000, FUTEX_REQUEUE, 1, 2, 0x2000) = -1 EFAULT (Bad address)`,
		},
		{
			name: "futex wake bitset", sysno: unix.SYS_FUTEX,
			setup: fixed(a(0x1000, futexWakeBitset, 1, 0, 0, 5)),
			ret:   neg(unix.EFAULT),
			exit:  `futex(0x1000, FUTEX_WAKE_BITSET, 1, 0x5) = -1 EFAULT (Bad address)`,
		},
		{
			name: "futex lock pi", sysno: unix.SYS_FUTEX,
			setup: fixed(a(0x1000, futexLockPI, 1, 0, 0, 5)),
			ret:   neg(unix.EFAULT),
			exit:  `futex(0x1000, FUTEX_LOCK_PI, NULL) = -1 EFAULT (Bad address)`,
		},
	})
}

func TestResults(t *testing.T) {
	runCases(t, []lineCase{
		{
			name: "unknown syscall", sysno: 999,
			setup: fixed(a(1, 2, 3, 0, 0xffffffffffffffff, 0x55603685c09e)),
			ret:   neg(unix.ENOSYS),
			entry: `syscall_0x3e7(0x1, 0x2, 0x3, 0, 0xffffffffffffffff, 0x55603685c09e)`,
			exit:  `syscall_0x3e7(0x1, 0x2, 0x3, 0, 0xffffffffffffffff, 0x55603685c09e) = -1 ENOSYS (Function not implemented)`,
		},
		{
			name: "unassigned number in range", sysno: 400,
			setup: fixed(a()),
			ret:   neg(unix.ENOSYS),
			exit:  `syscall_0x190(0, 0, 0, 0, 0, 0) = -1 ENOSYS (Function not implemented)`,
		},
		{
			name: "restart", sysno: unix.SYS_READ,
			setup: fixed(a(0, 0x1000, 10)),
			ret:   neg(512),
			exit:  `read(0, 0x1000, 10) = ? ERESTARTSYS (To be restarted if SA_RESTART is set)`,
		},
		{
			name: "EOPNOTSUPP", sysno: unix.SYS_FSYNC,
			setup: fixed(a(3)),
			ret:   neg(unix.EOPNOTSUPP),
			exit:  `fsync(3) = -1 EOPNOTSUPP (Operation not supported)`,
		},
		{
			name: "unnamed errno", sysno: unix.SYS_FSYNC,
			setup: fixed(a(3)),
			ret:   neg(4000),
			exit:  `fsync(3) = -1 E??? (errno 4000)`,
		},
		{
			name: "large success", sysno: unix.SYS_LSEEK,
			setup: fixed(a(3, 0, 2)),
			ret:   uintptr(^uint64(0) - 5000),
			exit:  `lseek(3, 0, SEEK_END) = -5001`,
		},
	})
}
