package kernel

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/mm"
)

// plainCreds are a non-root user's credentials in the initial namespace.
func plainCreds(uid auth.KUID, gid auth.KGID) *auth.Credentials {
	return &auth.Credentials{RealUID: uid, EffectiveUID: uid, SavedUID: uid, FilesystemUID: uid,
		RealGID: gid, EffectiveGID: gid, SavedGID: gid, FilesystemGID: gid, BoundingCaps: auth.AllCaps}
}

// newUserNSTestTask returns a task with credentials c and a filesystem
// context of its own.
func newUserNSTestTask(t *testing.T, c *auth.Credentials) *Task {
	t.Helper()
	k, mf := newNSTestKernel(t)
	task := k.NewTestTask(nil, mm.New(fakePlatform{}, mf), c)
	task.fsCtx.Store(fs.NewFSContext(fs.VirtualDentry{}, fs.VirtualDentry{}, 0o22))
	return task
}

func TestUnshareUser(t *testing.T) {
	task := newUserNSTestTask(t, plainCreds(1000, 1000))
	rootUTS := task.UTSNamespace()
	// Unprivileged: a user namespace, and with it a UTS namespace it owns.
	if err := task.Unshare(unix.CLONE_NEWUSER | unix.CLONE_NEWUTS); err != nil {
		t.Fatalf("Unshare: %v", err)
	}
	c := task.Credentials()
	ns := c.UserNamespace
	if ns.IsInitial() || ns.Level() != 1 || ns.Inode() < nsInodeFirst {
		t.Fatalf("namespace level %d inode %#x", ns.Level(), ns.Inode())
	}
	if owner, group := ns.Owner(); owner != 1000 || group != 1000 {
		t.Errorf("owner %d:%d", owner, group)
	}
	if c.EffectiveCaps != auth.AllCaps || c.PermittedCaps != auth.AllCaps || c.InheritableCaps != 0 {
		t.Errorf("caps eff %#x perm %#x inh %#x", c.EffectiveCaps, c.PermittedCaps, c.InheritableCaps)
	}
	if c.HasCapability(unix.CAP_SYS_ADMIN) {
		t.Error("capabilities over the initial namespace")
	}
	if !task.Dumpable() {
		t.Error("unshare made the task non-dumpable")
	}
	// Before the maps, ids read as the overflow id.
	if got := ns.UIDOf(c.RealUID); got != auth.OverflowID {
		t.Errorf("uid before the map %d", got)
	}
	uts := task.UTSNamespace()
	if uts == rootUTS || uts.Owner() != ns {
		t.Errorf("UTS namespace %p owner %p, want new owned by %p", uts, uts.Owner(), ns)
	}
	if !c.HasCapabilityIn(unix.CAP_SYS_ADMIN, uts.Owner()) || c.HasCapabilityIn(unix.CAP_SYS_ADMIN, rootUTS.Owner()) {
		t.Error("capability over the UTS namespaces")
	}
	if err := ns.WriteUIDMap(c, c, []byte("0 1000 1")); err != nil {
		t.Fatalf("uid_map: %v", err)
	}
	// setuid maps its argument: 0 is the task's own id, 1 is unmapped.
	if err := task.SetUID(0); err != nil {
		t.Errorf("setuid(0): %v", err)
	}
	if err := task.SetUID(1); err != unix.EINVAL {
		t.Errorf("setuid(1): %v, want EINVAL", err)
	}
	if err := task.SetRESUID(auth.NoID, 1, auth.NoID); err != unix.EINVAL {
		t.Errorf("setresuid(-1, 1, -1): %v, want EINVAL", err)
	}
	// setgroups needs the gid map, which is not written.
	if err := task.SetGroups(nil); err != unix.EPERM {
		t.Errorf("setgroups before gid_map: %v, want EPERM", err)
	}
	// Re-entering one's own namespace is EINVAL.
	if err := task.SetNamespace(unix.CLONE_NEWUSER, ns, 0); err != unix.EINVAL {
		t.Errorf("setns own: %v, want EINVAL", err)
	}
	// A nested namespace needs the creator's egid mapped, and it is not.
	if err := task.Unshare(unix.CLONE_NEWUSER); err != unix.EPERM {
		t.Errorf("unshare with an unmapped egid: %v, want EPERM", err)
	}
}

