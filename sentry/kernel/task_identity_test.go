package kernel

import (
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

const none = auth.NoID

// ids is a compact view of credentials' ids and capability sets.
type ids struct {
	r, e, s, fs uint32
	eff, perm   auth.CapSet
	amb         auth.CapSet
}

func uidView(c *auth.Credentials) ids {
	return ids{uint32(c.RealUID), uint32(c.EffectiveUID), uint32(c.SavedUID), uint32(c.FilesystemUID),
		c.EffectiveCaps, c.PermittedCaps, c.AmbientCaps}
}

func gidView(c *auth.Credentials) ids {
	return ids{uint32(c.RealGID), uint32(c.EffectiveGID), uint32(c.SavedGID), uint32(c.FilesystemGID),
		c.EffectiveCaps, c.PermittedCaps, c.AmbientCaps}
}

// testRoot is uid and gid 0 with every capability and some ambient ones.
func testRoot() *auth.Credentials {
	c := auth.NewRootCredentials()
	c.InheritableCaps = 1<<unix.CAP_NET_RAW | 1<<unix.CAP_KILL
	c.AmbientCaps = 1 << unix.CAP_NET_RAW
	return c
}

// userCreds has the given real, effective and saved uids (and the same
// gids) and no capability.
func userCreds(r, e, s uint32) *auth.Credentials {
	return &auth.Credentials{
		RealUID: auth.KUID(r), EffectiveUID: auth.KUID(e), SavedUID: auth.KUID(s), FilesystemUID: auth.KUID(e),
		RealGID: auth.KGID(r), EffectiveGID: auth.KGID(e), SavedGID: auth.KGID(s), FilesystemGID: auth.KGID(e),
		BoundingCaps: auth.AllCaps,
	}
}

// withUIDs returns root's capabilities with other uids.
func withUIDs(r, e, s uint32) *auth.Credentials {
	c := testRoot()
	c.RealUID, c.EffectiveUID, c.SavedUID, c.FilesystemUID = auth.KUID(r), auth.KUID(e), auth.KUID(s), auth.KUID(e)
	if e != 0 {
		c.EffectiveCaps = 0
	}
	return c
}

func keepCaps(c *auth.Credentials) *auth.Credentials {
	c.KeepCaps = true
	return c
}

const all = auth.AllCaps

type uidCase struct {
	name string
	old  *auth.Credentials
	fn   func(*auth.Credentials) (*auth.Credentials, error)
	want ids
	err  error
}

func runUIDCases(t *testing.T, view func(*auth.Credentials) ids, cases []uidCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := view(tc.old)
			n, err := tc.fn(tc.old)
			if err != tc.err {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if view(tc.old) != before {
				t.Fatalf("old credentials were modified")
			}
			if err != nil {
				return
			}
			if got := view(n); got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestSetUID(t *testing.T) {
	ambient := auth.CapSet(1 << unix.CAP_NET_RAW)
	runUIDCases(t, uidView, []uidCase{
		{"root to user drops every capability", testRoot(),
			func(c *auth.Credentials) (*auth.Credentials, error) { return credsSetUID(c, 1000) },
			ids{1000, 1000, 1000, 1000, 0, 0, 0}, nil},
		{"root to user with keepcaps keeps permitted", keepCaps(testRoot()),
			func(c *auth.Credentials) (*auth.Credentials, error) { return credsSetUID(c, 1000) },
			ids{1000, 1000, 1000, 1000, 0, all, 0}, nil},
		{"root to root keeps capabilities", testRoot(),
			func(c *auth.Credentials) (*auth.Credentials, error) { return credsSetUID(c, 0) },
			ids{0, 0, 0, 0, all, all, ambient}, nil},
		{"unprivileged to saved uid changes effective only", userCreds(1000, 2000, 3000),
			func(c *auth.Credentials) (*auth.Credentials, error) { return credsSetUID(c, 3000) },
			ids{1000, 3000, 3000, 3000, 0, 0, 0}, nil},
		{"unprivileged to real uid", userCreds(1000, 2000, 3000),
			func(c *auth.Credentials) (*auth.Credentials, error) { return credsSetUID(c, 1000) },
			ids{1000, 1000, 3000, 1000, 0, 0, 0}, nil},
		{"unprivileged to a stranger", userCreds(1000, 2000, 3000),
			func(c *auth.Credentials) (*auth.Credentials, error) { return credsSetUID(c, 4000) },
			ids{}, unix.EPERM},
		{"unprivileged to its effective uid only", userCreds(1000, 2000, 3000),
			func(c *auth.Credentials) (*auth.Credentials, error) { return credsSetUID(c, 2000) },
			ids{}, unix.EPERM},
		{"-1 is invalid", testRoot(),
			func(c *auth.Credentials) (*auth.Credentials, error) { return credsSetUID(c, none) },
			ids{}, unix.EINVAL},
		{"effective root with real user sets all three", withUIDs(1000, 0, 0),
			func(c *auth.Credentials) (*auth.Credentials, error) { return credsSetUID(c, 1000) },
			ids{1000, 1000, 1000, 1000, 0, 0, 0}, nil},
		{"saved root only, back to effective root restores effective set", withUIDs(1000, 1000, 0),
			func(c *auth.Credentials) (*auth.Credentials, error) { return credsSetUID(c, 0) },
			ids{1000, 0, 0, 0, all, all, ambient}, nil},
	})
}

func TestSetREUID(t *testing.T) {
	ambient := auth.CapSet(1 << unix.CAP_NET_RAW)
	runUIDCases(t, uidView, []uidCase{
		{"effective to saved moves saved along", userCreds(1000, 2000, 3000),
			func(c *auth.Credentials) (*auth.Credentials, error) { return credsSetREUID(c, none, 3000) },
			ids{1000, 3000, 3000, 3000, 0, 0, 0}, nil},
		{"effective to real keeps saved", userCreds(1000, 2000, 3000),
			func(c *auth.Credentials) (*auth.Credentials, error) { return credsSetREUID(c, none, 1000) },
			ids{1000, 1000, 3000, 1000, 0, 0, 0}, nil},
		{"real to effective sets saved to effective", userCreds(1000, 2000, 3000),
			func(c *auth.Credentials) (*auth.Credentials, error) { return credsSetREUID(c, 2000, none) },
			ids{2000, 2000, 2000, 2000, 0, 0, 0}, nil},
		{"swap real and effective", userCreds(1000, 2000, 3000),
			func(c *auth.Credentials) (*auth.Credentials, error) { return credsSetREUID(c, 2000, 1000) },
			ids{2000, 1000, 1000, 1000, 0, 0, 0}, nil},
		{"real to saved is refused", userCreds(1000, 2000, 3000),
			func(c *auth.Credentials) (*auth.Credentials, error) { return credsSetREUID(c, 3000, none) },
			ids{}, unix.EPERM},
		{"effective to a stranger is refused", userCreds(1000, 2000, 3000),
			func(c *auth.Credentials) (*auth.Credentials, error) { return credsSetREUID(c, none, 4000) },
			ids{}, unix.EPERM},
		{"both unchanged", userCreds(1000, 2000, 3000),
			func(c *auth.Credentials) (*auth.Credentials, error) { return credsSetREUID(c, none, none) },
			ids{1000, 2000, 3000, 2000, 0, 0, 0}, nil},
		{"root drops effective only: permitted kept", testRoot(),
			func(c *auth.Credentials) (*auth.Credentials, error) { return credsSetREUID(c, none, 1000) },
			ids{0, 1000, 1000, 1000, 0, all, ambient}, nil},
		{"root sets anything", testRoot(),
			func(c *auth.Credentials) (*auth.Credentials, error) { return credsSetREUID(c, 5, 6) },
			ids{5, 6, 6, 6, 0, 0, 0}, nil},
	})
}

func TestSetRESUID(t *testing.T) {
	ambient := auth.CapSet(1 << unix.CAP_NET_RAW)
	runUIDCases(t, uidView, []uidCase{
		{"permutation of own ids", userCreds(1000, 2000, 3000),
			func(c *auth.Credentials) (*auth.Credentials, error) { return credsSetRESUID(c, 3000, 1000, 2000) },
			ids{3000, 1000, 2000, 1000, 0, 0, 0}, nil},
		{"new id refused", userCreds(1000, 2000, 3000),
			func(c *auth.Credentials) (*auth.Credentials, error) { return credsSetRESUID(c, none, none, 4000) },
			ids{}, unix.EPERM},
		{"all unchanged", userCreds(1000, 2000, 3000),
			func(c *auth.Credentials) (*auth.Credentials, error) { return credsSetRESUID(c, none, none, none) },
			ids{1000, 2000, 3000, 2000, 0, 0, 0}, nil},
		{"root drops effective, keeps saved root", testRoot(),
			func(c *auth.Credentials) (*auth.Credentials, error) { return credsSetRESUID(c, none, 1000, none) },
			ids{0, 1000, 0, 1000, 0, all, ambient}, nil},
		{"root drops all three", testRoot(),
			func(c *auth.Credentials) (*auth.Credentials, error) { return credsSetRESUID(c, 1, 2, 3) },
			ids{1, 2, 3, 2, 0, 0, 0}, nil},
		{"root drops all three with keepcaps", keepCaps(testRoot()),
			func(c *auth.Credentials) (*auth.Credentials, error) { return credsSetRESUID(c, 1, 2, 3) },
			ids{1, 2, 3, 2, 0, all, 0}, nil},
		{"effective back to root from saved", withUIDs(1000, 1000, 0),
			func(c *auth.Credentials) (*auth.Credentials, error) { return credsSetRESUID(c, none, 0, none) },
			ids{1000, 0, 0, 0, all, all, ambient}, nil},
	})
}

func TestSetGIDFamily(t *testing.T) {
	runUIDCases(t, gidView, []uidCase{
		{"setgid as root sets all", testRoot(),
			func(c *auth.Credentials) (*auth.Credentials, error) { return credsSetGID(c, 50) },
			ids{50, 50, 50, 50, all, all, 1 << unix.CAP_NET_RAW}, nil},
		{"setgid unprivileged to saved", userCreds(1000, 2000, 3000),
			func(c *auth.Credentials) (*auth.Credentials, error) { return credsSetGID(c, 3000) },
			ids{1000, 3000, 3000, 3000, 0, 0, 0}, nil},
		{"setgid unprivileged to stranger", userCreds(1000, 2000, 3000),
			func(c *auth.Credentials) (*auth.Credentials, error) { return credsSetGID(c, 7) },
			ids{}, unix.EPERM},
		{"setgid -1", testRoot(),
			func(c *auth.Credentials) (*auth.Credentials, error) { return credsSetGID(c, none) },
			ids{}, unix.EINVAL},
		{"setregid swap", userCreds(1000, 2000, 3000),
			func(c *auth.Credentials) (*auth.Credentials, error) { return credsSetREGID(c, 2000, 1000) },
			ids{2000, 1000, 1000, 1000, 0, 0, 0}, nil},
		{"setregid effective to real keeps saved", userCreds(1000, 2000, 3000),
			func(c *auth.Credentials) (*auth.Credentials, error) { return credsSetREGID(c, none, 1000) },
			ids{1000, 1000, 3000, 1000, 0, 0, 0}, nil},
		{"setregid real to saved refused", userCreds(1000, 2000, 3000),
			func(c *auth.Credentials) (*auth.Credentials, error) { return credsSetREGID(c, 3000, none) },
			ids{}, unix.EPERM},
		{"setresgid permutation", userCreds(1000, 2000, 3000),
			func(c *auth.Credentials) (*auth.Credentials, error) { return credsSetRESGID(c, 3000, 1000, 2000) },
			ids{3000, 1000, 2000, 1000, 0, 0, 0}, nil},
		{"setresgid stranger refused", userCreds(1000, 2000, 3000),
			func(c *auth.Credentials) (*auth.Credentials, error) { return credsSetRESGID(c, 9, none, none) },
			ids{}, unix.EPERM},
	})
}

func TestSetFSUID(t *testing.T) {
	fsCaps := capFSMask
	for _, tc := range []struct {
		name    string
		old     *auth.Credentials
		uid     uint32
		wantOld uint32
		wantFS  uint32
		wantEff auth.CapSet
	}{
		{"root to user drops the file-system capabilities", testRoot(), 1000, 0, 1000, all &^ fsCaps},
		{"unprivileged to a stranger is ignored", userCreds(1000, 2000, 3000), 5, 2000, 2000, 0},
		{"unprivileged to its saved uid", userCreds(1000, 2000, 3000), 3000, 2000, 3000, 0},
		{"-1 only reads", userCreds(1000, 2000, 3000), none, 2000, 2000, 0},
		{"root to root changes nothing", testRoot(), 0, 0, 0, all},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, old := credsSetFSUID(tc.old, tc.uid)
			if old != tc.wantOld || uint32(n.FilesystemUID) != tc.wantFS || n.EffectiveCaps != tc.wantEff {
				t.Fatalf("got old %d fs %d eff %#x, want %d %d %#x", old, n.FilesystemUID, n.EffectiveCaps, tc.wantOld, tc.wantFS, tc.wantEff)
			}
		})
	}
	t.Run("back to root raises them from permitted", func(t *testing.T) {
		c := testRoot()
		c.PermittedCaps &^= 1 << unix.CAP_CHOWN
		c.EffectiveCaps = c.PermittedCaps
		n, _ := credsSetFSUID(c, 1000)
		n, old := credsSetFSUID(n, 0)
		if old != 1000 || n.FilesystemUID != 0 || n.EffectiveCaps != c.PermittedCaps {
			t.Fatalf("got old %d fs %d eff %#x, want eff %#x", old, n.FilesystemUID, n.EffectiveCaps, c.PermittedCaps)
		}
	})
	t.Run("setfsgid", func(t *testing.T) {
		n, old := credsSetFSGID(userCreds(1000, 2000, 3000), 1000)
		if old != 2000 || n.FilesystemGID != 1000 {
			t.Fatalf("got old %d fs %d", old, n.FilesystemGID)
		}
		n, old = credsSetFSGID(n, 77)
		if old != 1000 || n.FilesystemGID != 1000 {
			t.Fatalf("stranger: got old %d fs %d", old, n.FilesystemGID)
		}
	})
}

func TestSetGroups(t *testing.T) {
	for _, tc := range []struct {
		name string
		old  *auth.Credentials
		gids []uint32
		want []auth.KGID
		err  error
	}{
		{"sorted", testRoot(), []uint32{5, 3, 4}, []auth.KGID{3, 4, 5}, nil},
		{"empty", testRoot(), nil, []auth.KGID{}, nil},
		{"unprivileged", userCreds(1, 1, 1), []uint32{1}, nil, unix.EPERM},
		{"-1 is invalid", testRoot(), []uint32{1, none}, nil, unix.EINVAL},
		{"too many", testRoot(), make([]uint32, NGroupsMax+1), nil, unix.EINVAL},
		{"NGROUPS_MAX is fine", testRoot(), make([]uint32, NGroupsMax), make([]auth.KGID, NGroupsMax), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := credsSetGroups(tc.old, tc.gids)
			if err != tc.err {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if err == nil && !slices.Equal(n.ExtraGIDs, tc.want) {
				t.Fatalf("groups = %v, want %v", n.ExtraGIDs, tc.want)
			}
		})
	}
}

func TestSetCaps(t *testing.T) {
	const (
		chown   = auth.CapSet(1 << unix.CAP_CHOWN)
		kill    = auth.CapSet(1 << unix.CAP_KILL)
		netRaw  = auth.CapSet(1 << unix.CAP_NET_RAW)
		setpcap = auth.CapSet(1 << unix.CAP_SETPCAP)
	)
	limited := func() *auth.Credentials {
		c := userCreds(1000, 1000, 1000)
		c.PermittedCaps = chown | kill
		c.EffectiveCaps = chown
		c.InheritableCaps = netRaw
		c.AmbientCaps = 0
		return c
	}
	for _, tc := range []struct {
		name           string
		old            *auth.Credentials
		eff, perm, inh auth.CapSet
		err            error
		wantAmb        auth.CapSet
	}{
		{"drop permitted", testRoot(), all &^ netRaw, all &^ netRaw, netRaw, nil, 0},
		{"keep all", testRoot(), all, all, netRaw | kill, nil, netRaw},
		{"effective beyond permitted", limited(), chown | netRaw, chown, 0, unix.EPERM, 0},
		{"permitted grows", limited(), 0, chown | kill | netRaw, 0, unix.EPERM, 0},
		{"inheritable from permitted", limited(), chown, chown | kill, kill | netRaw, nil, 0},
		{"inheritable from nowhere without CAP_SETPCAP", limited(), chown, chown | kill, setpcap, unix.EPERM, 0},
		{"clear everything", limited(), 0, 0, 0, nil, 0},
		{"bits above CAP_LAST_CAP are ignored", limited(), chown | 1<<50, chown | kill, netRaw, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := credsSetCaps(tc.old, tc.eff, tc.perm, tc.inh)
			if err != tc.err {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if err != nil {
				return
			}
			if n.EffectiveCaps != tc.eff&all || n.PermittedCaps != tc.perm || n.InheritableCaps != tc.inh {
				t.Fatalf("got e=%#x p=%#x i=%#x", n.EffectiveCaps, n.PermittedCaps, n.InheritableCaps)
			}
			if n.AmbientCaps != tc.wantAmb {
				t.Fatalf("ambient = %#x, want %#x", n.AmbientCaps, tc.wantAmb)
			}
		})
	}
	t.Run("CAP_SETPCAP allows inheritable within the bounding set only", func(t *testing.T) {
		c := testRoot()
		c.PermittedCaps = setpcap
		c.EffectiveCaps = setpcap
		c.InheritableCaps = 0
		c.BoundingCaps = all &^ kill
		if _, err := credsSetCaps(c, setpcap, setpcap, chown); err != nil {
			t.Fatalf("within bounding set: %v", err)
		}
		if _, err := credsSetCaps(c, setpcap, setpcap, kill); err != unix.EPERM {
			t.Fatalf("outside bounding set: err = %v, want EPERM", err)
		}
	})
}

func TestAmbientAndBounding(t *testing.T) {
	netRaw := uint64(unix.CAP_NET_RAW)
	c := testRoot()
	c.AmbientCaps = 0
	n, err := credsAmbient(c, unix.PR_CAP_AMBIENT_RAISE, netRaw)
	if err != nil || !n.AmbientCaps.Has(uint(netRaw)) {
		t.Fatalf("raise: %v, ambient %#x", err, n.AmbientCaps)
	}
	if _, err := credsAmbient(c, unix.PR_CAP_AMBIENT_RAISE, unix.CAP_CHOWN); err != unix.EPERM {
		t.Fatalf("raise of a non-inheritable capability: err = %v, want EPERM", err)
	}
	if _, err := credsAmbient(c, unix.PR_CAP_AMBIENT_RAISE, 41); err != unix.EINVAL {
		t.Fatalf("raise of capability 41: err = %v, want EINVAL", err)
	}
	n, err = credsAmbient(n, unix.PR_CAP_AMBIENT_LOWER, netRaw)
	if err != nil || n.AmbientCaps != 0 {
		t.Fatalf("lower: %v, ambient %#x", err, n.AmbientCaps)
	}
	n.AmbientCaps = 1<<netRaw | 1<<unix.CAP_KILL
	n, err = credsAmbient(n, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0)
	if err != nil || n.AmbientCaps != 0 {
		t.Fatalf("clear: %v, ambient %#x", err, n.AmbientCaps)
	}
	if _, err := credsAmbient(n, 9, netRaw); err != unix.EINVAL {
		t.Fatalf("bad op: err = %v, want EINVAL", err)
	}

	n, err = credsDropBoundingCap(c, netRaw)
	if err != nil || n.BoundingCaps.Has(uint(netRaw)) || !c.BoundingCaps.Has(uint(netRaw)) {
		t.Fatalf("drop: %v, bounding %#x", err, n.BoundingCaps)
	}
	if _, err := credsDropBoundingCap(c, 41); err != unix.EINVAL {
		t.Fatalf("drop 41: err = %v, want EINVAL", err)
	}
	if _, err := credsDropBoundingCap(userCreds(1, 1, 1), netRaw); err != unix.EPERM {
		t.Fatalf("drop without CAP_SETPCAP: err = %v, want EPERM", err)
	}
}

func TestPrivilegeDropped(t *testing.T) {
	root := testRoot()
	for _, tc := range []struct {
		name string
		fn   func() *auth.Credentials
		want bool
	}{
		{"setuid", func() *auth.Credentials { n, _ := credsSetUID(root, 1000); return n }, true},
		{"setresuid of the real uid only", func() *auth.Credentials { n, _ := credsSetRESUID(root, 5, none, none); return n }, false},
		{"setfsgid", func() *auth.Credentials { n, _ := credsSetFSGID(root, 5); return n }, true},
		{"setgroups", func() *auth.Credentials { n, _ := credsSetGroups(root, []uint32{1}); return n }, false},
		{"capset dropping", func() *auth.Credentials { n, _ := credsSetCaps(root, 0, 0, 0); return n }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := privilegeDropped(root, tc.fn()); got != tc.want {
				t.Fatalf("privilegeDropped = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestInheritAttrs(t *testing.T) {
	parent := &Task{}
	parent.attrs.sched = SchedParams{Policy: unix.SCHED_FIFO, Priority: 10, Nice: -5, ResetOnFork: true}
	parent.attrs.timerSlack = 1234
	parent.attrs.personality = 0x0040000
	child := &Task{}
	child.inheritAttrs(parent)
	if got, want := child.SchedParams(), (SchedParams{Policy: unix.SCHED_NORMAL}); got != want {
		t.Fatalf("reset on fork: got %+v, want %+v", got, want)
	}
	if child.TimerSlack() != 1234 || child.attrs.defaultTimerSlack != 1234 {
		t.Fatalf("timer slack %d default %d", child.TimerSlack(), child.attrs.defaultTimerSlack)
	}
	child.SetTimerSlack(99)
	child.SetTimerSlack(0)
	if child.TimerSlack() != 1234 {
		t.Fatalf("timer slack after reset = %d, want the inherited default", child.TimerSlack())
	}
	if child.Personality() != 0x0040000 {
		t.Fatalf("personality = %#x", child.Personality())
	}
	parent.attrs.sched.ResetOnFork = false
	child.inheritAttrs(parent)
	if got := child.SchedParams(); got.Policy != unix.SCHED_FIFO || got.Priority != 10 || got.Nice != -5 {
		t.Fatalf("plain fork: got %+v", got)
	}
	if (&Task{}).TimerSlack() != DefaultTimerSlack {
		t.Fatalf("default timer slack")
	}
}

func TestCPUSet(t *testing.T) {
	a := AllCPUs()
	if a.Empty() || a.First() != 0 {
		t.Fatalf("AllCPUs = %v", a)
	}
	if !(CPUSet{1 << 1}).Intersect(CPUSet{1 << 2, 1}).Empty() {
		t.Fatalf("disjoint sets intersect")
	}
	if got := (CPUSet{0, 1 << 3}).First(); got != 67 {
		t.Fatalf("First = %d, want 67", got)
	}
	task := &Task{}
	if err := task.SetAffinity(CPUSet{0, 1}); err != unix.EINVAL {
		t.Fatalf("affinity outside the sandbox's CPUs: err = %v, want EINVAL", err)
	}
	if err := task.SetAffinity(CPUSet{1}); err != nil || task.Affinity().First() != 0 {
		t.Fatalf("affinity to CPU 0: %v, %v", err, task.Affinity())
	}
}

func TestTimerSlackRealtime(t *testing.T) {
	task := &Task{}
	task.SetTimerSlack(777)
	task.SetSchedParams(SchedParams{Policy: unix.SCHED_FIFO, Priority: 1})
	if got := task.TimerSlack(); got != 0 {
		t.Fatalf("real-time timer slack = %d, want 0", got)
	}
	task.SetTimerSlack(5)
	task.SetSchedParams(SchedParams{Policy: unix.SCHED_NORMAL})
	if got := task.TimerSlack(); got != DefaultTimerSlack {
		t.Fatalf("timer slack after leaving real time = %d, want the default", got)
	}
	child := &Task{}
	task.SetTimerSlack(900)
	child.inheritAttrs(task)
	grandchild := &Task{}
	child.SetTimerSlack(0)
	grandchild.inheritAttrs(child)
	if got := grandchild.TimerSlack(); got != 900 {
		t.Fatalf("grandchild timer slack = %d, want 900 inherited as default", got)
	}
}
