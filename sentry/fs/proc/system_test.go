package proc

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
	"github.com/moat-sandbox/moat/sentry/fs/synth"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// sysKernel is a fake kernel with one process that implements the
// optional task interfaces, and the System files.
type sysKernel struct {
	task     *richTask
	hostname string
}

func (k *sysKernel) ThreadGroup(_ fs.Context, pid int32) (Task, bool) { return k.task, pid == 1 }
func (k *sysKernel) PIDs(fs.Context) []int32                          { return []int32{1} }

func (k *sysKernel) SystemInfo() SystemInfo {
	return SystemInfo{NumCPUs: 2, CPUInfo: "processor\t: 0\n\nprocessor\t: 1\n\n", Release: "6.1.0", Version: "#1 SMP Moat",
		BootTime: time.Now().Add(-90 * time.Second), PIDMax: 4194304, NROpen: 1 << 20, PipeMaxSize: 1 << 20, CapLastCap: 40,
		NGroupsMax: 65536, MmapMinAddr: 65536}
}

func (k *sysKernel) SystemStats() SystemStats {
	return SystemStats{MemTotal: 8 << 30, MemFree: 6 << 30, Threads: 3, Running: 1, LastPID: 7, Forks: 7,
		User: 3 * time.Second, System: time.Second}
}

func (k *sysKernel) Hostname(fs.Context) string   { return k.hostname }
func (k *sysKernel) Domainname(fs.Context) string { return "(none)" }
func (k *sysKernel) SetUTSName(_ fs.Context, domain bool, name string) error {
	if !domain {
		k.hostname = name
	}
	return nil
}

type richTask struct {
	*fakeTask
	comm        string
	oom         int32
	limits      []Limit
	nonDumpable bool
	creds       *auth.Credentials
}

func (t *richTask) Comm() string   { return t.comm }
func (t *richTask) Dumpable() bool { return !t.nonDumpable }

// The fake's memory: 16 bytes at 0x1000.
var fakeMem = []byte("0123456789abcdef")

func (t *richTask) ReadMemory(addr uint64, dst []byte) (int, error) {
	if addr < 0x1000 || addr >= 0x1000+uint64(len(fakeMem)) {
		return 0, unix.EFAULT
	}
	n := copy(dst, fakeMem[addr-0x1000:])
	if n < len(dst) {
		return n, unix.EFAULT
	}
	return n, nil
}

func (t *richTask) BoundMemory() MemAccess { return t }

func (t *richTask) WriteMemory(addr uint64, src []byte) (int, error) {
	if addr < 0x1000 || addr >= 0x1000+uint64(len(fakeMem)) {
		return 0, unix.EFAULT
	}
	n := copy(fakeMem[addr-0x1000:], src)
	if n < len(src) {
		return n, unix.EFAULT
	}
	return n, nil
}
func (t *richTask) Credentials() *auth.Credentials {
	if t.creds != nil {
		return t.creds
	}
	return auth.NewRootCredentials()
}
func (t *richTask) SetComm(_ fs.Context, name string) error {
	t.comm = name
	return nil
}
func (t *richTask) Limits() []Limit               { return t.limits }
func (t *richTask) OOMScoreAdj() int32            { return t.oom }
func (t *richTask) Environ() []byte               { return []byte("A=1\x00") }
func (t *richTask) Auxv() []byte                  { return nil }
func (t *richTask) ResidentIn(s, e uint64) uint64 { return (e - s) / 2 }
func (t *richTask) Maps() string {
	return "00400000-00402000 r-xp 00000000 00:00 0                                  /bin/prog\n" +
		"00402000-00406000 rw-p 00000000 00:00 0                                  [heap]\n"
}
func (t *richTask) SetOOMScoreAdj(_ fs.Context, v int32) error {
	t.oom = v
	return nil
}