func TestUserNSExecCaps(t *testing.T) {
	ns, err := auth.NewUserNamespace(plainCreds(1000, 1000), 1)
	if err != nil {
		t.Fatal(err)
	}
	c := plainCreds(1000, 1000).InUserNamespace(ns)
	if err := ns.WriteUIDMap(c, c, []byte("0 1000 1")); err != nil {
		t.Fatal(err)
	}
	// uid 1000 is the namespace's root: it keeps its capabilities across
	// execve, as root does.
	n := c.Fork()
	(&Task{}).recomputeCapsForExec(n)
	if n.EffectiveCaps != auth.AllCaps {
		t.Errorf("root in namespace after exec: eff %#x", n.EffectiveCaps)
	}
	// In a namespace without a map there is no root: capabilities go.
	other, _ := auth.NewUserNamespace(plainCreds(1000, 1000), 2)
	n = plainCreds(1000, 1000).InUserNamespace(other)
	(&Task{}).recomputeCapsForExec(n)
	if n.EffectiveCaps != 0 || n.PermittedCaps != 0 {
		t.Errorf("unmapped after exec: eff %#x perm %#x", n.EffectiveCaps, n.PermittedCaps)
	}
	// setuid away from the namespace's root drops capabilities.
	n, err = credsSetUID(c, 0)
	if err != nil || n.EffectiveCaps != auth.AllCaps {
		t.Errorf("setuid(0) as root: %v eff %#x", err, n.EffectiveCaps)
	}
}

func TestCloneUserChecks(t *testing.T) {
	task := newUserNSTestTask(t, plainCreds(1000, 1000))
	for _, tc := range []struct {
		name  string
		flags uint64
		want  error
	}{
		{"user", unix.CLONE_NEWUSER, nil},
		{"user and uts", unix.CLONE_NEWUSER | unix.CLONE_NEWUTS, nil},
		{"uts alone", unix.CLONE_NEWUTS, unix.EPERM},
		{"user with fs", unix.CLONE_NEWUSER | unix.CLONE_FS, unix.EINVAL},
		{"user with thread", unix.CLONE_NEWUSER | unix.CLONE_THREAD, unix.EINVAL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := task.cloneNamespaceCheck(tc.flags)
			if err != tc.want {
				t.Fatalf("cloneNamespaceCheck(%#x) = %v, want %v", tc.flags, err, tc.want)
			}
			if err == nil && tc.flags&unix.CLONE_NEWUSER != 0 && c.UserNamespace.Parent() != task.UserNamespace() {
				t.Errorf("child's namespace is not a child of the parent's")
			}
		})
	}
}

func TestSetnsUser(t *testing.T) {
	root := newUserNSTestTask(t, auth.NewRootCredentials())
	ns, err := auth.NewUserNamespace(plainCreds(1000, 1000), 1)
	if err != nil {
		t.Fatal(err)
	}
	// Root of the initial namespace has CAP_SYS_ADMIN over every other.
	if err := root.SetNamespace(unix.CLONE_NEWUSER, ns, unix.CLONE_NEWUSER); err != nil {
		t.Fatalf("setns: %v", err)
	}
	c := root.Credentials()
	if c.UserNamespace != ns || c.EffectiveCaps != auth.AllCaps {
		t.Errorf("after setns: ns %p caps %#x", c.UserNamespace, c.EffectiveCaps)
	}
	// Back to the initial one: no capability there any more.
	if err := root.SetNamespace(unix.CLONE_NEWUSER, (*auth.UserNamespace)(nil), 0); err != unix.EPERM {
		t.Errorf("setns back to the initial namespace: %v, want EPERM", err)
	}
	// A user without capabilities cannot join a namespace it does not own.
	plain := newUserNSTestTask(t, plainCreds(2000, 2000))
	if err := plain.SetNamespace(unix.CLONE_NEWUSER, ns, 0); err != unix.EPERM {
		t.Errorf("stranger setns: %v, want EPERM", err)
	}
	// Its owner can, unless it shares its filesystem context.
	owner := newUserNSTestTask(t, plainCreds(1000, 1000))
	owner.FSContext().Share()
	if err := owner.SetNamespace(unix.CLONE_NEWUSER, ns, 0); err != unix.EINVAL {
		t.Errorf("owner setns with a shared fs context: %v, want EINVAL", err)
	}
	owner.FSContext().Release()
	if err := owner.SetNamespace(unix.CLONE_NEWUSER, ns, 0); err != nil {
		t.Errorf("owner setns: %v", err)
	}
}
