package kernel

import (
	"fmt"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// This file builds /proc/[pid]/stat and status, field by field in Linux's
// order.

// mapsUsage sums the mappings as status's VmData, VmStk, VmExe and VmLib
// count them: private writable memory, the stack, the program's
// executable mappings and other executable file mappings. Bytes.
func mapsUsage(maps string) (data, stk, exe, lib uint64) {
	exeName := ""
	for i, line := range strings.Split(maps, "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		var start, end uint64
		if _, err := fmt.Sscanf(f[0], "%x-%x", &start, &end); err != nil {
			continue
		}
		name := ""
		if len(f) > 5 {
			name = strings.Join(f[5:], " ")
		}
		if i == 0 {
			exeName = name
		}
		n, perms := end-start, f[1]
		switch {
		case name == "[stack]":
			stk += n
		case perms[2] == 'x' && name != "" && name == exeName:
			exe += n
		case perms[2] == 'x' && name != "" && name[0] == '/':
			lib += n
		case perms[1] == 'w' && perms[3] == 'p':
			data += n
		}
	}
	return data, stk, exe, lib
}

// maskWords formats a bitmap of nbits as Linux's "%*pb": 32-bit chunks,
// most significant first, comma separated, the first chunk as wide as the
// bits left over.
func maskWords(words []uint32, nbits int) string {
	var b strings.Builder
	first := ((nbits-1)%32 + 1 + 3) / 4
	for i := len(words) - 1; i >= 0; i-- {
		w := 8
		if i == len(words)-1 {
			w = first
		} else {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%0*x", w, words[i])
	}
	return b.String()
}

// cpuSetText returns a CPU set as status's Cpus_allowed and
// Cpus_allowed_list show it.
func cpuSetText(s CPUSet, ncpu int) (mask, list string) {
	words := make([]uint32, (ncpu+31)/32)
	var ranges []string
	start := -1
	for c := 0; c <= ncpu; c++ {
		in := c < ncpu && c/64 < len(s) && s[c/64]&(1<<(c%64)) != 0
		if in {
			words[c/32] |= 1 << (c % 32)
			if start < 0 {
				start = c
			}
			continue
		}
		if start >= 0 {
			if start == c-1 {
				ranges = append(ranges, fmt.Sprint(start))
			} else {
				ranges = append(ranges, fmt.Sprintf("%d-%d", start, c-1))
			}
			start = -1
		}
	}
	return maskWords(words, ncpu), strings.Join(ranges, ",")
}

// memsAllowed is one memory node out of MAX_NUMNODES (1024).
var memsAllowed = func() string {
	w := make([]uint32, 32)
	w[0] = 1
	return maskWords(w, 1024)
}()

// signalSets returns the status signal lines' sets for the thread t.
func signalSets(t *Task) (pnd, shd, blk, ign, cgt SignalSet, queued int) {
	t.k.mu.Lock()
	defer t.k.mu.Unlock()
	pnd, shd, blk = t.pending.set, t.tg.pending.set, t.sigMask
	queued = t.pending.count + t.tg.pending.count
	for s := Signal(1); s <= SignalMaximum; s++ {
		switch a := t.sigHandlers.actions[s]; a.Handler {
		case SIG_IGN:
			ign |= SignalSetOf(s)
		case SIG_DFL:
		default:
			cgt |= SignalSetOf(s)
		}
	}
	return
}

// StatusText implements proc.StatTask.
func (p procTask) StatusText() string { return p.StatusTextFor(nil) }

// StatusTextFor implements proc.StatusForTask: the ids as user namespace
// reader sees them.
func (p procTask) StatusTextFor(reader *auth.UserNamespace) string {
	t := p.leader()
	if t == nil {
		return ""
	}
	c := t.Credentials()
	st := p.state()
	var vm, rss, hwm, lck, data, stk, exe, lib uint64
	if m := p.memory(); m != nil {
		vm, rss, hwm, lck = m.VirtualSize(), m.ResidentSize(), m.MaxResidentSize(), m.LockedSize()
		data, stk, exe, lib = mapsUsage(m.Maps())
	}
	ns := p.pidns()
	umask := 0
	if fc := t.FSContext(); fc != nil {
		umask = int(fc.Umask())
	}
	var b strings.Builder
	kb := func(name string, v uint64) { fmt.Fprintf(&b, "%s:\t%8d kB\n", name, v/1024) }
	fmt.Fprintf(&b, "Name:\t%s\nUmask:\t%04o\nState:\t%c (%s)\nTgid:\t%d\nNgid:\t0\nPid:\t%d\nPPid:\t%d\nTracerPid:\t0\n",
		t.Name(), umask, st.Letter(), st.Name(), ns.IDOfThreadGroup(p.tg), p.PID(), ns.ParentIDOf(p.tg))
	// Ids as the reader's user namespace sees them.
	u, g := reader.UIDOf, reader.GIDOf
	fmt.Fprintf(&b, "Uid:\t%d\t%d\t%d\t%d\nGid:\t%d\t%d\t%d\t%d\nFDSize:\t64\nGroups:\t",
		u(c.RealUID), u(c.EffectiveUID), u(c.SavedUID), u(c.FilesystemUID),
		g(c.RealGID), g(c.EffectiveGID), g(c.SavedGID), g(c.FilesystemGID))
	for i, x := range c.ExtraGIDs {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprint(&b, g(x))
	}
	// Linux ends the list with a space, groups or not.
	b.WriteString(" \n")
	// The NS lines list the ids from the /proc's namespace inwards.
	nsLine := func(name string, ids []ThreadID) {
		b.WriteString(name)
		b.WriteString(":")
		for _, id := range ids {
			fmt.Fprintf(&b, "\t%d", id)
		}
		b.WriteString("\n")
	}
	nsLine("NStgid", ns.NSTGIDs(t))
	nsLine("NSpid", ns.NSIDs(t))
	fmt.Fprintf(&b, "NSpgid:\t%d\nNSsid:\t%d\n", ns.ProcessGroupIDOf(p.tg), ns.SessionIDOf(p.tg))
	if p.memory() != nil {
		kb("VmPeak", vm)
		kb("VmSize", vm)
		kb("VmLck", lck)
		kb("VmPin", 0)
		kb("VmHWM", max(hwm, rss))
		kb("VmRSS", rss)
		kb("RssAnon", rss)
		kb("RssFile", 0)
		kb("RssShmem", 0)
		kb("VmData", data)
		kb("VmStk", stk)
		kb("VmExe", exe)
		kb("VmLib", lib)
		kb("VmPTE", 0)
		kb("VmSwap", 0)
		kb("HugetlbPages", 0)
		fmt.Fprintf(&b, "CoreDumping:\t0\nTHP_enabled:\t%d\n", boolInt(!p.tg.THPDisabled()))
	}
	pnd, shd, blk, ign, cgt, queued := signalSets(t)
	sigLimit := p.tg.limits.Get(unix.RLIMIT_SIGPENDING).Cur
	fmt.Fprintf(&b, "Threads:\t%d\nSigQ:\t%d/%d\nSigPnd:\t%016x\nShdPnd:\t%016x\nSigBlk:\t%016x\nSigIgn:\t%016x\nSigCgt:\t%016x\n",
		len(p.tg.Tasks()), queued, sigLimit, uint64(pnd), uint64(shd), uint64(blk), uint64(ign), uint64(cgt))
	fmt.Fprintf(&b, "CapInh:\t%016x\nCapPrm:\t%016x\nCapEff:\t%016x\nCapBnd:\t%016x\nCapAmb:\t%016x\nNoNewPrivs:\t%d\nSeccomp:\t%d\nSeccomp_filters:\t%d\n",
		uint64(c.InheritableCaps), uint64(c.PermittedCaps), uint64(c.EffectiveCaps), uint64(c.BoundingCaps), uint64(c.AmbientCaps),
		boolInt(t.NoNewPrivs()), t.SeccompMode(), t.SeccompFilterCount())
	mask, list := cpuSetText(t.Affinity(), NumCPUs())
	fmt.Fprintf(&b, "Cpus_allowed:\t%s\nCpus_allowed_list:\t%s\nMems_allowed:\t%s\nMems_allowed_list:\t0\n", mask, list, memsAllowed)
	tru := t.Rusage()
	fmt.Fprintf(&b, "voluntary_ctxt_switches:\t%d\nnonvoluntary_ctxt_switches:\t%d\n", tru.NVCsw, tru.NIvCsw)
	return b.String()
}

// StatText implements proc.StatTask: the 52 fields of proc(5).
func (p procTask) StatText(addresses bool) string {
	t := p.leader()
	if t == nil {
		return ""
	}
	ns := p.pidns()
	u, s := p.cpuTimes()
	var cu, cs time.Duration
	if p.thread == nil {
		cu, cs = p.tg.ChildCPUTimes()
	}
	var vsize, rss uint64
	var brk, argStart, argEnd, envStart, envEnd, startCode, endCode, startStack uintptr
	if m := p.memory(); m != nil {
		startCode, endCode, startStack = m.StartCode, m.EndCode, m.StartStack
		vsize, rss = m.VirtualSize(), m.ResidentSize()/4096
		brk, _ = m.BrkRange()
		argStart, argEnd, envStart, envEnd = m.ArgvStart, m.ArgvEnd, m.EnvvStart, m.EnvvEnd
		if !addresses {
			// Linux's do_task_stat without PTRACE_MODE_READ.
			startCode, endCode, startStack = 1, 1, 0
			brk, argStart, argEnd, envStart, envEnd = 0, 0, 0, 0, 0
		}
	}
	start := t.StartTime().Sub(p.tg.k.BootTime())
	sp := t.SchedParams()
	pnd, shd, blk, ign, cgt, _ := signalSets(t)
	p.tg.k.mu.Lock()
	exitSig := p.tg.exitSignal
	p.tg.k.mu.Unlock()
	rssLim := p.tg.limits.Get(unix.RLIMIT_RSS).Cur
	prio := 20 + sp.Nice
	if sp.Policy == unix.SCHED_FIFO || sp.Policy == unix.SCHED_RR {
		prio = -1 - sp.Priority
	}
	var b strings.Builder
	// pid comm state ppid pgrp session tty_nr tpgid flags minflt cminflt
	// majflt cmajflt utime stime cutime cstime priority nice num_threads
	// itrealvalue starttime vsize rss rsslim
	ttyNr, tpgid := p.tg.ttyNumbers(ns)
	ru, cru := p.tg.Rusage(), p.tg.ChildRusage()
	fmt.Fprintf(&b, "%d (%s) %c %d %d %d %d %d 4194560 %d %d %d %d %d %d %d %d %d %d %d 0 %d %d %d %d",
		p.PID(), t.Name(), p.state().Letter(), ns.ParentIDOf(p.tg), ns.ProcessGroupIDOf(p.tg), ns.SessionIDOf(p.tg),
		ttyNr, tpgid, ru.MinFlt, cru.MinFlt, ru.MajFlt, cru.MajFlt, ticksOf(u), ticksOf(s), ticksOf(cu), ticksOf(cs), prio, sp.Nice, len(p.tg.Tasks()),
		start.Nanoseconds()/1e7, vsize, rss, rssLim)
	// startcode endcode startstack kstkesp kstkeip signal blocked sigignore
	// sigcatch wchan nswap cnswap exit_signal processor rt_priority policy
	// delayacct_blkio_ticks guest_time cguest_time
	fmt.Fprintf(&b, " %d %d %d 0 0 %d %d %d %d 0 0 0 %d 0 %d %d 0 0 0",
		startCode, endCode, startStack, uint64(pnd|shd)&0xffffffff, uint64(blk)&0xffffffff, uint64(ign)&0xffffffff, uint64(cgt)&0xffffffff,
		exitSig, sp.Priority, sp.Policy)
	// start_data end_data start_brk arg_start arg_end env_start env_end
	// exit_code
	fmt.Fprintf(&b, " 0 0 %d %d %d %d %d 0\n", brk, argStart, argEnd, envStart, envEnd)
	return b.String()
}
