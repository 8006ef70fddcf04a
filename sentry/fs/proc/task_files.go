package proc

import (
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/synth"
)

// RLimInfinity is RLIM_INFINITY.
const RLimInfinity = ^uint64(0)

// Limit is one resource limit.
type Limit struct{ Cur, Max uint64 }

// LimitsTask is implemented by processes that show /proc/[pid]/limits.
type LimitsTask interface {
	// Limits returns the limits indexed by RLIMIT_* number.
	Limits() []Limit
}

// OOMTask is implemented by processes that keep an oom_score_adj.
type OOMTask interface {
	OOMScoreAdj() int32
	// SetOOMScoreAdj sets the value as a write by ctx's task would (EACCES
	// when lowering it below the floor without CAP_SYS_RESOURCE).
	SetOOMScoreAdj(ctx fs.Context, v int32) error
}

// CommTask is implemented by tasks whose name /proc/[pid]/comm changes.
type CommTask interface {
	// SetComm renames the task as a write by ctx's task would: only a
	// thread of the same process may (EINVAL otherwise).
	SetComm(ctx fs.Context, name string) error
}

// PersonalityTask is implemented by processes that show their
// personality(2) in /proc/[pid]/personality.
type PersonalityTask interface {
	Personality() uint32
}

// TimerSlackTask is implemented by tasks whose timer slack
// /proc/[pid]/timerslack_ns shows and sets.
type TimerSlackTask interface {
	TimerSlack() uint64
	// SetTimerSlack sets it for a write by ctx's task (another task's
	// takes CAP_SYS_NICE); 0 restores the inherited default.
	SetTimerSlack(ctx fs.Context, ns uint64) error
}

// ResidentTask is implemented by processes that can say how much of a
// range of their address space is backed by memory (smaps' Rss).
type ResidentTask interface {
	ResidentIn(start, end uint64) uint64
}

// limitNames are /proc/[pid]/limits' rows: name and unit, by RLIMIT_*.
var limitNames = [...]struct{ name, unit string }{
	unix.RLIMIT_CPU:        {"Max cpu time", "seconds"},
	unix.RLIMIT_FSIZE:      {"Max file size", "bytes"},
	unix.RLIMIT_DATA:       {"Max data size", "bytes"},
	unix.RLIMIT_STACK:      {"Max stack size", "bytes"},
	unix.RLIMIT_CORE:       {"Max core file size", "bytes"},
	unix.RLIMIT_RSS:        {"Max resident set", "bytes"},
	unix.RLIMIT_NPROC:      {"Max processes", "processes"},
	unix.RLIMIT_NOFILE:     {"Max open files", "files"},
	unix.RLIMIT_MEMLOCK:    {"Max locked memory", "bytes"},
	unix.RLIMIT_AS:         {"Max address space", "bytes"},
	unix.RLIMIT_LOCKS:      {"Max file locks", "locks"},
	unix.RLIMIT_SIGPENDING: {"Max pending signals", "signals"},
	unix.RLIMIT_MSGQUEUE:   {"Max msgqueue size", "bytes"},
	unix.RLIMIT_NICE:       {"Max nice priority", ""},
	unix.RLIMIT_RTPRIO:     {"Max realtime priority", ""},
	unix.RLIMIT_RTTIME:     {"Max realtime timeout", "us"},
}

