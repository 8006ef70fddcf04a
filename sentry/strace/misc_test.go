package strace

import (
	"testing"

	"golang.org/x/sys/unix"
)

func TestMisc(t *testing.T) {
	runCases(t, []lineCase{
		{
			name: "execve success shows addresses", sysno: unix.SYS_EXECVE,
			setup: func(m *fakeMem) [6]uintptr { return a(m.cstr("/bin/true"), m.strs("true"), 0) },
			ret:   0,
			exit:  `execve(0x10000, 0x14000, NULL) = 0`,
		},
		{
			name: "execveat", sysno: unix.SYS_EXECVEAT,
			setup: func(m *fakeMem) [6]uintptr { return a(3, m.cstr(""), m.strs("x"), 0, unix.AT_EMPTY_PATH) },
			entry: `execveat(3, "", ["x"], NULL, AT_EMPTY_PATH)`,
		},
		{
			name: "openat2", sysno: unix.SYS_OPENAT2,
			setup: func(m *fakeMem) [6]uintptr {
				return a(0xffffff9c, m.cstr("/etc"), m.u64s(unix.O_RDONLY|unix.O_CLOEXEC, 0, unix.RESOLVE_BENEATH), 24)
			},
			ret:  neg(unix.EXDEV),
			exit: `openat2(AT_FDCWD, "/etc", {flags=O_RDONLY|O_CLOEXEC, resolve=RESOLVE_BENEATH}, 24) = -1 EXDEV (Invalid cross-device link)`,
		},
		{
			name: "openat2 create", sysno: unix.SYS_OPENAT2,
			setup: func(m *fakeMem) [6]uintptr {
				return a(0xffffff9c, m.cstr("/nonexist/x"), m.u64s(unix.O_WRONLY|unix.O_CREAT, 0644, 0), 24)
			},
			ret:  neg(unix.ENOENT),
			exit: `openat2(AT_FDCWD, "/nonexist/x", {flags=O_WRONLY|O_CREAT, mode=0644, resolve=0}, 24) = -1 ENOENT (No such file or directory)`,
		},
		{
			name: "mount", sysno: unix.SYS_MOUNT,
			setup: func(m *fakeMem) [6]uintptr {
				return a(m.cstr("proc"), m.cstr("/proc"), m.cstr("proc"), unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, 0)
			},
			ret:  0,
			exit: `mount("proc", "/proc", "proc", MS_NOSUID|MS_NODEV|MS_NOEXEC, NULL) = 0`,
		},
		{
			name: "mount magic", sysno: unix.SYS_MOUNT,
			setup: func(m *fakeMem) [6]uintptr {
				return a(m.cstr("none"), m.cstr("/"), 0, 0xc0ed0000|unix.MS_REMOUNT|unix.MS_BIND, 0)
			},
			ret:  0,
			exit: `mount("none", "/", NULL, MS_MGC_VAL|MS_REMOUNT|MS_BIND, NULL) = 0`,
		},
		{
			name: "umount2", sysno: unix.SYS_UMOUNT2,
			setup: func(m *fakeMem) [6]uintptr { return a(m.cstr("/mnt"), unix.MNT_DETACH) },
			ret:   0,
			exit:  `umount2("/mnt", MNT_DETACH) = 0`,
		},
		{
			name: "close_range", sysno: unix.SYS_CLOSE_RANGE,
			setup: fixed(a(3, 0xffffffff, unix.CLOSE_RANGE_CLOEXEC)),
			ret:   0,
			exit:  `close_range(3, 4294967295, CLOSE_RANGE_CLOEXEC) = 0`,
		},
		{
			name: "sched_setaffinity", sysno: unix.SYS_SCHED_SETAFFINITY,
			setup: func(m *fakeMem) [6]uintptr { return a(0, 8, m.u64s(1<<2|1<<9)) },
			ret:   0,
			exit:  `sched_setaffinity(0, 8, [2 9]) = 0`,
		},
		{
			name: "getdents64 bad record length", sysno: unix.SYS_GETDENTS64,
			setup: func(m *fakeMem) [6]uintptr { return a(3, m.put(make([]byte, 64)), 64) },
			ret:   64,
			exit:  `getdents64(3, 0x10000, 64) = 64`,
		},
		{
			name: "select except", sysno: unix.SYS_SELECT,
			setup: func(m *fakeMem) [6]uintptr { return a(70, m.u64s(0, 0), 0, m.u64s(0, 1<<2), 0) },
			ret:   1,
			exit:  `select(70, [], NULL, [66], NULL) = 1 (except [66])`,
		},
		{
			name: "sethostname", sysno: unix.SYS_SETHOSTNAME,
			setup: func(m *fakeMem) [6]uintptr { return a(m.put([]byte("sandbox")), 7) },
			ret:   0,
			exit:  `sethostname("sandbox", 7) = 0`,
		},
		{
			name: "kill realtime min", sysno: unix.SYS_KILL,
			setup: fixed(a(1, 32)),
			ret:   0,
			exit:  `kill(1, SIGRTMIN) = 0`,
		},
		{
			name: "fadvise64", sysno: unix.SYS_FADVISE64,
			setup: fixed(a(3, 0, 0, 2)),
			ret:   0,
			exit:  `fadvise64(3, 0, 0, 2) = 0`,
		},
	})
}

func TestRecoverFallback(t *testing.T) {
	// A Memory that panics is a caller bug, but the trace must survive it.
	var m panicMem
	got := Exit(m, unix.SYS_OPENAT, a(0xffffff9c, 0x1000, 0), 3)
	if want := `openat(0xffffff9c, 0x1000, 0, 0) = 3`; got != want {
		t.Errorf("Exit with a panicking Memory = %q, want %q", got, want)
	}
	if got := Entry(m, unix.SYS_OPENAT, a(0xffffff9c, 0x1000, 0)); got != `openat(0xffffff9c, 0x1000, 0, 0)` {
		t.Errorf("Entry with a panicking Memory = %q", got)
	}
}

type panicMem struct{}

func (panicMem) CopyInBytes(uintptr, []byte) (int, error) { panic("boom") }
