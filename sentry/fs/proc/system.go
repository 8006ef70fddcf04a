package proc

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/synth"
	"github.com/moat-sandbox/moat/sentry/hostrand"
)

// System is implemented by kernels that give /proc its system files
// (cpuinfo, meminfo, stat, uptime, loadavg, version, vmstat, swaps,
// partitions, diskstats, cmdline and sys/). Every value describes the
// sandbox, never the host.
type System interface {
	// SystemInfo returns what does not change while the sandbox runs.
	SystemInfo() SystemInfo
	// SystemStats returns the counters of the moment.
	SystemStats() SystemStats
	// Hostname and Domainname are the UTS names of ctx's UTS namespace.
	Hostname(ctx fs.Context) string
	Domainname(ctx fs.Context) string
	// SetUTSName sets the host name (or the domain name, if domain) for
	// a write to its sysctl file, whose mode was the access check.
	SetUTSName(ctx fs.Context, domain bool, name string) error
}

// SystemInfo is the sandbox's fixed description.
type SystemInfo struct {
	// NumCPUs is how many CPUs the sandbox shows.
	NumCPUs int
	// CPUInfo is /proc/cpuinfo.
	CPUInfo string
	// Release and Version are uname's release and version.
	Release, Version string
	// BootTime is when the sandbox started.
	BootTime time.Time
	// PIDMax is the largest pid plus one.
	PIDMax int
	// NROpen is the largest RLIMIT_NOFILE hard limit.
	NROpen int
	// PipeMaxSize is the largest pipe capacity an unprivileged process
	// may set.
	PipeMaxSize int
	// CapLastCap is the highest capability number.
	CapLastCap int
	// NGroupsMax is the most supplementary groups a process may have.
	NGroupsMax int
	// MmapMinAddr is the lowest address mmap gives.
	MmapMinAddr int
}

// SystemStats are the sandbox's counters.
type SystemStats struct {
	// MemTotal and MemFree are bytes.
	MemTotal, MemFree uint64
	// Threads is how many threads exist, Running how many are runnable.
	Threads, Running int
	// LastPID is the most recently allocated pid; Forks counts the
	// processes and threads created since boot.
	LastPID int32
	Forks   uint64
	// User and System are the CPU times the sandbox's tasks used.
	User, System time.Duration
}

// clockTicks is USER_HZ: /proc/stat counts in 1/100 s.
const clockTicks = 100

// bootID is /proc/sys/kernel/random/boot_id: one Sentry is one sandbox.
var bootID = sync.OnceValue(newUUID)

