package strace

import (
	"testing"

	"golang.org/x/sys/unix"
)

// a builds an argument array.
func a(v ...uint64) [6]uintptr {
	var r [6]uintptr
	for i, x := range v {
		r[i] = uintptr(x)
	}
	return r
}

type lineCase struct {
	name  string
	sysno uintptr
	// setup stores what the call points to and returns its arguments.
	setup func(m *fakeMem) [6]uintptr
	ret   uintptr
	entry string // expected Entry output; "" skips the check
	exit  string // expected Exit output; "" skips the check
}

func runCases(t *testing.T, cases []lineCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newMem()
			args := c.setup(m)
			if c.entry != "" {
				if got := Entry(m, c.sysno, args); got != c.entry {
					t.Errorf("Entry:\n got %s\nwant %s", got, c.entry)
				}
			}
			if c.exit != "" {
				if got := Exit(m, c.sysno, args, c.ret); got != c.exit {
					t.Errorf("Exit:\n got %s\nwant %s", got, c.exit)
				}
			}
		})
	}
}

func fixed(args [6]uintptr) func(*fakeMem) [6]uintptr {
	return func(*fakeMem) [6]uintptr { return args }
}

func TestFiles(t *testing.T) {
	runCases(t, []lineCase{
		{
			name: "openat", sysno: unix.SYS_OPENAT,
			setup: func(m *fakeMem) [6]uintptr {
				return a(uint64(0xffffffffffffff9c), m.cstr("/etc/ld.so.cache"), unix.O_RDONLY|unix.O_CLOEXEC)
			},
			ret:   3,
			entry: `openat(AT_FDCWD, "/etc/ld.so.cache", O_RDONLY|O_CLOEXEC)`,
			exit:  `openat(AT_FDCWD, "/etc/ld.so.cache", O_RDONLY|O_CLOEXEC) = 3`,
		},
		{
			name: "openat ENOENT", sysno: unix.SYS_OPENAT,
			setup: func(m *fakeMem) [6]uintptr {
				return a(0xffffff9c, m.cstr("/nonexist/x"), unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC, 0644)
			},
			ret:  neg(unix.ENOENT),
			exit: `openat(AT_FDCWD, "/nonexist/x", O_WRONLY|O_CREAT|O_TRUNC, 0644) = -1 ENOENT (No such file or directory)`,
		},
		{
			name: "openat every flag", sysno: unix.SYS_OPENAT,
			setup: func(m *fakeMem) [6]uintptr {
				return a(0xffffff9c, m.cstr("/nonexist/x"), 0xfffffffc, 0777)
			},
			ret:  neg(unix.ENOENT),
			exit: `openat(AT_FDCWD, "/nonexist/x", O_RDONLY|O_CREAT|O_EXCL|O_NOCTTY|O_TRUNC|O_APPEND|O_NONBLOCK|O_SYNC|O_DIRECT|O_LARGEFILE|O_NOFOLLOW|O_NOATIME|O_CLOEXEC|O_PATH|O_TMPFILE|FASYNC|0xff80003c, 0777) = -1 ENOENT (No such file or directory)`,
		},
		{
			name: "openat directory flags", sysno: unix.SYS_OPENAT,
			setup: func(m *fakeMem) [6]uintptr {
				return a(0xffffff9c, m.cstr("/nonexist"), unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_ASYNC|unix.O_DSYNC|unix.O_NOATIME)
			},
			ret:  neg(unix.ENOENT),
			exit: `openat(AT_FDCWD, "/nonexist", O_RDONLY|O_DSYNC|O_NOFOLLOW|O_NOATIME|O_CLOEXEC|O_DIRECTORY|FASYNC) = -1 ENOENT (No such file or directory)`,
		},
		{
			name: "openat tmpfile has a mode", sysno: unix.SYS_OPENAT,
			setup: func(m *fakeMem) [6]uintptr {
				return a(0xffffff9c, m.cstr("/tmp"), unix.O_RDWR|unix.O_TMPFILE, 0600)
			},
			ret:  4,
			exit: `openat(AT_FDCWD, "/tmp", O_RDWR|O_TMPFILE, 0600) = 4`,
		},
		{
			name: "openat escapes", sysno: unix.SYS_OPENAT,
			setup: func(m *fakeMem) [6]uintptr {
				return a(5, m.cstr("a\tb\x01\x019\xe2\x82\xac"), 3)
			},
			ret:  neg(unix.EBADF),
			exit: `openat(5, "a\tb\1\19\342\202\254", O_ACCMODE) = -1 EBADF (Bad file descriptor)`,
		},
		{
			name: "open O_PATH", sysno: unix.SYS_OPEN,
			setup: func(m *fakeMem) [6]uintptr { return a(m.cstr("/nonexist"), unix.O_PATH) },
			ret:   neg(unix.ENOENT),
			exit:  `open("/nonexist", O_RDONLY|O_PATH) = -1 ENOENT (No such file or directory)`,
		},
		{
			name: "open unreadable path", sysno: unix.SYS_OPEN,
			setup: fixed(a(0xdead0000, 0)),
			ret:   neg(unix.EFAULT),
			exit:  `open(0xdead0000, O_RDONLY) = -1 EFAULT (Bad address)`,
		},
		{
			name: "long path prints whole", sysno: unix.SYS_ACCESS,
			setup: func(m *fakeMem) [6]uintptr {
				b := make([]byte, 60)
				for i := range b {
					b[i] = 'p'
				}
				return a(m.cstr(string(b)), 0)
			},
			ret:  neg(unix.ENAMETOOLONG),
			exit: `access("pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp", F_OK) = -1 ENAMETOOLONG (File name too long)`,
		},
		{
			name: "close", sysno: unix.SYS_CLOSE,
			setup: fixed(a(0xffffffff)),
			ret:   neg(unix.EBADF),
			exit:  `close(-1) = -1 EBADF (Bad file descriptor)`,
		},
		{
			name: "read", sysno: unix.SYS_READ,
			setup: func(m *fakeMem) [6]uintptr {
				return a(3, m.put([]byte("vm\n\x00\x00\x00\x00\x00")), 200)
			},
			ret:   3,
			entry: `read(3, 0x10000, 200)`,
			exit:  `read(3, "vm\n", 200) = 3`,
		},
		{
			name: "read truncated binary", sysno: unix.SYS_READ,
			setup: func(m *fakeMem) [6]uintptr {
				elf := []byte("\x7fELF\x02\x01\x01\x03\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00>\x00\x01\x00\x00\x00\x10t\x02\x00\x00\x00\x00\x00and more bytes after")
				return a(3, m.put(elf), 832)
			},
			ret:  832,
			exit: `read(3, "\177ELF\2\1\1\3\0\0\0\0\0\0\0\0\3\0>\0\1\0\0\0\20t\2\0\0\0\0\0"..., 832) = 832`,
		},
		{
			name: "read error leaves the buffer an address", sysno: unix.SYS_READ,
			setup: func(m *fakeMem) [6]uintptr { return a(3, m.put(make([]byte, 8)), 8) },
			ret:   neg(unix.EAGAIN),
			exit:  `read(3, 0x10000, 8) = -1 EAGAIN (Resource temporarily unavailable)`,
		},
		{
			name: "read eof", sysno: unix.SYS_READ,
			setup: fixed(a(0, 0x10, 5)),
			ret:   0,
			exit:  `read(0, "", 5) = 0`,
		},
		{
			name: "write escapes", sysno: unix.SYS_WRITE,
			setup: func(m *fakeMem) [6]uintptr {
				return a(1, m.put([]byte("hi\tthere\n\"q\"\\ \001\0012\377x\000")), 20)
			},
			ret:   20,
			entry: `write(1, "hi\tthere\n\"q\"\\ \1\0012\377x\0", 20)`,
			exit:  `write(1, "hi\tthere\n\"q\"\\ \1\0012\377x\0", 20) = 20`,
		},
		{
			name: "write truncated at 32", sysno: unix.SYS_WRITE,
			setup: func(m *fakeMem) [6]uintptr {
				return a(1, m.put([]byte("0123456789012345678901234567890123456789")), 40)
			},
			ret:  40,
			exit: `write(1, "01234567890123456789012345678901"..., 40) = 40`,
		},
		{
			name: "write exactly 32", sysno: unix.SYS_WRITE,
			setup: func(m *fakeMem) [6]uintptr {
				return a(1, m.put([]byte("01234567890123456789012345678901")), 32)
			},
			ret:  32,
			exit: `write(1, "01234567890123456789012345678901", 32) = 32`,
		},
		{
			name: "write octal", sysno: unix.SYS_WRITE,
			setup: func(m *fakeMem) [6]uintptr {
				b := make([]byte, 40)
				for i := range b {
					b[i] = byte(i * 7)
				}
				return a(1, m.put(b), 40)
			},
			ret:  40,
			exit: `write(1, "\0\7\16\25\34#*18?FMT[bipw~\205\214\223\232\241\250\257\266\275\304\313\322\331"..., 40) = 40`,
		},
		{
			name: "write control escapes", sysno: unix.SYS_WRITE,
			setup: func(m *fakeMem) [6]uintptr { return a(1, m.put([]byte("\v\f\r\b\a\x1b7")), 7) },
			ret:   7,
			exit:  `write(1, "\v\f\r\10\7\0337", 7) = 7`,
		},
		{
			name: "write bad buffer", sysno: unix.SYS_WRITE,
			setup: fixed(a(1, 0x10, 5)),
			ret:   neg(unix.EFAULT),
			exit:  `write(1, 0x10, 5) = -1 EFAULT (Bad address)`,
		},
		{
			name: "write NULL", sysno: unix.SYS_WRITE,
			setup: fixed(a(1, 0, 0)),
			ret:   0,
			exit:  `write(1, NULL, 0) = 0`,
		},
		{
			name: "write empty", sysno: unix.SYS_WRITE,
			setup: func(m *fakeMem) [6]uintptr { return a(1, m.cstr(""), 0) },
			ret:   0,
			exit:  `write(1, "", 0) = 0`,
		},
		{
			name: "pread64", sysno: unix.SYS_PREAD64,
			setup: func(m *fakeMem) [6]uintptr { return a(3, m.put([]byte("\x06\x00\x00\x00@")), 784, 64) },
			ret:   5,
			exit:  `pread64(3, "\6\0\0\0@", 784, 64) = 5`,
		},
		{
			name: "lseek", sysno: unix.SYS_LSEEK,
			setup: fixed(a(0, uint64(0xfffffffffffffffb), 2)),
			ret:   0,
			exit:  `lseek(0, -5, SEEK_END) = 0`,
		},
		{
			name: "lseek bad whence", sysno: unix.SYS_LSEEK,
			setup: fixed(a(0, 5, 99)),
			ret:   neg(unix.EINVAL),
			exit:  `lseek(0, 5, 0x63 /* SEEK_??? */) = -1 EINVAL (Invalid argument)`,
		},
		{
			name: "access", sysno: unix.SYS_ACCESS,
			setup: func(m *fakeMem) [6]uintptr { return a(m.cstr("/etc"), unix.R_OK|unix.W_OK) },
			ret:   0,
			exit:  `access("/etc", R_OK|W_OK) = 0`,
		},
		{
			name: "access unknown bits", sysno: unix.SYS_ACCESS,
			setup: func(m *fakeMem) [6]uintptr { return a(m.cstr("/"), 0x17) },
			ret:   neg(unix.EINVAL),
			exit:  `access("/", R_OK|W_OK|X_OK|0x10) = -1 EINVAL (Invalid argument)`,
		},
		{
			name: "faccessat2", sysno: unix.SYS_FACCESSAT2,
			setup: func(m *fakeMem) [6]uintptr { return a(0xffffff9c, m.cstr("x"), unix.X_OK, unix.AT_EACCESS) },
			ret:   neg(unix.ENOENT),
			exit:  `faccessat2(AT_FDCWD, "x", X_OK, AT_EACCESS) = -1 ENOENT (No such file or directory)`,
		},
		{
			name: "chmod", sysno: unix.SYS_CHMOD,
			setup: func(m *fakeMem) [6]uintptr { return a(m.cstr("/nonexist"), 0755) },
			ret:   neg(unix.ENOENT),
			exit:  `chmod("/nonexist", 0755) = -1 ENOENT (No such file or directory)`,
		},
		{
			name: "mkdir sticky", sysno: unix.SYS_MKDIR,
			setup: func(m *fakeMem) [6]uintptr { return a(m.cstr("/tmp/xx"), 01777) },
			ret:   0,
			exit:  `mkdir("/tmp/xx", 01777) = 0`,
		},
		{
			name: "umask", sysno: unix.SYS_UMASK,
			setup: fixed(a(022)),
			ret:   022,
			exit:  `umask(022) = 022`,
		},
		{
			name: "umask zero", sysno: unix.SYS_UMASK,
			setup: fixed(a(0)),
			ret:   022,
			exit:  `umask(000) = 022`,
		},
		{
			name: "mknodat fifo", sysno: unix.SYS_MKNODAT,
			setup: func(m *fakeMem) [6]uintptr { return a(0xffffff9c, m.cstr("/tmp/nod"), unix.S_IFIFO|0644, 0) },
			ret:   0,
			exit:  `mknodat(AT_FDCWD, "/tmp/nod", S_IFIFO|0644) = 0`,
		},
		{
			name: "mknod char device", sysno: unix.SYS_MKNOD,
			setup: func(m *fakeMem) [6]uintptr { return a(m.cstr("/dev/null"), unix.S_IFCHR|0666, 0x103) },
			ret:   0,
			exit:  `mknod("/dev/null", S_IFCHR|0666, makedev(0x1, 0x3)) = 0`,
		},
		{
			name: "unlinkat removedir", sysno: unix.SYS_UNLINKAT,
			setup: func(m *fakeMem) [6]uintptr { return a(0xffffff9c, m.cstr("/tmp/nodx"), unix.AT_REMOVEDIR) },
			ret:   neg(unix.ENOENT),
			exit:  `unlinkat(AT_FDCWD, "/tmp/nodx", AT_REMOVEDIR) = -1 ENOENT (No such file or directory)`,
		},
		{
			name: "renameat2", sysno: unix.SYS_RENAMEAT2,
			setup: func(m *fakeMem) [6]uintptr {
				return a(0xffffff9c, m.cstr("/tmp/a"), 0xffffff9c, m.cstr("/tmp/b"), unix.RENAME_NOREPLACE)
			},
			ret:  neg(unix.ENOENT),
			exit: `renameat2(AT_FDCWD, "/tmp/a", AT_FDCWD, "/tmp/b", RENAME_NOREPLACE) = -1 ENOENT (No such file or directory)`,
		},
		{
			name: "fchmodat", sysno: unix.SYS_FCHMODAT,
			setup: func(m *fakeMem) [6]uintptr { return a(0xffffff9c, m.cstr("/tmp/zz"), 0600) },
			ret:   neg(unix.ENOENT),
			exit:  `fchmodat(AT_FDCWD, "/tmp/zz", 0600) = -1 ENOENT (No such file or directory)`,
		},
		{
			name: "utimensat", sysno: unix.SYS_UTIMENSAT,
			setup: func(m *fakeMem) [6]uintptr {
				return a(0xffffff9c, m.cstr("/tmp/zz"), m.u64s(0, utimeNow, 5, utimeOmit), 0)
			},
			ret:  neg(unix.ENOENT),
			exit: `utimensat(AT_FDCWD, "/tmp/zz", [UTIME_NOW, UTIME_OMIT], 0) = -1 ENOENT (No such file or directory)`,
		},
		{
			name: "utimensat times", sysno: unix.SYS_UTIMENSAT,
			setup: func(m *fakeMem) [6]uintptr {
				return a(3, 0, m.u64s(1, 2, 3, 4), unix.AT_SYMLINK_NOFOLLOW)
			},
			ret:  0,
			exit: `utimensat(3, NULL, [{tv_sec=1, tv_nsec=2}, {tv_sec=3, tv_nsec=4}], AT_SYMLINK_NOFOLLOW) = 0`,
		},
		{
			name: "chown", sysno: unix.SYS_CHOWN,
			setup: func(m *fakeMem) [6]uintptr { return a(m.cstr("/x"), 0, 0xffffffff) },
			ret:   neg(unix.ENOENT),
			exit:  `chown("/x", 0, -1) = -1 ENOENT (No such file or directory)`,
		},
		{
			name: "fchownat", sysno: unix.SYS_FCHOWNAT,
			setup: func(m *fakeMem) [6]uintptr {
				return a(0xffffff9c, m.cstr("/x"), 1, 2, unix.AT_SYMLINK_NOFOLLOW)
			},
			ret:  neg(unix.ENOENT),
			exit: `fchownat(AT_FDCWD, "/x", 1, 2, AT_SYMLINK_NOFOLLOW) = -1 ENOENT (No such file or directory)`,
		},
		{
			name: "getcwd", sysno: unix.SYS_GETCWD,
			setup: func(m *fakeMem) [6]uintptr { return a(m.cstr("/tmp/st"), 100) },
			ret:   8,
			entry: `getcwd(0x10000, 100)`,
			exit:  `getcwd("/tmp/st", 100) = 8`,
		},
		{
			name: "getcwd fault", sysno: unix.SYS_GETCWD,
			setup: fixed(a(0x10, 100)),
			ret:   neg(unix.EFAULT),
			exit:  `getcwd(0x10, 100) = -1 EFAULT (Bad address)`,
		},
		{
			name: "readlink", sysno: unix.SYS_READLINK,
			setup: func(m *fakeMem) [6]uintptr { return a(m.cstr("/proc/self/exe"), m.put([]byte("/tmp/st/bxxxx")), 100) },
			ret:   9,
			exit:  `readlink("/proc/self/exe", "/tmp/st/b", 100) = 9`,
		},
		{
			name: "readlink short buffer", sysno: unix.SYS_READLINK,
			setup: func(m *fakeMem) [6]uintptr { return a(m.cstr("/proc/self/exe"), m.put([]byte("/tmp")), 3) },
			ret:   3,
			exit:  `readlink("/proc/self/exe", "/tm", 3) = 3`,
		},
		{
			name: "truncate", sysno: unix.SYS_TRUNCATE,
			setup: func(m *fakeMem) [6]uintptr { return a(m.cstr("/nonexist"), 100) },
			ret:   neg(unix.ENOENT),
			exit:  `truncate("/nonexist", 100) = -1 ENOENT (No such file or directory)`,
		},
		{
			name: "symlink", sysno: unix.SYS_SYMLINK,
			setup: func(m *fakeMem) [6]uintptr { return a(m.cstr("a"), m.cstr("/tmp/sym")) },
			ret:   0,
			exit:  `symlink("a", "/tmp/sym") = 0`,
		},
		{
			name: "dup3", sysno: unix.SYS_DUP3,
			setup: fixed(a(1, 101, unix.O_CLOEXEC)),
			ret:   101,
			exit:  `dup3(1, 101, O_CLOEXEC) = 101`,
		},
		{
			name: "dup negative", sysno: unix.SYS_DUP,
			setup: fixed(a(uint64(0xffffffffffffff9c))),
			ret:   neg(unix.EBADF),
			exit:  `dup(-100) = -1 EBADF (Bad file descriptor)`,
		},
		{
			name: "flock", sysno: unix.SYS_FLOCK,
			setup: fixed(a(0, unix.LOCK_EX|unix.LOCK_NB)),
			ret:   0,
			exit:  `flock(0, LOCK_EX|LOCK_NB) = 0`,
		},
		{
			name: "memfd_create", sysno: unix.SYS_MEMFD_CREATE,
			setup: func(m *fakeMem) [6]uintptr { return a(m.cstr("hello"), unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING) },
			ret:   12,
			exit:  `memfd_create("hello", MFD_CLOEXEC|MFD_ALLOW_SEALING) = 12`,
		},
		{
			name: "getdents64", sysno: unix.SYS_GETDENTS64,
			setup: func(m *fakeMem) [6]uintptr {
				b := &builder{}
				for i, name := range []string{".", "..", "etc"} {
					start := len(b.b)
					b.u64(uint64(i + 1)).u64(uint64(i + 1)).u16(24).u8(4).bytes([]byte(name))
					b.at(start + 24)
				}
				return a(14, m.put(b.b), 256)
			},
			ret:   72,
			entry: `getdents64(14, 0x10000, 256)`,
			exit:  `getdents64(14, 0x10000 /* 3 entries */, 256) = 72`,
		},
		{
			name: "getdents64 empty", sysno: unix.SYS_GETDENTS64,
			setup: func(m *fakeMem) [6]uintptr { return a(14, m.put(make([]byte, 8)), 256) },
			ret:   0,
			exit:  `getdents64(14, 0x10000 /* 0 entries */, 256) = 0`,
		},
		{
			name: "getxattr", sysno: unix.SYS_GETXATTR,
			setup: func(m *fakeMem) [6]uintptr {
				return a(m.cstr("/x"), m.cstr("user.a"), m.put([]byte("val")), 64)
			},
			ret:  3,
			exit: `getxattr("/x", "user.a", "val", 64) = 3`,
		},
	})
}

