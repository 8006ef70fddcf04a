package kernel

import "sync/atomic"

// Rusage holds the event counters of getrusage(2) besides CPU time and
// peak RSS. Minor faults are the page faults the Sentry resolves for the
// task (it populates memory in chunks, so one fault may cover several
// pages); major faults stay 0, as nothing is read from storage on a fault.
// Voluntary context switches are the times the task parks waiting for an
// event; involuntary ones are not counted (the host schedules the task's
// thread, and the Sentry does not see preemption).
type Rusage struct {
	MinFlt, MajFlt uint64
	NVCsw, NIvCsw  uint64
}

func (r *Rusage) add(o Rusage) {
	r.MinFlt += o.MinFlt
	r.MajFlt += o.MajFlt
	r.NVCsw += o.NVCsw
	r.NIvCsw += o.NIvCsw
}

// taskCounters are a task's own counters, updated only by the task.
type taskCounters struct {
	minFlt, nvcsw atomic.Uint64
}

// Rusage returns the task's counters (RUSAGE_THREAD).
func (t *Task) Rusage() Rusage {
	return Rusage{MinFlt: t.counters.minFlt.Load(), NVCsw: t.counters.nvcsw.Load()}
}

// Rusage returns the counters of the group's live and exited tasks
// (RUSAGE_SELF).
func (tg *ThreadGroup) Rusage() Rusage {
	var r Rusage
	for _, t := range tg.Tasks() {
		r.add(t.Rusage())
	}
	tg.timesMu.Lock()
	r.add(tg.exitedRusage)
	tg.timesMu.Unlock()
	return r
}

// ChildRusage returns the counters of the group's reaped children and
// their reaped descendants (RUSAGE_CHILDREN).
func (tg *ThreadGroup) ChildRusage() Rusage {
	tg.timesMu.Lock()
	defer tg.timesMu.Unlock()
	return tg.childRusage
}