// limitsText is /proc/[pid]/limits, laid out as Linux does.
func limitsText(l []Limit) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-25s %-20s %-20s %-10s\n", "Limit", "Soft Limit", "Hard Limit", "Units")
	val := func(v uint64) string {
		if v == RLimInfinity {
			return "unlimited"
		}
		return strconv.FormatUint(v, 10)
	}
	for r, n := range limitNames {
		if r >= len(l) {
			break
		}
		fmt.Fprintf(&b, "%-25s %-20s %-20s ", n.name, val(l[r].Cur), val(l[r].Max))
		if n.unit != "" {
			fmt.Fprintf(&b, "%-10s", n.unit)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// mapping is one line of /proc/[pid]/maps, parsed back.
type mapping struct {
	line       string
	start, end uint64
	perms      string
	name       string
}

func parseMaps(s string) []mapping {
	var out []mapping
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		se := strings.SplitN(f[0], "-", 2)
		if len(se) != 2 {
			continue
		}
		start, err1 := strconv.ParseUint(se[0], 16, 64)
		end, err2 := strconv.ParseUint(se[1], 16, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		m := mapping{line: line, start: start, end: end, perms: f[1]}
		if len(f) > 5 {
			m.name = strings.Join(f[5:], " ")
		}
		out = append(out, m)
	}
	return out
}

// anonymous reports whether a mapping is anonymous memory (heap, stack or
// a mapping with no name).
func (m mapping) anonymous() bool {
	return m.name == "" || m.name == "[heap]" || m.name == "[stack]"
}

// smapsText is /proc/[pid]/smaps: each mapping with its memory counts.
// Every resident page is counted as private and dirty (the Sentry does
// not track which pages are shared or written).
func smapsText(maps string, rt ResidentTask) string {
	var b strings.Builder
	kb := func(name string, v uint64) { fmt.Fprintf(&b, "%-16s%8d kB\n", name+":", v/1024) }
	for _, m := range parseMaps(maps) {
		size := m.end - m.start
		var rss uint64
		if rt != nil {
			rss = rt.ResidentIn(m.start, m.end)
		}
		var anon uint64
		if m.anonymous() {
			anon = rss
		}
		b.WriteString(m.line)
		b.WriteByte('\n')
		kb("Size", size)
		kb("KernelPageSize", 4096)
		kb("MMUPageSize", 4096)
		kb("Rss", rss)
		kb("Pss", rss)
		kb("Pss_Dirty", rss)
		kb("Shared_Clean", 0)
		kb("Shared_Dirty", 0)
		kb("Private_Clean", 0)
		kb("Private_Dirty", rss)
		kb("Referenced", rss)
		kb("Anonymous", anon)
		kb("KSM", 0)
		kb("LazyFree", 0)
		kb("AnonHugePages", 0)
		kb("ShmemPmdMapped", 0)
		kb("FilePmdMapped", 0)
		kb("Shared_Hugetlb", 0)
		kb("Private_Hugetlb", 0)
		kb("Swap", 0)
		kb("SwapPss", 0)
		kb("Locked", 0)
		fmt.Fprintf(&b, "%-16s%8d\n", "THPeligible:", 0)
		b.WriteString("VmFlags:")
		for i, fl := range []string{"rd", "wr", "ex"} {
			if len(m.perms) > i && m.perms[i] != '-' {
				b.WriteString(" " + fl)
			}
		}
		b.WriteString(" mr mw me")
		if len(m.perms) > 3 && m.perms[3] == 's' {
			b.WriteString(" sh")
		}
		if m.name == "[stack]" {
			b.WriteString(" gd")
		}
		b.WriteString(" ac \n")
	}
	return b.String()
}

// smapsRollupText is /proc/[pid]/smaps_rollup: smaps' counts summed over
// every mapping, under a header spanning them all.
func smapsRollupText(maps string, rt ResidentTask) string {
	ms := parseMaps(maps)
	if len(ms) == 0 {
		return ""
	}
	var rss, anon uint64
	for _, m := range ms {
		if rt == nil {
			continue
		}
		r := rt.ResidentIn(m.start, m.end)
		rss += r
		if m.anonymous() {
			anon += r
		}
	}
	var b strings.Builder
	kb := func(name string, v uint64) { fmt.Fprintf(&b, "%-16s%8d kB\n", name+":", v/1024) }
	fmt.Fprintf(&b, "%-72s %s\n", fmt.Sprintf("%08x-%08x ---p 00000000 00:00 0", ms[0].start, ms[len(ms)-1].end), "[rollup]")
	kb("Rss", rss)
	kb("Pss", rss)
	kb("Pss_Dirty", rss)
	kb("Pss_Anon", anon)
	kb("Pss_File", rss-anon)
	kb("Pss_Shmem", 0)
	kb("Shared_Clean", 0)
	kb("Shared_Dirty", 0)
	kb("Private_Clean", 0)
	kb("Private_Dirty", rss)
	kb("Referenced", rss)
	kb("Anonymous", anon)
	for _, n := range []string{"KSM", "LazyFree", "AnonHugePages", "ShmemPmdMapped", "FilePmdMapped",
		"Shared_Hugetlb", "Private_Hugetlb", "Swap", "SwapPss", "Locked"} {
		kb(n, 0)
	}
	return b.String()
}

// statmText is /proc/[pid]/statm, in pages: size resident shared text
// lib data dt. Text is the executable mappings of the program file, data
// the private writable mappings (as VmData counts them).
func statmText(maps string, rss uint64) string {
	ms := parseMaps(maps)
	var size, text, data uint64
	exeName := ""
	if len(ms) > 0 {
		exeName = ms[0].name
	}
	for _, m := range ms {
		n := m.end - m.start
		size += n
		if strings.HasPrefix(m.perms, "r-x") && m.name == exeName && exeName != "" {
			text += n
		}
		if len(m.perms) > 3 && m.perms[1] == 'w' && m.perms[3] == 'p' && m.name != "[stack]" {
			data += n
		}
	}
	const page = 4096
	return fmt.Sprintf("%d %d 0 %d 0 %d 0\n", size/page, rss/page, text/page, data/page)
}

// parseOOMScoreAdj parses a write to oom_score_adj as kstrtoint(base 0)
// after trimming white space.
func parseOOMScoreAdj(data []byte) (int32, error) {
	if len(data) > 23 {
		data = data[:23]
	}
	s := strings.TrimSpace(string(data))
	digits := strings.TrimLeft(s, "+-")
	if len(s)-len(digits) > 1 || strings.Contains(s, "_") {
		return 0, unix.EINVAL
	}
	// Base 0 as the kernel has it: 0x for hexadecimal, 0 for octal; Go's
	// 0b and 0o are not numbers there.
	if len(digits) > 1 && digits[0] == '0' && strings.ContainsAny(digits[1:2], "bBoO") {
		return 0, unix.EINVAL
	}
	v, err := strconv.ParseInt(s, 0, 32)
	if err != nil {
		return 0, unix.EINVAL
	}
	if v < -1000 || v > 1000 {
		return 0, unix.EINVAL
	}
	return int32(v), nil
}

// addTaskFiles adds the files of optional task interfaces and the fixed
// per-process files.
func addTaskFiles(t Task, entries map[string]fs.Node, owned func(uint32) synth.Attr) {
	entries["cgroup"] = &synth.File{Attr: owned(0o444), SizeZero: true, Generate: func(fs.Context) ([]byte, error) {
		return []byte("0::/\n"), nil
	}}
	entries["uid_map"] = newIDMapNode(t, uidMapFile, owned(0o644))
	entries["gid_map"] = newIDMapNode(t, gidMapFile, owned(0o644))
	entries["setgroups"] = newIDMapNode(t, setgroupsFile, owned(0o644))
	entries["ns"] = nsDir(owned(0o511), t)
	static := func(mode uint32, text string, werr error) *synth.File {
		f := &synth.File{Attr: owned(mode), SizeZero: true, Generate: func(fs.Context) ([]byte, error) { return []byte(text), nil }}
		if werr != nil {
			f.Write = func(fs.Context, []byte) (int, error) { return 0, werr }
		}
		return f
	}
	// No audit subsystem: no login uid or session (changing them takes
	// CAP_AUDIT_CONTROL, which nothing in the sandbox is granted).
	entries["loginuid"] = static(0o644, "4294967295", unix.EPERM)
	entries["sessionid"] = static(0o444, "4294967295", nil)
	entries["wchan"] = static(0o444, "0", nil)
	entries["coredump_filter"] = static(0o444, "00000033\n", nil)
	if pt, ok := t.(PersonalityTask); ok {
		// Read only after the ptrace access check: EPERM otherwise,
		// at read, as Linux's proc_pid_personality.
		entries["personality"] = &synth.File{Attr: owned(0o400), SizeZero: true, ReadError: true,
			Generate: func(ctx fs.Context) ([]byte, error) {
				if mayPtrace(t, ctx) != nil {
					return nil, unix.EPERM
				}
				return []byte(fmt.Sprintf("%08x\n", pt.Personality())), nil
			}}
	}
	if ct, ok := t.(CommTask); ok {
		entries["comm"] = &synth.File{Attr: owned(0o644), SizeZero: true,
			Generate: func(fs.Context) ([]byte, error) { return []byte(t.Comm() + "\n"), nil },
			Write: func(ctx fs.Context, data []byte) (int, error) {
				name := data
				// Linux copies at most TASK_COMM_LEN-1 bytes, newline
				// included, and stops at a NUL.
				if len(name) > 15 {
					name = name[:15]
				}
				if i := strings.IndexByte(string(name), 0); i >= 0 {
					name = name[:i]
				}
				if err := ct.SetComm(ctx, string(name)); err != nil {
					return 0, err
				}
				return len(data), nil
			}}
	}
	if lt, ok := t.(LimitsTask); ok {
		entries["limits"] = &synth.File{Attr: owned(0o444), SizeZero: true, Generate: func(fs.Context) ([]byte, error) {
			return []byte(limitsText(lt.Limits())), nil
		}}
	}
	if ot, ok := t.(OOMTask); ok {
		entries["oom_score_adj"] = &synth.File{Attr: owned(0o644), SizeZero: true,
			Generate: func(fs.Context) ([]byte, error) {
				return []byte(strconv.Itoa(int(ot.OOMScoreAdj())) + "\n"), nil
			},
			Write: func(ctx fs.Context, data []byte) (int, error) {
				v, err := parseOOMScoreAdj(data)
				if err != nil {
					return 0, err
				}
				if err := ot.SetOOMScoreAdj(ctx, v); err != nil {
					return 0, err
				}
				return len(data), nil
			}}
	}
	if tt, ok := t.(TimerSlackTask); ok {
		entries["timerslack_ns"] = &synth.File{Attr: owned(0o666), SizeZero: true,
			Generate: func(fs.Context) ([]byte, error) {
				return []byte(strconv.FormatUint(tt.TimerSlack(), 10) + "\n"), nil
			},
			Write: func(ctx fs.Context, data []byte) (int, error) {
				// kstrtoull, base 10, one trailing newline allowed.
				v, err := strconv.ParseUint(strings.TrimSuffix(string(data), "\n"), 10, 64)
				if err != nil {
					return 0, unix.EINVAL
				}
				if err := tt.SetTimerSlack(ctx, v); err != nil {
					return 0, err
				}
				return len(data), nil
			}}
	}
	if ma, ok := t.(MemAccessTask); ok {
		entries["mem"] = newMemNode(ma, owned(0o600))
	}
	if mt, ok := t.(MemTask); ok {
		rt, _ := t.(ResidentTask)
		// Like maps, the ptrace access check (Linux's proc_maps_open).
		check := ptraceCheck(t)
		entries["smaps"] = &synth.File{Attr: owned(0o444), SizeZero: true, Check: check,
			Generate: func(fs.Context) ([]byte, error) { return []byte(smapsText(mt.Maps(), rt)), nil }}
		entries["smaps_rollup"] = &synth.File{Attr: owned(0o444), SizeZero: true, Check: check,
			Generate: func(fs.Context) ([]byte, error) { return []byte(smapsRollupText(mt.Maps(), rt)), nil }}
		entries["statm"] = &synth.File{Attr: owned(0o444), SizeZero: true, Generate: func(fs.Context) ([]byte, error) {
			var rss uint64
			ms := mt.Maps()
			if rt != nil {
				for _, m := range parseMaps(ms) {
					rss += rt.ResidentIn(m.start, m.end)
				}
			}
			return []byte(statmText(ms, rss)), nil
		}}
	}
}
