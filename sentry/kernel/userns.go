package kernel

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs/proc"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// User namespaces (auth.UserNamespace) belong to credentials: a task is
// in the user namespace of its credentials. clone(CLONE_NEWUSER) and
// unshare(CLONE_NEWUSER) need no privilege; the creator gets every
// capability in the new namespace. Other namespaces record the user
// namespace of their creator, which owns them: changing them takes the
// capability there (sethostname in a UTS namespace, for one).

// UserNamespace returns the user namespace t is in (nil: the initial).
func (t *Task) UserNamespace() *auth.UserNamespace { return t.Credentials().UserNamespace }

// newUserNSCreds returns c moved into a new user namespace it owns, as
// Linux's create_user_ns with set_cred_user_ns.
func (t *Task) newUserNSCreds(c *auth.Credentials) (*auth.Credentials, error) {
	if t.chrooted() {
		// A chroot would otherwise be escaped with the capabilities
		// the new namespace gives.
		return nil, errEPERM
	}
	ns, err := auth.NewUserNamespace(c, t.k.allocNSInode())
	if err != nil {
		return nil, err
	}
	return c.InUserNamespace(ns), nil
}

// joinUserNamespace implements setns(2) into user namespace ns
// (userns_install): not one's own, only by a single-threaded process
// whose filesystem context is its own, with CAP_SYS_ADMIN in ns. The
// task gets every capability in ns.
func (t *Task) joinUserNamespace(ns *auth.UserNamespace) error {
	c := t.Credentials()
	if ns == c.UserNamespace {
		return errEINVAL
	}
	k := t.k
	k.mu.Lock()
	threads := len(t.tg.tasks)
	k.mu.Unlock()
	if threads > 1 || t.FSContext().Shared() {
		return errEINVAL
	}
	if !c.HasCapabilityIn(unix.CAP_SYS_ADMIN, ns) {
		return errEPERM
	}
	t.commitCreds(c.InUserNamespace(ns))
	return nil
}

// rootKUIDForExec is the uid that counts as root for execve's capability
// rules: uid 0 of the task's user namespace.
func rootKUIDForExec(c *auth.Credentials) auth.KUID { return c.UserNamespace.RootKUID() }

// realUIDIn returns the real uid of tg's leader as user namespace ns
// sees it (siginfo's si_uid for SIGCHLD and waitid).
func (tg *ThreadGroup) realUIDIn(ns *auth.UserNamespace) uint32 {
	if l := tg.leader; l != nil {
		return ns.UIDOf(l.Credentials().RealUID)
	}
	return 0
}

// userNamespace returns the user namespace of tg's leader (the initial
// one once the leader is gone).
func (tg *ThreadGroup) userNamespace() *auth.UserNamespace {
	if l := tg.leader; l != nil {
		return l.UserNamespace()
	}
	return nil
}

var _ proc.UserNSTask = procTask{}

// UserNamespace implements proc.UserNSTask: the namespace of the
// process's leader.
func (p procTask) UserNamespace() *auth.UserNamespace { return p.Credentials().UserNamespace }

// chrooted reports whether t's root is not its mount namespace's root
// (Linux's current_chrooted).
func (t *Task) chrooted() bool {
	ns, fsc := t.MountNamespace(), t.FSContext()
	if ns == nil || fsc == nil {
		return false
	}
	return fsc.Root() != ns.TopRoot()
}