func TestStat(t *testing.T) {
	statBuf := func(m *fakeMem, mode uint32, rdev uint64, size uint64) uint64 {
		b := (&builder{}).u64(0x803).u64(1234).u64(1).u32(mode).u32(0).u32(0).at(40).u64(rdev).u64(size).at(144)
		return m.put(b.b)
	}
	runCases(t, []lineCase{
		{
			name: "newfstatat empty path", sysno: unix.SYS_NEWFSTATAT,
			setup: func(m *fakeMem) [6]uintptr {
				return a(3, m.cstr(""), statBuf(m, unix.S_IFREG|0644, 0, 33519), unix.AT_EMPTY_PATH)
			},
			ret:   0,
			entry: `newfstatat(3, "", 0x12000, AT_EMPTY_PATH)`,
			exit:  `newfstatat(3, "", {st_mode=S_IFREG|0644, st_size=33519, ...}, AT_EMPTY_PATH) = 0`,
		},
		{
			name: "newfstatat device", sysno: unix.SYS_NEWFSTATAT,
			setup: func(m *fakeMem) [6]uintptr {
				return a(0xffffff9c, m.cstr("/dev/null"), statBuf(m, unix.S_IFCHR|0666, 0x103, 0), 0)
			},
			ret:  0,
			exit: `newfstatat(AT_FDCWD, "/dev/null", {st_mode=S_IFCHR|0666, st_rdev=makedev(0x1, 0x3), ...}, 0) = 0`,
		},
		{
			name: "fstat pty", sysno: unix.SYS_FSTAT,
			setup: func(m *fakeMem) [6]uintptr { return a(0, statBuf(m, unix.S_IFCHR|0600, 0x8800, 0)) },
			ret:   0,
			exit:  `fstat(0, {st_mode=S_IFCHR|0600, st_rdev=makedev(0x88, 0), ...}) = 0`,
		},
		{
			name: "stat sticky dir", sysno: unix.SYS_STAT,
			setup: func(m *fakeMem) [6]uintptr {
				return a(m.cstr("/tmp"), statBuf(m, unix.S_IFDIR|unix.S_ISVTX|0777, 0, 4096))
			},
			ret:  0,
			exit: `stat("/tmp", {st_mode=S_IFDIR|S_ISVTX|0777, st_size=4096, ...}) = 0`,
		},
		{
			name: "newfstatat ENOENT", sysno: unix.SYS_NEWFSTATAT,
			setup: func(m *fakeMem) [6]uintptr {
				return a(0xffffff9c, m.cstr("/nonexist"), statBuf(m, 0, 0, 0), unix.AT_SYMLINK_NOFOLLOW)
			},
			ret:  neg(unix.ENOENT),
			exit: `newfstatat(AT_FDCWD, "/nonexist", 0x12000, AT_SYMLINK_NOFOLLOW) = -1 ENOENT (No such file or directory)`,
		},
		{
			name: "statx", sysno: unix.SYS_STATX,
			setup: func(m *fakeMem) [6]uintptr {
				b := (&builder{}).u32(0x1fff).u32(4096).u64(0).u32(2).u32(0).u32(0).u16(unix.S_IFDIR | 0755).at(40).u64(4096).at(256)
				return a(0xffffff9c, m.cstr("/etc"), 0, unix.STATX_ALL, m.put(b.b))
			},
			ret:  0,
			exit: `statx(AT_FDCWD, "/etc", AT_STATX_SYNC_AS_STAT, STATX_ALL, {stx_mask=STATX_ALL|STATX_MNT_ID, stx_attributes=0, stx_mode=S_IFDIR|0755, stx_size=4096, ...}) = 0`,
		},
		{
			name: "statx flags", sysno: unix.SYS_STATX,
			setup: fixed(a(3, 0x10, unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW, unix.STATX_BASIC_STATS, 0x7ffe6dcc49a0)),
			ret:   neg(unix.EBADF),
			exit:  `statx(3, 0x10, AT_STATX_SYNC_AS_STAT|AT_SYMLINK_NOFOLLOW|AT_EMPTY_PATH, STATX_BASIC_STATS, 0x7ffe6dcc49a0) = -1 EBADF (Bad file descriptor)`,
		},
		{
			name: "statx dont sync", sysno: unix.SYS_STATX,
			setup: func(m *fakeMem) [6]uintptr {
				return a(0xffffff9c, m.cstr("/nonex"), unix.AT_STATX_DONT_SYNC, unix.STATX_SIZE|unix.STATX_MODE, 0x7ffe6dcc49a0)
			},
			ret:  neg(unix.ENOENT),
			exit: `statx(AT_FDCWD, "/nonex", AT_STATX_DONT_SYNC, STATX_MODE|STATX_SIZE, 0x7ffe6dcc49a0) = -1 ENOENT (No such file or directory)`,
		},
	})
}

