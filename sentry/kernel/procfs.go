package kernel

import (
	"fmt"
	"sort"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/proc"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// ProcKernel lets /proc see the kernel's processes.
type ProcKernel struct{ K *Kernel }

// ThreadGroup implements proc.Kernel.ThreadGroup.
func (p ProcKernel) ThreadGroup(ctx fs.Context, pid int32) (proc.Task, bool) {
	tg := p.K.ThreadGroupByID(ThreadID(pid))
	if tg == nil {
		return nil, false
	}
	return procTask{tg}, true
}

// PIDs implements proc.Kernel.PIDs.
func (p ProcKernel) PIDs(ctx fs.Context) []int32 {
	var out []int32
	for _, tg := range p.K.ThreadGroups() {
		out = append(out, int32(tg.id))
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// procTask is a process as /proc shows it.
type procTask struct{ tg *ThreadGroup }

func (p procTask) leader() *Task { return p.tg.Leader() }

func (p procTask) PID() int32 { return int32(p.tg.id) }

func (p procTask) Credentials() *auth.Credentials {
	if l := p.leader(); l != nil {
		return l.Credentials()
	}
	return auth.NewRootCredentials()
}

func (p procTask) live() *Task {
	for _, t := range p.tg.Tasks() {
		return t
	}
	return nil
}

func (p procTask) Exe() (fs.VirtualDentry, bool) {
	t := p.live()
	if t == nil {
		return fs.VirtualDentry{}, false
	}
	vd := t.Executable()
	return vd, vd.Ok()
}

func (p procTask) FDTable() *fs.FDTable {
	if t := p.live(); t != nil {
		return t.FDTable()
	}
	return nil
}

func (p procTask) FSContext() *fs.FSContext {
	if t := p.live(); t != nil {
		return t.FSContext()
	}
	return nil
}

func (p procTask) Cmdline() []byte {
	t := p.live()
	if t == nil {
		return nil
	}
	m := t.MemoryManager()
	if m == nil || m.ArgvEnd <= m.ArgvStart {
		return nil
	}
	b := make([]byte, m.ArgvEnd-m.ArgvStart)
	n, _ := m.CopyIn(m.ArgvStart, b)
	return b[:n]
}

func (p procTask) Comm() string {
	if t := p.leader(); t != nil {
		return t.Name()
	}
	return ""
}

// StatText implements proc.StatTask.
func (p procTask) StatText() string {
	t := p.leader()
	state := "S"
	if t == nil {
		return ""
	}
	u, s := p.tg.CPUTimes()
	var vsize, rss uint64
	if lt := p.live(); lt != nil {
		if m := lt.MemoryManager(); m != nil {
			vsize, rss = m.VirtualSize(), m.ResidentSize()/4096
		}
	} else {
		state = "Z"
	}
	start := t.StartTime().Sub(p.tg.k.StartTime())
	return fmt.Sprintf("%d (%s) %s %d %d %d 0 -1 4194560 0 0 0 0 %d %d 0 0 20 0 %d 0 %d %d %d 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
		p.tg.id, t.Name(), state, p.tg.ParentID(), p.tg.ProcessGroupID(), p.tg.SessionID(),
		ticksOf(u), ticksOf(s), len(p.tg.Tasks()), start.Nanoseconds()/1e7, vsize, rss)
}

// StatusText implements proc.StatTask.
func (p procTask) StatusText() string {
	t := p.leader()
	if t == nil {
		return ""
	}
	c := t.Credentials()
	state := "S (sleeping)"
	if p.live() == nil {
		state = "Z (zombie)"
	}
	var vm, rss uint64
	if lt := p.live(); lt != nil {
		if m := lt.MemoryManager(); m != nil {
			vm, rss = m.VirtualSize()/1024, m.ResidentSize()/1024
		}
	}
	return fmt.Sprintf("Name:\t%s\nUmask:\t%04o\nState:\t%s\nTgid:\t%d\nNgid:\t0\nPid:\t%d\nPPid:\t%d\nTracerPid:\t0\n"+
		"Uid:\t%d\t%d\t%d\t%d\nGid:\t%d\t%d\t%d\t%d\nFDSize:\t64\nGroups:\t\nVmSize:\t%8d kB\nVmRSS:\t%8d kB\nThreads:\t%d\n"+
		"SigQ:\t0/0\nCapInh:\t%016x\nCapPrm:\t%016x\nCapEff:\t%016x\nCapBnd:\t%016x\nCapAmb:\t%016x\nNoNewPrivs:\t%d\nSeccomp:\t0\n",
		t.Name(), t.FSContext().Umask(), state, p.tg.id, p.tg.id, p.tg.ParentID(),
		c.RealUID, c.EffectiveUID, c.SavedUID, c.FilesystemUID,
		c.RealGID, c.EffectiveGID, c.SavedGID, c.FilesystemGID,
		vm, rss, len(p.tg.Tasks()),
		uint64(c.InheritableCaps), uint64(c.PermittedCaps), uint64(c.EffectiveCaps), uint64(c.BoundingCaps), uint64(c.AmbientCaps),
		boolInt(t.noNewPrivs))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
