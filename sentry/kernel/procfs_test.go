package kernel

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/mm"
)

func newProcTestKernel(t *testing.T) (*Kernel, *Task, *Task) {
	t.Helper()
	mf, err := mm.NewMemoryFile()
	if err != nil {
		t.Fatal(err)
	}
	k := NewTestKernel(mf)
	parent := k.NewTestTask(nil, mm.New(nil, mf), auth.NewRootCredentials())
	parent.SetName("parent")
	child := k.NewTestTask(parent, mm.New(nil, mf), auth.NewRootCredentials())
	child.SetName("child")
	return k, parent, child
}

func statusField(t *testing.T, status, name string) string {
	t.Helper()
	for _, l := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(l, name+":\t"); ok {
			return v
		}
	}
	t.Fatalf("status has no %s:\n%s", name, status)
	return ""
}

func TestProcStatusAndStat(t *testing.T) {
	k, parent, child := newProcTestKernel(t)
	child.SetSignalMask(SignalSetOf(SIGUSR1) | SignalSetOf(SigRTMin+1))
	if _, err := child.SigAction(SIGPIPE, &SigAction{Handler: SIG_IGN}); err != nil {
		t.Fatal(err)
	}
	if _, err := child.SigAction(SIGUSR2, &SigAction{Handler: 0x1000}); err != nil {
		t.Fatal(err)
	}
	c := auth.NewRootCredentials()
	c.ExtraGIDs = []auth.KGID{5, 7}
	child.SetCredentials(c)
	pt, ok := ProcKernel{K: k}.ThreadGroup(nil, int32(child.tg.id))
	if !ok {
		t.Fatal("no child in /proc")
	}
	status := pt.(procTask).StatusText()
	for _, tc := range []struct{ name, want string }{
		{"Name", "child"},
		{"Pid", "2"},
		{"PPid", "1"},
		{"NSpid", "2"},
		{"Groups", "5 7 "},
		{"SigBlk", "0000000100000200"},
		{"SigIgn", "0000000000001000"},
		{"SigCgt", "0000000000000800"},
		{"Threads", "1"},
	} {
		if got := statusField(t, status, tc.name); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	stat := pt.(procTask).StatText(true)
	if !strings.HasPrefix(stat, "2 (child) R 1 1 1 ") || len(strings.Fields(stat)) != 52 {
		t.Errorf("stat %q: %d fields", stat, len(strings.Fields(stat)))
	}
	if f := strings.Fields(stat); f[17] != "20" || f[18] != "0" || f[37] != "17" {
		t.Errorf("stat priority %s nice %s exit_signal %s", f[17], f[18], f[37])
	}
	if pids := (ProcKernel{K: k}).PIDs(nil); len(pids) != 2 || pids[0] != 1 || pids[1] != 2 {
		t.Errorf("PIDs %v", pids)
	}
	st := ProcKernel{K: k, MemTotal: func() uint64 { return 1 << 30 }}.SystemStats()
	if st.Threads != 2 || st.MemTotal != 1<<30 || st.MemFree > st.MemTotal || st.LastPID != 2 {
		t.Errorf("stats %+v", st)
	}
	_ = parent
}

func TestProcCommAndOOM(t *testing.T) {
	k, parent, child := newProcTestKernel(t)
	pk := ProcKernel{K: k}
	pt, _ := pk.ThreadGroup(nil, int32(child.tg.id))
	ct := pt.(procTask)
	if err := ct.SetComm(parent, "x"); err != unix.EINVAL {
		t.Errorf("renaming another process: %v, want EINVAL", err)
	}
	if err := ct.SetComm(child, "renamed"); err != nil || child.Name() != "renamed" {
		t.Errorf("renaming itself: %v, name %q", err, child.Name())
	}
	unpriv := auth.NewRootCredentials()
	unpriv.EffectiveCaps = 0
	child.SetCredentials(unpriv)
	for _, tc := range []struct {
		name string
		by   *auth.Credentials
		v    int32
		err  error
		want int32
	}{
		{"raise", unpriv, 300, nil, 300},
		{"lower to the floor", unpriv, 0, nil, 0},
		{"below the floor", unpriv, -1, unix.EACCES, 0},
		{"privileged lowers", auth.NewRootCredentials(), -500, nil, -500},
		{"floor moved", unpriv, -400, nil, -400},
		{"below the new floor", unpriv, -600, unix.EACCES, -400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			child.SetCredentials(tc.by)
			if err := ct.SetOOMScoreAdj(child, tc.v); err != tc.err {
				t.Errorf("set %d: %v, want %v", tc.v, err, tc.err)
			}
			if got := ct.OOMScoreAdj(); got != tc.want {
				t.Errorf("value %d, want %d", got, tc.want)
			}
		})
	}
	var a procAttrs
	a.inherit(&child.tg.procAttrs)
	if a.oomScoreAdj.Load() != -400 || a.oomScoreAdjMin.Load() != -500 {
		t.Errorf("inherited %d (floor %d)", a.oomScoreAdj.Load(), a.oomScoreAdjMin.Load())
	}
}

func TestProcFormatting(t *testing.T) {
	for _, tc := range []struct {
		set        CPUSet
		ncpu       int
		mask, list string
	}{
		{CPUSet{0b11}, 2, "3", "0-1"},
		{CPUSet{0b1}, 1, "1", "0"},
		{CPUSet{0b1011}, 4, "b", "0-1,3"},
		{CPUSet{1 << 33}, 40, "02,00000000", "33"},
	} {
		mask, list := cpuSetText(tc.set, tc.ncpu)
		if mask != tc.mask || list != tc.list {
			t.Errorf("cpuSetText(%b, %d) = %q, %q; want %q, %q", tc.set, tc.ncpu, mask, list, tc.mask, tc.list)
		}
	}
	maps := "00400000-00402000 r-xp 00000000 00:00 0 /bin/prog\n" +
		"00402000-00403000 rw-p 00000000 00:00 0 /bin/prog\n" +
		"00500000-00510000 rw-p 00000000 00:00 0 [heap]\n" +
		"7f0000000000-7f0000004000 r-xp 00000000 00:00 0 /lib/libc.so\n" +
		"7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0 [stack]\n"
	data, stk, exe, lib := mapsUsage(maps)
	if data != 0x1000+0x10000 || stk != 0x21000 || exe != 0x2000 || lib != 0x4000 {
		t.Errorf("mapsUsage = %#x %#x %#x %#x", data, stk, exe, lib)
	}
	info := buildCPUInfo(3)
	if n := strings.Count(info, "processor\t: "); n != 3 {
		t.Errorf("cpuinfo has %d processors", n)
	}
	if !strings.Contains(info, "\nflags\t\t: fpu ") || !strings.Contains(info, "\nsiblings\t: 3\n") {
		t.Errorf("cpuinfo:\n%s", info)
	}
}