func TestMemory(t *testing.T) {
	runCases(t, []lineCase{
		{
			name: "mmap anonymous", sysno: unix.SYS_MMAP,
			setup: fixed(a(0, 8192, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS, 0xffffffffffffffff, 0)),
			ret:   0x7fbc083a5000,
			exit:  `mmap(NULL, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7fbc083a5000`,
		},
		{
			name: "mmap file", sysno: unix.SYS_MMAP,
			setup: fixed(a(0x7fbc081e0000, 1400832, unix.PROT_READ|unix.PROT_EXEC, unix.MAP_PRIVATE|unix.MAP_FIXED|unix.MAP_DENYWRITE, 3, 0x26000)),
			ret:   0x7fbc081e0000,
			exit:  `mmap(0x7fbc081e0000, 1400832, PROT_READ|PROT_EXEC, MAP_PRIVATE|MAP_FIXED|MAP_DENYWRITE, 3, 0x26000) = 0x7fbc081e0000`,
		},
		{
			name: "mmap huge shift", sysno: unix.SYS_MMAP,
			setup: fixed(a(0x10000, 4096, unix.PROT_EXEC, unix.MAP_SHARED|unix.MAP_FIXED|0x40000000, 3, 4096)),
			ret:   0x10000,
			exit:  `mmap(0x10000, 4096, PROT_EXEC, MAP_SHARED|MAP_FIXED|16<<MAP_HUGE_SHIFT, 3, 0x1000) = 0x10000`,
		},
		{
			name: "mmap every flag", sysno: unix.SYS_MMAP,
			setup: fixed(a(0, 4096, 0xff, 0xffffffff, 0xffffffffffffffff, 0)),
			ret:   neg(unix.EINVAL),
			exit:  `mmap(NULL, 4096, PROT_READ|PROT_WRITE|PROT_EXEC|PROT_SEM|0xf0, 0xf /* MAP_??? */|MAP_FIXED|MAP_ANONYMOUS|MAP_32BIT|MAP_NORESERVE|MAP_POPULATE|MAP_NONBLOCK|MAP_GROWSDOWN|MAP_DENYWRITE|MAP_EXECUTABLE|MAP_LOCKED|MAP_STACK|MAP_HUGETLB|MAP_SYNC|MAP_FIXED_NOREPLACE|0x3e00680|63<<MAP_HUGE_SHIFT, -1, 0) = -1 EINVAL (Invalid argument)`,
		},
		{
			name: "mmap prot high bits", sysno: unix.SYS_MMAP,
			setup: fixed(a(0, 4096, 0xf000000f, unix.MAP_SHARED_VALIDATE|unix.MAP_GROWSDOWN, 7, 0)),
			ret:   neg(unix.EBADF),
			exit:  `mmap(NULL, 4096, PROT_READ|PROT_WRITE|PROT_EXEC|PROT_SEM|0xf0000000, MAP_SHARED_VALIDATE|MAP_GROWSDOWN, 7, 0) = -1 EBADF (Bad file descriptor)`,
		},
		{
			name: "mprotect none", sysno: unix.SYS_MPROTECT,
			setup: fixed(a(0x7fbc083a3000, 4096, 0)),
			ret:   0,
			exit:  `mprotect(0x7fbc083a3000, 4096, PROT_NONE) = 0`,
		},
		{
			name: "mprotect growsdown", sysno: unix.SYS_MPROTECT,
			setup: fixed(a(0x1000, 4096, unix.PROT_READ|unix.PROT_WRITE|unix.PROT_EXEC|unix.PROT_GROWSDOWN)),
			ret:   neg(unix.ENOMEM),
			exit:  `mprotect(0x1000, 4096, PROT_READ|PROT_WRITE|PROT_EXEC|PROT_GROWSDOWN) = -1 ENOMEM (Cannot allocate memory)`,
		},
		{
			name: "madvise", sysno: unix.SYS_MADVISE,
			setup: fixed(a(0x7fbc083a3000, 4096, unix.MADV_DONTNEED)),
			ret:   0,
			exit:  `madvise(0x7fbc083a3000, 4096, MADV_DONTNEED) = 0`,
		},
		{
			name: "madvise unknown", sysno: unix.SYS_MADVISE,
			setup: fixed(a(0x1000, 4096, 12345)),
			ret:   neg(unix.EINVAL),
			exit:  `madvise(0x1000, 4096, 0x3039 /* MADV_??? */) = -1 EINVAL (Invalid argument)`,
		},
		{
			name: "munmap", sysno: unix.SYS_MUNMAP,
			setup: fixed(a(0x7fbc0839c000, 33519)),
			ret:   0,
			exit:  `munmap(0x7fbc0839c000, 33519) = 0`,
		},
		{
			name: "brk", sysno: unix.SYS_BRK,
			setup: fixed(a(0)),
			ret:   0x556046e4f000,
			exit:  `brk(NULL) = 0x556046e4f000`,
		},
		{
			name: "mremap fixed", sysno: unix.SYS_MREMAP,
			setup: fixed(a(0x1000, 4096, 8192, unix.MREMAP_MAYMOVE|unix.MREMAP_FIXED, 0x5000)),
			ret:   neg(unix.EFAULT),
			exit:  `mremap(0x1000, 4096, 8192, MREMAP_MAYMOVE|MREMAP_FIXED, 0x5000) = -1 EFAULT (Bad address)`,
		},
		{
			name: "mremap", sysno: unix.SYS_MREMAP,
			setup: fixed(a(0x1000, 4096, 8192, 0, 0x5000)),
			ret:   neg(unix.EFAULT),
			exit:  `mremap(0x1000, 4096, 8192, 0) = -1 EFAULT (Bad address)`,
		},
		{
			name: "msync", sysno: unix.SYS_MSYNC,
			setup: fixed(a(0x1000, 4096, unix.MS_SYNC|unix.MS_INVALIDATE)),
			ret:   neg(unix.ENOMEM),
			exit:  `msync(0x1000, 4096, MS_SYNC|MS_INVALIDATE) = -1 ENOMEM (Cannot allocate memory)`,
		},
		{
			name: "mlockall", sysno: unix.SYS_MLOCKALL,
			setup: fixed(a(unix.MCL_CURRENT | unix.MCL_FUTURE)),
			ret:   0,
			exit:  `mlockall(MCL_CURRENT|MCL_FUTURE) = 0`,
		},
		{
			name: "arch_prctl", sysno: unix.SYS_ARCH_PRCTL,
			setup: fixed(a(0x1002, 0x7fbc081b7740)),
			ret:   0,
			exit:  `arch_prctl(ARCH_SET_FS, 0x7fbc081b7740) = 0`,
		},
		{
			name: "arch_prctl unknown", sysno: unix.SYS_ARCH_PRCTL,
			setup: fixed(a(0x9999, 0x10)),
			ret:   neg(unix.EINVAL),
			exit:  `arch_prctl(0x9999 /* ARCH_??? */, 0x10) = -1 EINVAL (Invalid argument)`,
		},
		{
			name: "set_robust_list", sysno: unix.SYS_SET_ROBUST_LIST,
			setup: fixed(a(0x7fbc081b7a20, 24)),
			ret:   0,
			exit:  `set_robust_list(0x7fbc081b7a20, 24) = 0`,
		},
		{
			name: "rseq", sysno: unix.SYS_RSEQ,
			setup: fixed(a(0x7fbc081b8060, 0x20, 0, 0x53053053)),
			ret:   0,
			exit:  `rseq(0x7fbc081b8060, 0x20, 0, 0x53053053) = 0`,
		},
		{
			name: "getrandom", sysno: unix.SYS_GETRANDOM,
			setup: func(m *fakeMem) [6]uintptr {
				return a(m.put([]byte{0x3c, 0x68, 0xf2, 0x78, 0xa2, 0xf3, 0xb6, 0xcf}), 8, 0)
			},
			ret:  8,
			exit: `getrandom("\x3c\x68\xf2\x78\xa2\xf3\xb6\xcf", 8, 0) = 8`,
		},
		{
			name: "getrandom flags", sysno: unix.SYS_GETRANDOM,
			setup: func(m *fakeMem) [6]uintptr {
				return a(m.put([]byte{0x9c, 0xd3, 0x3d, 0x5b}), 4, unix.GRND_NONBLOCK|unix.GRND_RANDOM)
			},
			ret:  4,
			exit: `getrandom("\x9c\xd3\x3d\x5b", 4, GRND_NONBLOCK|GRND_RANDOM) = 4`,
		},
	})
}