// newUUID returns a random (version 4) UUID as Linux formats it.
func newUUID() string {
	var b [16]byte
	hostrand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// systemEntries returns the root entries built from s.
func systemEntries(s System) map[string]fs.Node {
	gen := func(f func() string) *synth.File {
		return synth.NewGenFile(0o444, func(fs.Context) ([]byte, error) { return []byte(f()), nil })
	}
	return map[string]fs.Node{
		"cpuinfo": gen(func() string { return s.SystemInfo().CPUInfo }),
		"meminfo": gen(func() string { return meminfoText(s.SystemStats()) }),
		"stat":    gen(func() string { return statText(s.SystemInfo(), s.SystemStats()) }),
		"uptime":  gen(func() string { return uptimeText(s.SystemInfo(), s.SystemStats()) }),
		"loadavg": gen(func() string { return loadavgText(s.SystemStats()) }),
		"version": gen(func() string {
			i := s.SystemInfo()
			return fmt.Sprintf("Linux version %s (moat@moat) (Moat sandbox) %s\n", i.Release, i.Version)
		}),
		"vmstat": gen(func() string { return vmstatText(s.SystemStats()) }),
		// No swap, no block devices, a kernel command line naming Moat.
		"swaps":      synth.NewGenFile(0o444, constText("Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n")),
		"partitions": synth.NewGenFile(0o444, constText("major minor  #blocks  name\n\n")),
		"diskstats":  synth.NewGenFile(0o444, constText("")),
		"cmdline": gen(func() string {
			return "BOOT_IMAGE=/vmlinuz-" + s.SystemInfo().Release + "-moat quiet\n"
		}),
		"sys":     sysctlDir(s),
		"sysvipc": sysvipcDir(s),
	}
}

// constText returns a generator of fixed contents.
func constText(t string) func(fs.Context) ([]byte, error) {
	return func(fs.Context) ([]byte, error) { return []byte(t), nil }
}

// meminfoText is /proc/meminfo: the sandbox's memory, no swap, nothing
// cached.
func meminfoText(st SystemStats) string {
	var b strings.Builder
	kb := func(name string, v uint64) { fmt.Fprintf(&b, "%-16s%8d kB\n", name+":", v/1024) }
	n := func(name string, v uint64) { fmt.Fprintf(&b, "%-16s%8d\n", name+":", v) }
	used := st.MemTotal - st.MemFree
	kb("MemTotal", st.MemTotal)
	kb("MemFree", st.MemFree)
	kb("MemAvailable", st.MemFree)
	kb("Buffers", 0)
	kb("Cached", 0)
	kb("SwapCached", 0)
	kb("Active", used)
	kb("Inactive", 0)
	kb("Active(anon)", used)
	kb("Inactive(anon)", 0)
	kb("Active(file)", 0)
	kb("Inactive(file)", 0)
	kb("Unevictable", 0)
	kb("Mlocked", 0)
	kb("SwapTotal", 0)
	kb("SwapFree", 0)
	kb("Dirty", 0)
	kb("Writeback", 0)
	kb("AnonPages", used)
	kb("Mapped", 0)
	kb("Shmem", 0)
	kb("KReclaimable", 0)
	kb("Slab", 0)
	kb("SReclaimable", 0)
	kb("SUnreclaim", 0)
	kb("KernelStack", 0)
	kb("PageTables", 0)
	kb("NFS_Unstable", 0)
	kb("Bounce", 0)
	kb("WritebackTmp", 0)
	kb("CommitLimit", st.MemTotal/2)
	kb("Committed_AS", used)
	kb("VmallocTotal", 34359738367*1024)
	kb("VmallocUsed", 0)
	kb("VmallocChunk", 0)
	kb("AnonHugePages", 0)
	kb("ShmemHugePages", 0)
	kb("ShmemPmdMapped", 0)
	n("HugePages_Total", 0)
	n("HugePages_Free", 0)
	n("HugePages_Rsvd", 0)
	n("HugePages_Surp", 0)
	kb("Hugepagesize", 2048*1024)
	kb("Hugetlb", 0)
	return b.String()
}

// vmstatText is /proc/vmstat: page counts of the sandbox's memory (all
// of it anonymous) and event counters the Sentry does not keep, as 0.
func vmstatText(st SystemStats) string {
	free := st.MemFree / 4096
	used := (st.MemTotal - st.MemFree) / 4096
	var b strings.Builder
	for _, kv := range []struct {
		name string
		v    uint64
	}{
		{"nr_free_pages", free}, {"nr_zone_inactive_anon", 0}, {"nr_zone_active_anon", used},
		{"nr_zone_inactive_file", 0}, {"nr_zone_active_file", 0}, {"nr_zone_unevictable", 0},
		{"nr_zone_write_pending", 0}, {"nr_mlock", 0}, {"nr_bounce", 0},
		{"nr_inactive_anon", 0}, {"nr_active_anon", used}, {"nr_inactive_file", 0}, {"nr_active_file", 0},
		{"nr_unevictable", 0}, {"nr_slab_reclaimable", 0}, {"nr_slab_unreclaimable", 0},
		{"nr_isolated_anon", 0}, {"nr_isolated_file", 0}, {"nr_anon_pages", used}, {"nr_mapped", 0},
		{"nr_file_pages", 0}, {"nr_dirty", 0}, {"nr_writeback", 0}, {"nr_shmem", 0},
		{"nr_page_table_pages", 0}, {"nr_kernel_stack", 0},
		{"pgpgin", 0}, {"pgpgout", 0}, {"pswpin", 0}, {"pswpout", 0},
		{"pgalloc_normal", 0}, {"pgfree", 0}, {"pgactivate", 0}, {"pgdeactivate", 0},
		{"pgfault", 0}, {"pgmajfault", 0}, {"pgscan_kswapd", 0}, {"pgscan_direct", 0},
		{"pgsteal_kswapd", 0}, {"pgsteal_direct", 0}, {"oom_kill", 0},
	} {
		fmt.Fprintf(&b, "%s %d\n", kv.name, kv.v)
	}
	return b.String()
}

// idle is the CPU time nobody used since boot (at least 0).
func idle(i SystemInfo, st SystemStats) time.Duration {
	up := time.Since(i.BootTime)
	d := up*time.Duration(max(i.NumCPUs, 1)) - st.User - st.System
	return max(d, 0)
}

// statText is /proc/stat: the tasks' times spread evenly over the CPUs.
func statText(i SystemInfo, st SystemStats) string {
	ncpu := max(i.NumCPUs, 1)
	ticks := func(d time.Duration) uint64 { return uint64(d / (time.Second / clockTicks)) }
	u, s, id := ticks(st.User), ticks(st.System), ticks(idle(i, st))
	var b strings.Builder
	fmt.Fprintf(&b, "cpu  %d 0 %d %d 0 0 0 0 0 0\n", u, s, id)
	for c := 0; c < ncpu; c++ {
		share := func(v uint64) uint64 {
			q := v / uint64(ncpu)
			if uint64(c) < v%uint64(ncpu) {
				q++
			}
			return q
		}
		fmt.Fprintf(&b, "cpu%d %d 0 %d %d 0 0 0 0 0 0\n", c, share(u), share(s), share(id))
	}
	fmt.Fprintf(&b, "intr 0\nctxt 0\nbtime %d\nprocesses %d\nprocs_running %d\nprocs_blocked 0\nsoftirq 0 0 0 0 0 0 0 0 0 0 0\n",
		i.BootTime.Unix(), st.Forks, max(st.Running, 1))
	return b.String()
}

// uptimeText is /proc/uptime: seconds since boot and idle CPU seconds.
func uptimeText(i SystemInfo, st SystemStats) string {
	up := time.Since(i.BootTime)
	cs := func(d time.Duration) string {
		c := d / (10 * time.Millisecond)
		return fmt.Sprintf("%d.%02d", c/100, c%100)
	}
	return cs(up) + " " + cs(idle(i, st)) + "\n"
}

// loadavgText is /proc/loadavg. The Sentry keeps no load average: 0.
func loadavgText(st SystemStats) string {
	return fmt.Sprintf("0.00 0.00 0.00 %d/%d %d\n", max(st.Running, 1), st.Threads, st.LastPID)
}

// sysctlFile is a /proc/sys file. Linux checks a sysctl's mode bits
// without CAP_DAC_OVERRIDE: a read-only one refuses to be opened for
// writing, even by root.
type sysctlFile struct {
	*synth.File
}

// Open implements fs.OpenNode.
func (f sysctlFile) Open(ctx fs.Context, vd fs.VirtualDentry, flags uint32) (*fs.FileDescription, error) {
	if f.Write == nil && flags&unix.O_ACCMODE != unix.O_RDONLY {
		return nil, unix.EACCES
	}
	return f.File.Open(ctx, vd, flags)
}

// sysctlValue is one /proc/sys file: a value read fresh at each open and,
// if set is not nil, a writer for root.
func sysctlValue(get func() string, set func(ctx fs.Context, v string) error) sysctlFile {
	return sysctlCtxValue(func(fs.Context) string { return get() }, set)
}

// sysctlCtxValue is sysctlValue for a value that depends on the reader
// (its namespace).
func sysctlCtxValue(get func(fs.Context) string, set func(ctx fs.Context, v string) error) sysctlFile {
	f := synth.NewGenFile(0o444, func(ctx fs.Context) ([]byte, error) { return []byte(get(ctx) + "\n"), nil })
	if set != nil {
		f.Mode = 0o644
		f.Write = func(ctx fs.Context, data []byte) (int, error) {
			v := string(data)
			// proc_dostring stops at the first newline or NUL.
			if i := strings.IndexAny(v, "\n\x00"); i >= 0 {
				v = v[:i]
			}
			if err := set(ctx, v); err != nil {
				return 0, err
			}
			return len(data), nil
		}
	}
	return sysctlFile{f}
}

func constValue(v string) sysctlFile {
	return sysctlValue(func() string { return v }, nil)
}

// utsNameMax is __NEW_UTS_LEN: longer names are cut, as proc_dostring does.
const utsNameMax = 64

// sysctlDir is /proc/sys: the tunables programs read to learn the
// sandbox's limits. The UTS names and the settable sysctls (settings.go)
// are writable.
func sysctlDir(s System) fs.Node {
	info := s.SystemInfo
	itoa := func(f func(SystemInfo) int) sysctlFile {
		return sysctlValue(func() string { return fmt.Sprint(f(info())) }, nil)
	}
	setUTS := func(domain bool) func(fs.Context, string) error {
		return func(ctx fs.Context, v string) error {
			if len(v) > utsNameMax {
				v = v[:utsNameMax]
			}
			return s.SetUTSName(ctx, domain, v)
		}
	}
	random := map[string]fs.Node{
		"boot_id":       constValue(bootID()),
		"uuid":          sysctlValue(newUUID, nil),
		"entropy_avail": constValue("256"),
		"poolsize":      constValue("256"),
	}
	kernel := map[string]fs.Node{
		"hostname":           sysctlCtxValue(s.Hostname, setUTS(false)),
		"domainname":         sysctlCtxValue(s.Domainname, setUTS(true)),
		"ostype":             constValue("Linux"),
		"osrelease":          sysctlValue(func() string { return info().Release }, nil),
		"version":            sysctlValue(func() string { return info().Version }, nil),
		"pid_max":            itoa(func(i SystemInfo) int { return i.PIDMax }),
		"threads-max":        itoa(func(i SystemInfo) int { return i.PIDMax }),
		"cap_last_cap":       itoa(func(i SystemInfo) int { return i.CapLastCap }),
		"ngroups_max":        itoa(func(i SystemInfo) int { return i.NGroupsMax }),
		"overflowuid":        constValue("65534"),
		"overflowgid":        constValue("65534"),
		"randomize_va_space": constValue("2"),
		"shmmax":             constValue("18446744073692774399"),
		"shmall":             constValue("18446744073692774399"),
		"shmmni":             constValue("4096"),
		"msgmax":             constValue("8192"),
		"msgmnb":             constValue("16384"),
		"msgmni":             constValue("32000"),
		"sem":                constValue("32000\t1024000000\t500\t32000"),
	}
	vm := map[string]fs.Node{
		"overcommit_memory": constValue("0"),
		"overcommit_ratio":  constValue("50"),
		"max_map_count":     constValue("65530"),
		"mmap_min_addr":     itoa(func(i SystemInfo) int { return i.MmapMinAddr }),
	}
	fsDir := map[string]fs.Node{
		"file-max":      constValue("9223372036854775807"),
		"nr_open":       itoa(func(i SystemInfo) int { return i.NROpen }),
		"pipe-max-size": itoa(func(i SystemInfo) int { return i.PipeMaxSize }),
	}
	// The Sentry's queue limits are Linux's defaults, fixed
	// (sentry/fs/mqueue).
	mqueue := map[string]fs.Node{
		"msg_max":         constValue("10"),
		"msgsize_max":     constValue("8192"),
		"msg_default":     constValue("10"),
		"msgsize_default": constValue("8192"),
		"queues_max":      constValue("256"),
	}
	inotify := map[string]fs.Node{
		"max_user_watches":   constValue("8192"),
		"max_user_instances": constValue("128"),
		"max_queued_events":  constValue("16384"),
	}
	dirs := map[string]map[string]fs.Node{
		"":              {},
		"kernel":        kernel,
		"kernel.random": random,
		"vm":            vm,
		"fs":            fsDir,
		"fs.mqueue":     mqueue,
		"fs.inotify":    inotify,
		"net":           {},
	}
	set := &Settings{}
	if sk, ok := s.(SettingsKernel); ok {
		set = sk.Settings()
	}
	addSettableSysctls(set, dirs)
	return sysctlTree(dirs)
}
