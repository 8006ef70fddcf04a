package kernel

import (
	"fmt"
	"strings"
	"sync"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/proc"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/kernel/msg"
	"github.com/moat-sandbox/moat/sentry/kernel/sem"
	"github.com/moat-sandbox/moat/sentry/kernel/shm"
)

// ipcFacilities are the semaphore sets and message queues of an IPC
// namespace, made at first use (shared memory's registry is a field of
// IPCNamespace). Entries live as long as the sandbox, as namespaces do.
type ipcFacilities struct {
	sem *sem.Registry
	msg *msg.Registry
}

var ipcFacilitiesOf sync.Map // *IPCNamespace -> *ipcFacilities

func (ns *IPCNamespace) facilities() *ipcFacilities {
	if f, ok := ipcFacilitiesOf.Load(ns); ok {
		return f.(*ipcFacilities)
	}
	f, _ := ipcFacilitiesOf.LoadOrStore(ns, &ipcFacilities{sem: sem.NewRegistry(), msg: msg.NewRegistry()})
	return f.(*ipcFacilities)
}

// Msg returns the namespace's message queues.
func (ns *IPCNamespace) Msg() *msg.Registry { return ns.facilities().msg }

// Sem returns the namespace's semaphore sets.
func (ns *IPCNamespace) Sem() *sem.Registry { return ns.facilities().sem }

// releaseSysVIPC undoes what the process tg leaves in System V IPC: its
// semaphores' SEM_UNDO adjustments (Linux's exit_sem), when it exits
// (before the parent learns of it) or leaves its IPC namespace
// (unshare, setns).
func (tg *ThreadGroup) releaseSysVIPC() {
	ns := tg.pidns
	if ns == nil {
		ns = tg.k.rootPID
	}
	sem.ProcessExited(tg, ProcessRef{ns: ns, ids: tg.ids})
}

var _ proc.SysVIPC = ProcKernel{}

// SysVIPCText implements proc.SysVIPC: the objects of the IPC namespace
// of ctx (the sandbox's initial one for a reader that is not a task).
func (p ProcKernel) SysVIPCText(ctx fs.Context, facility string) string {
	ns := p.K.RootIPCNamespace()
	if t, ok := ctx.(*Task); ok {
		ns = t.IPCNamespace()
	}
	// Owners as the reader's user namespace sees them.
	var uns *auth.UserNamespace
	if c := ctx.Credentials(); c != nil {
		uns = c.UserNamespace
	}
	u := func(k auth.KUID) uint32 { return uns.UIDOf(k) }
	g := func(k auth.KGID) uint32 { return uns.GIDOf(k) }
	var b strings.Builder
	switch facility {
	case "sem":
		b.WriteString("       key      semid perms      nsems   uid   gid  cuid  cgid      otime      ctime\n")
		for _, d := range ns.Sem().All() {
			fmt.Fprintf(&b, "%10d %10d  %4o %10d %5d %5d %5d %5d %10d %10d\n",
				d.Perm.Key, d.Perm.ID, d.Perm.Mode, d.NSems,
				u(d.Perm.UID), g(d.Perm.GID), u(d.Perm.CUID), g(d.Perm.CGID), d.Otime, d.Ctime)
		}
	case "shm":
		b.WriteString("       key      shmid perms                  size  cpid  lpid nattch   uid   gid  cuid  cgid      atime      dtime      ctime                   rss                  swap\n")
		var segs []shm.Listing
		if reg := ns.SHM(); reg != nil {
			segs = reg.All(ctx)
		}
		for _, d := range segs {
			fmt.Fprintf(&b, "%10d %10d  %4o %21d %5d %5d  %5d %5d %5d %5d %5d %10d %10d %10d %21d %21d\n",
				d.Perm.Key, d.ID, d.Perm.Mode, d.Segsz, d.Cpid, d.Lpid, d.Nattch,
				u(auth.KUID(d.Perm.Uid)), g(auth.KGID(d.Perm.Gid)), u(auth.KUID(d.Perm.Cuid)), g(auth.KGID(d.Perm.Cgid)), d.Atime, d.Dtime, d.Ctime, d.RSS, 0)
		}
	case "msg":
		b.WriteString("       key      msqid perms      cbytes       qnum lspid lrpid   uid   gid  cuid  cgid      stime      rtime      ctime\n")
		for _, d := range ns.Msg().All(ctx) {
			fmt.Fprintf(&b, "%10d %10d  %4o  %10d %10d %5d %5d %5d %5d %5d %5d %10d %10d %10d\n",
				d.Perm.Key, d.Perm.ID, d.Perm.Mode, d.CBytes, d.QNum, d.LSPID, d.LRPID,
				u(d.Perm.UID), g(d.Perm.GID), u(d.Perm.CUID), g(d.Perm.CGID), d.Stime, d.Rtime, d.Ctime)
		}
	}
	return b.String()
}
