package kernel

import (
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/kernel/shm"
)

// Namespaces other than PID (pidns.go) and mount: UTS and IPC. Each task
// points at its namespace of each kind; clone with CLONE_NEWUTS or
// CLONE_NEWIPC, and unshare(2), give it a copy (UTS) or an empty one
// (IPC). Namespaces are never freed explicitly: the garbage collector
// drops one when no task refers to it any more.

// Inode numbers of the initial namespaces, as Linux's PROC_*_INIT_INO;
// namespaces made later get numbers from nsInodeFirst up (Linux's
// proc_alloc_inum starts at PROC_DYNAMIC_FIRST).
const (
	initIPCInode    = 0xefffffff
	initUTSInode    = 0xeffffffe
	initPIDInode    = 0xeffffffc
	initMntInode    = 0xeffffff8
	nsInodeFirst    = 0xf0000000
	maxPIDNSLevel   = 32
	nsKindsToCreate = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWPID
)

// allocNSInode returns a fresh namespace inode number.
func (k *Kernel) allocNSInode() uint64 {
	return nsInodeFirst + k.nsInodes.Add(1) - 1
}

// UTSNamespace holds a host name and a domain name.
type UTSNamespace struct {
	inode uint64
	// owner is the user namespace of the creator (nil: the initial).
	owner *auth.UserNamespace

	mu         sync.Mutex
	hostname   string
	domainname string
}

// Inode returns the namespace's nsfs inode number.
func (ns *UTSNamespace) Inode() uint64 { return ns.inode }

// Owner returns the user namespace that owns ns: changing the names
// takes CAP_SYS_ADMIN there.
func (ns *UTSNamespace) Owner() *auth.UserNamespace { return ns.owner }

// Hostname returns the host name.
func (ns *UTSNamespace) Hostname() string {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	return ns.hostname
}

// SetHostname sets the host name.
func (ns *UTSNamespace) SetHostname(h string) {
	ns.mu.Lock()
	ns.hostname = h
	ns.mu.Unlock()
}

// Domainname returns the domain name.
func (ns *UTSNamespace) Domainname() string {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	return ns.domainname
}

// SetDomainname sets the domain name.
func (ns *UTSNamespace) SetDomainname(d string) {
	ns.mu.Lock()
	ns.domainname = d
	ns.mu.Unlock()
}

// clone returns a new namespace starting with ns's names, owned by user
// namespace owner.
func (ns *UTSNamespace) clone(inode uint64, owner *auth.UserNamespace) *UTSNamespace {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	return &UTSNamespace{inode: inode, owner: owner, hostname: ns.hostname, domainname: ns.domainname}
}

// IPCNamespace holds System V IPC objects: shared memory segments here,
// semaphore sets and message queues in registries made on first use
// (sysvipc.go).
type IPCNamespace struct {
	inode uint64
	owner *auth.UserNamespace
	shm   *shm.Registry
}

// Inode returns the namespace's nsfs inode number.
func (ns *IPCNamespace) Inode() uint64 { return ns.inode }

// Owner returns the user namespace that owns ns.
func (ns *IPCNamespace) Owner() *auth.UserNamespace { return ns.owner }

// SHM returns the namespace's shared memory segments.
func (ns *IPCNamespace) SHM() *shm.Registry { return ns.shm }

// newIPCNamespace returns an empty IPC namespace owned by user namespace
// owner.
func (k *Kernel) newIPCNamespace(owner *auth.UserNamespace) *IPCNamespace {
	return &IPCNamespace{inode: k.allocNSInode(), owner: owner, shm: shm.NewRegistry(k.MemFile)}
}

// RootUTSNamespace returns the sandbox's initial UTS namespace.
func (k *Kernel) RootUTSNamespace() *UTSNamespace { return k.rootUTS }

// RootIPCNamespace returns the sandbox's initial IPC namespace.
func (k *Kernel) RootIPCNamespace() *IPCNamespace {
	k.rootIPCOnce.Do(func() {
		k.rootIPC = &IPCNamespace{inode: initIPCInode}
		if k.MemFile != nil {
			// The registry the sandbox has always used for its memory file.
			k.rootIPC.shm = shm.For(k.MemFile)
		}
	})
	return k.rootIPC
}

// UTSNamespace returns t's UTS namespace.
func (t *Task) UTSNamespace() *UTSNamespace {
	if ns := t.utsns.Load(); ns != nil {
		return ns
	}
	return t.k.rootUTS
}

// IPCNamespace returns t's IPC namespace.
func (t *Task) IPCNamespace() *IPCNamespace {
	if ns := t.ipcns.Load(); ns != nil {
		return ns
	}
	return t.k.RootIPCNamespace()
}

// taskNamespaces are the namespace pointers a task holds besides its PID
// namespace.
type taskNamespaces struct {
	utsns      atomic.Pointer[UTSNamespace]
	ipcns      atomic.Pointer[IPCNamespace]
	mountNSRef // mntns.go
}

// inheritNamespaces gives nt the namespaces of t, new ones where flags
// (CLONE_NEWUTS, CLONE_NEWIPC) ask for them, owned by nt's user
// namespace.
func (nt *Task) inheritNamespaces(t *Task, flags uint64) {
	uts, ipc := t.UTSNamespace(), t.IPCNamespace()
	owner := nt.UserNamespace()
	if flags&unix.CLONE_NEWUTS != 0 {
		uts = uts.clone(t.k.allocNSInode(), owner)
	}
	if flags&unix.CLONE_NEWIPC != 0 {
		ipc = t.k.newIPCNamespace(owner)
	}
	nt.utsns.Store(uts)
	nt.ipcns.Store(ipc)
}