func sysSetup(t *testing.T) (*fstest.Context, fs.VirtualDentry, *sysKernel) {
	t.Helper()
	ctx := fstest.NewContext()
	root := synth.NewDir(0o755, map[string]fs.Node{"proc": synth.NewDir(0o555, nil)})
	ns := fs.NewMountNamespace(synth.NewFilesystem("rootfs", 1, root, true), fs.MountFlags{})
	rvd := ns.Root()
	limits := make([]Limit, unix.RLIMIT_RTTIME+1)
	for i := range limits {
		limits[i] = Limit{RLimInfinity, RLimInfinity}
	}
	limits[unix.RLIMIT_NOFILE] = Limit{1024, 4096}
	k := &sysKernel{hostname: "box", task: &richTask{
		fakeTask: &fakeTask{pid: 1, fds: fs.NewFDTable(), fsc: fs.NewFSContext(rvd, rvd, 0o22)},
		comm:     "prog", limits: limits,
	}}
	at, err := fs.Resolve(ctx, &fs.Lookup{Root: rvd, Start: rvd, Path: "/proc"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ns.Mount(ctx, at, New(k, nil), fs.MountFlags{}); err != nil {
		t.Fatal(err)
	}
	return ctx, rvd, k
}

func writeFile(t *testing.T, ctx fs.Context, root fs.VirtualDentry, p, data string) error {
	t.Helper()
	f, err := fs.Open(ctx, fs.Lookup{Root: root, Start: root, Path: p}, fs.OpenOptions{Flags: unix.O_WRONLY})
	if err != nil {
		return err
	}
	defer f.DecRef()
	_, err = f.Write(ctx, []byte(data))
	return err
}

func TestSystemFiles(t *testing.T) {
	ctx, root, _ := sysSetup(t)
	for _, tc := range []struct {
		path string
		re   string
	}{
		{"/proc/cpuinfo", `^processor\t: 0\n\nprocessor\t: 1\n\n$`},
		{"/proc/meminfo", `^MemTotal:        8388608 kB\nMemFree:         6291456 kB\nMemAvailable:    6291456 kB\n(?s:.*)HugePages_Total:       0\n`},
		{"/proc/uptime", `^9\d\.\d\d \d+\.\d\d\n$`},
		{"/proc/loadavg", `^0\.00 0\.00 0\.00 1/3 7\n$`},
		{"/proc/version", `^Linux version 6\.1\.0 \(.*\) #1 SMP Moat\n$`},
		{"/proc/stat", `^cpu  300 0 100 \d+ 0 0 0 0 0 0\ncpu0 150 0 50 \d+ 0 0 0 0 0 0\ncpu1 150 0 50 \d+ 0 0 0 0 0 0\nintr 0\nctxt 0\nbtime \d+\nprocesses 7\nprocs_running 1\nprocs_blocked 0\n`},
		{"/proc/sys/kernel/hostname", `^box\n$`},
		{"/proc/swaps", `^Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n$`},
		{"/proc/cmdline", `^BOOT_IMAGE=\S+ quiet\n$`},
		{"/proc/vmstat", `^nr_free_pages 1572864\n(?s:.*)\nnr_anon_pages 524288\n(?s:.*)\npgfault 0\n`},
		{"/proc/sys/kernel/ostype", `^Linux\n$`},
		{"/proc/sys/kernel/osrelease", `^6\.1\.0\n$`},
		{"/proc/sys/kernel/pid_max", `^4194304\n$`},
		{"/proc/sys/kernel/cap_last_cap", `^40\n$`},
		{"/proc/sys/kernel/random/boot_id", `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\n$`},
		{"/proc/sys/kernel/random/uuid", `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\n$`},
		{"/proc/sys/vm/overcommit_memory", `^0\n$`},
		{"/proc/sys/vm/max_map_count", `^65530\n$`},
		{"/proc/sys/vm/mmap_min_addr", `^65536\n$`},
		{"/proc/sys/kernel/ngroups_max", `^65536\n$`},
		{"/proc/sys/fs/nr_open", `^1048576\n$`},
		{"/proc/sys/fs/pipe-max-size", `^1048576\n$`},
		{"/proc/sys/net/core/somaxconn", `^4096\n$`},
	} {
		t.Run(tc.path, func(t *testing.T) {
			got := readAll(t, ctx, root, tc.path)
			if !regexp.MustCompile(tc.re).MatchString(got) {
				t.Errorf("%s = %q, want /%s/", tc.path, got, tc.re)
			}
		})
	}
	if a, b := readAll(t, ctx, root, "/proc/sys/kernel/random/uuid"), readAll(t, ctx, root, "/proc/sys/kernel/random/uuid"); a == b {
		t.Errorf("uuid repeats: %q", a)
	}
	if a, b := readAll(t, ctx, root, "/proc/sys/kernel/random/boot_id"), readAll(t, ctx, root, "/proc/sys/kernel/random/boot_id"); a != b {
		t.Errorf("boot_id changes: %q, %q", a, b)
	}
	if err := writeFile(t, ctx, root, "/proc/sys/kernel/hostname", "newname\n"); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, ctx, root, "/proc/sys/kernel/hostname"); got != "newname\n" {
		t.Errorf("hostname after write %q", got)
	}
	if err := writeFile(t, ctx, root, "/proc/sys/kernel/ostype", "BSD"); err != unix.EACCES {
		t.Errorf("writing ostype: %v, want EACCES", err)
	}
	if got := readlink2(t, ctx, root, "/proc/mounts"); got != "self/mounts" {
		t.Errorf("/proc/mounts -> %q", got)
	}
}

func readlink2(t *testing.T, ctx fs.Context, root fs.VirtualDentry, p string) string {
	t.Helper()
	s, err := readlink(t, ctx, root, p)
	if err != nil {
		t.Fatalf("readlink %s: %v", p, err)
	}
	return s
}

func TestTaskFiles(t *testing.T) {
	ctx, root, k := sysSetup(t)
	limits := readAll(t, ctx, root, "/proc/1/limits")
	lines := strings.Split(limits, "\n")
	if lines[0] != "Limit                     Soft Limit           Hard Limit           Units     " {
		t.Errorf("limits header %q", lines[0])
	}
	if !strings.Contains(limits, "\nMax open files            1024                 4096                 files     \n") ||
		!strings.Contains(limits, "\nMax nice priority         unlimited            unlimited            \n") {
		t.Errorf("limits:\n%s", limits)
	}
	for _, tc := range []struct{ path, want string }{
		{"/proc/1/cgroup", "0::/\n"},
		{"/proc/1/uid_map", "         0          0 4294967295\n"},
		{"/proc/1/gid_map", "         0          0 4294967295\n"},
		{"/proc/1/oom_score_adj", "0\n"},
		{"/proc/1/statm", "6 3 0 2 0 4 0\n"},
	} {
		if got := readAll(t, ctx, root, tc.path); got != tc.want {
			t.Errorf("%s = %q, want %q", tc.path, got, tc.want)
		}
	}
	smaps := readAll(t, ctx, root, "/proc/1/smaps")
	for _, want := range []string{
		"00400000-00402000 r-xp 00000000 00:00 0                                  /bin/prog\nSize:                  8 kB\nKernelPageSize:        4 kB\nMMUPageSize:           4 kB\nRss:                   4 kB\n",
		"\nAnonymous:             8 kB\n",
		"THPeligible:           0\nVmFlags: rd ex mr mw me ac \n",
	} {
		if !strings.Contains(smaps, want) {
			t.Errorf("smaps lacks %q:\n%s", want, smaps)
		}
	}
	rollup := readAll(t, ctx, root, "/proc/1/smaps_rollup")
	if !strings.HasPrefix(rollup, "00400000-00406000 ---p 00000000 00:00 0                                  [rollup]\nRss:                  12 kB\n") ||
		!strings.Contains(rollup, "\nAnonymous:             8 kB\n") || !strings.HasSuffix(rollup, "\nLocked:                0 kB\n") {
		t.Errorf("smaps_rollup:\n%s", rollup)
	}
	for _, tc := range []struct {
		write string
		err   error
		want  int32
	}{
		{"500\n", nil, 500},
		{" -7 ", nil, -7},
		{"0x10", nil, 16},
		{"1001", unix.EINVAL, 16},
		{"abc", unix.EINVAL, 16},
		{"", unix.EINVAL, 16},
	} {
		t.Run("oom_score_adj="+strconv.Quote(tc.write), func(t *testing.T) {
			if err := writeFile(t, ctx, root, "/proc/1/oom_score_adj", tc.write); err != tc.err {
				t.Errorf("write %q: %v, want %v", tc.write, err, tc.err)
			}
			if k.task.oom != tc.want {
				t.Errorf("oom_score_adj %d, want %d", k.task.oom, tc.want)
			}
		})
	}
	if err := writeFile(t, ctx, root, "/proc/1/comm", "a-much-too-long-name"); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, ctx, root, "/proc/1/comm"); got != "a-much-too-long\n" {
		t.Errorf("comm %q", got)
	}
	if got := readlink2(t, ctx, root, "/proc/1/ns/pid"); got != "pid:[4026531836]" {
		t.Errorf("ns/pid -> %q", got)
	}
	vd, err := fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: "/proc/1/ns/uts", FollowFinal: true})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := vd.Stat(ctx); err != nil || st.Ino != 4026531838 {
		t.Errorf("stat ns/uts: ino %d, %v", st.Ino, err)
	}
	f, err := fs.Open(ctx, fs.Lookup{Root: root, Start: root, Path: "/proc/1/ns/uts"}, fs.OpenOptions{})
	if err != nil {
		t.Fatalf("open ns/uts: %v", err)
	}
	f.DecRef()
	// Inode numbers are stable while the process lives.
	var inos []uint64
	for _, p := range []string{"/proc/1", "/proc/self", "/proc/1/cgroup", "/proc/self/cgroup"} {
		vd, err := fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: p, FollowFinal: true})
		if err != nil {
			t.Fatal(err)
		}
		st, _ := vd.Stat(ctx)
		inos = append(inos, st.Ino)
	}
	if inos[0] != inos[1] || inos[2] != inos[3] {
		t.Errorf("inode numbers change between lookups: %v", inos)
	}
	if err := writeFile(t, ctx, root, "/proc/1/uid_map", "0 0 1\n"); err != unix.EPERM {
		t.Errorf("uid_map write: %v, want EPERM", err)
	}
}

