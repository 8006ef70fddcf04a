package kernel

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// unshareFlags are the flags unshare(2) accepts.
const unshareFlags = unix.CLONE_THREAD | unix.CLONE_FS | unix.CLONE_NEWNS | unix.CLONE_SIGHAND |
	unix.CLONE_VM | unix.CLONE_FILES | unix.CLONE_SYSVSEM | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
	unix.CLONE_NEWNET | unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWCGROUP | unix.CLONE_NEWTIME

// namespaceFlags are the CLONE_NEW* flags of every kind.
const namespaceFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWNET |
	unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWCGROUP | unix.CLONE_NEWTIME

// unsupportedNSFlags are the namespace kinds Moat does not make: network,
// cgroup and time namespaces. clone and unshare refuse them with
// EINVAL (and a log line) rather than pretend.
const unsupportedNSFlags = unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP | unix.CLONE_NEWTIME

// Unshare implements unshare(2): the calling task leaves the sharing of
// the resources flags names and gets namespaces of its own, as Linux's
// ksys_unshare (the implied flags, the checks, then the changes; a
// failure changes nothing).
func (t *Task) Unshare(flags uint64) error {
	if flags&^unshareFlags != 0 {
		return errEINVAL
	}
	// Implied flags, as Linux.
	if flags&unix.CLONE_NEWUSER != 0 {
		flags |= unix.CLONE_THREAD | unix.CLONE_FS
	}
	if flags&unix.CLONE_VM != 0 {
		flags |= unix.CLONE_SIGHAND
	}
	if flags&unix.CLONE_SIGHAND != 0 {
		flags |= unix.CLONE_THREAD
	}
	if flags&unix.CLONE_NEWNS != 0 {
		flags |= unix.CLONE_FS
	}
	// A process of several threads cannot stop sharing what threads
	// share.
	if flags&(unix.CLONE_THREAD|unix.CLONE_SIGHAND|unix.CLONE_VM) != 0 {
		k := t.k
		k.mu.Lock()
		threads := len(t.tg.tasks)
		k.mu.Unlock()
		if threads > 1 {
			return errEINVAL
		}
	}
	if flags&unsupportedNSFlags != 0 {
		t.k.Log.Info("unshare: network, cgroup and time namespaces are not supported", "flags", flags&unsupportedNSFlags)
		return errEINVAL
	}
	// A new user namespace comes first: the other new namespaces are
	// owned by it, and the capability to make them is checked there.
	creds := t.Credentials()
	if flags&unix.CLONE_NEWUSER != 0 {
		var err error
		if creds, err = t.newUserNSCreds(creds); err != nil {
			return err
		}
	}
	if flags&nsKindsToCreate != 0 && !creds.HasOwnCapability(unix.CAP_SYS_ADMIN) {
		return errEPERM
	}
	var newPID *PIDNamespace
	if flags&unix.CLONE_NEWPID != 0 {
		var err error
		if newPID, err = t.newChildPIDNamespace(creds.UserNamespace); err != nil {
			return err
		}
	}

	// Past the checks: nothing fails from here on.
	if flags&unix.CLONE_FS != 0 {
		old := t.FSContext()
		t.fsCtx.Store(old.Fork())
		old.Release()
	}
	if flags&unix.CLONE_NEWNS != 0 {
		t.unshareMountNamespace(creds.UserNamespace)
	}
	if flags&unix.CLONE_FILES != 0 {
		if old := t.FDTable(); old != nil {
			t.fdTable.Store(old.Fork())
			old.DecRef()
		}
	}
	if flags&unix.CLONE_NEWUSER != 0 {
		t.commitCreds(creds)
	}
	if flags&unix.CLONE_NEWUTS != 0 {
		t.utsns.Store(t.UTSNamespace().clone(t.k.allocNSInode(), creds.UserNamespace))
	}
	if flags&unix.CLONE_NEWIPC != 0 {
		// The old namespace's SEM_UNDO adjustments are applied now, as
		// Linux's unshare does (exit_sem).
		t.tg.releaseSysVIPC()
		t.ipcns.Store(t.k.newIPCNamespace(creds.UserNamespace))
	}
	if newPID != nil {
		t.k.mu.Lock()
		t.pidnsChildren = newPID
		t.k.mu.Unlock()
	}
	return nil
}

// cloneNamespaceCheck applies clone's namespace checks, as Linux's
// copy_process, copy_creds and copy_namespaces, in their order, and
// returns the child's credentials: in a new user namespace with
// CLONE_NEWUSER.
func (t *Task) cloneNamespaceCheck(f uint64) (*auth.Credentials, error) {
	creds := t.Credentials()
	if f&unix.CLONE_NEWUSER != 0 && f&(unix.CLONE_FS|unix.CLONE_THREAD) != 0 {
		// A new user namespace shares neither filesystem context nor
		// thread group.
		return nil, errEINVAL
	}
	if f&unsupportedNSFlags != 0 {
		t.k.Log.Info("clone: network, cgroup and time namespaces are not supported", "flags", f&unsupportedNSFlags)
		return nil, errEINVAL
	}
	if f&unix.CLONE_NEWUSER != 0 {
		var err error
		if creds, err = t.newUserNSCreds(creds); err != nil {
			return nil, err
		}
	}
	if f&(namespaceFlags&^unix.CLONE_NEWUSER) != 0 && !creds.HasOwnCapability(unix.CAP_SYS_ADMIN) {
		return nil, errEPERM
	}
	if f&(unix.CLONE_NEWIPC|unix.CLONE_SYSVSEM) == unix.CLONE_NEWIPC|unix.CLONE_SYSVSEM {
		return nil, errEINVAL
	}
	return creds, nil
}

// SetNamespace implements setns(2) for a namespace file: typ is its
// CLONE_NEW* type and ns the namespace (nil for the kinds the sandbox has
// only one of, which the task is in already), nstype setns's check of
// the type (0: any). Joining a UTS or IPC namespace replaces the task's;
// joining a PID namespace, which must be the task's own or nested in it,
// sets where its children go, as Linux.
func (t *Task) SetNamespace(typ uint32, ns any, nstype uint32) error {
	if nstype != 0 && nstype != typ {
		return errEINVAL
	}
	switch typ {
	case unix.CLONE_NEWUSER:
		u, _ := ns.(*auth.UserNamespace)
		return t.joinUserNamespace(u)
	case unix.CLONE_NEWNS:
		return t.joinMountNamespace(ns)
	}
	// CAP_SYS_ADMIN over the namespace joined and in one's own.
	c := t.Credentials()
	if !c.HasOwnCapability(unix.CAP_SYS_ADMIN) {
		return errEPERM
	}
	switch n := ns.(type) {
	case *UTSNamespace:
		if !c.HasCapabilityIn(unix.CAP_SYS_ADMIN, n.Owner()) {
			return errEPERM
		}
		t.utsns.Store(n)
	case *IPCNamespace:
		if !c.HasCapabilityIn(unix.CAP_SYS_ADMIN, n.Owner()) {
			return errEPERM
		}
		t.tg.releaseSysVIPC() // ipcns_install's exit_sem
		t.ipcns.Store(n)
	case *PIDNamespace:
		if !c.HasCapabilityIn(unix.CAP_SYS_ADMIN, n.Owner()) {
			return errEPERM
		}
		k := t.k
		k.mu.Lock()
		defer k.mu.Unlock()
		if !t.pidns.contains(n) {
			return errEINVAL
		}
		t.pidnsChildren = n
		if n == t.pidns {
			t.pidnsChildren = nil
		}
	}
	// nil: a network, cgroup or time namespace, the task's already.
	return nil
}