func TestNonDumpableOwner(t *testing.T) {
	ctx, root, k := sysSetup(t)
	c := auth.NewRootCredentials()
	c.EffectiveUID, c.EffectiveGID = 1000, 1000
	k.task.creds = c
	for _, tc := range []struct {
		nonDumpable bool
		path        string
		uid         auth.KUID
	}{
		{false, "/proc/1", 1000},
		{false, "/proc/1/limits", 1000},
		{true, "/proc/1", 1000},
		{true, "/proc/1/cgroup", 0},
		{true, "/proc/1/fd", 0},
		{true, "/proc/1/ns", 0},
		{false, "/proc/1/fd", 1000},
	} {
		k.task.nonDumpable = tc.nonDumpable
		vd, err := fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: tc.path})
		if err != nil {
			t.Fatal(err)
		}
		if st, _ := vd.Stat(ctx); st.UID != tc.uid {
			t.Errorf("non-dumpable %v: %s owned by %d, want %d", tc.nonDumpable, tc.path, st.UID, tc.uid)
		}
	}
}

func TestMemFile(t *testing.T) {
	ctx, root, _ := sysSetup(t)
	f, err := fs.Open(ctx, fs.Lookup{Root: root, Start: root, Path: "/proc/1/mem"}, fs.OpenOptions{Flags: unix.O_RDWR})
	if err != nil {
		t.Fatal(err)
	}
	defer f.DecRef()
	buf := make([]byte, 8)
	for _, tc := range []struct {
		off  int64
		n    int
		err  error
		want string
	}{
		{0x1000, 8, nil, "01234567"},
		{0x100c, 4, nil, "cdef"},
		{0x2000, 0, unix.EIO, ""},
		{0, 0, unix.EIO, ""},
	} {
		n, err := f.PRead(ctx, buf, tc.off)
		if n != tc.n || err != tc.err || string(buf[:n]) != tc.want {
			t.Errorf("pread at %#x: %d %q, %v; want %d %q, %v", tc.off, n, buf[:n], err, tc.n, tc.want, tc.err)
		}
	}
	if n, err := f.PWrite(ctx, []byte("XY"), 0x1002); n != 2 || err != nil || string(fakeMem[:4]) != "01XY" {
		t.Errorf("pwrite: %d, %v, memory %q", n, err, fakeMem)
	}
}
