package auth

import (
	"fmt"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestParseIDMap(t *testing.T) {
	many := func(n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "%d %d 1\n", i, 1000+i)
		}
		return b.String()
	}
	for _, tc := range []struct {
		name string
		in   string
		want []IDMapEntry
		err  error
	}{
		{"one", "0 1000 1\n", []IDMapEntry{{0, 1000, 1}}, nil},
		{"no newline", "0 1000 1", []IDMapEntry{{0, 1000, 1}}, nil},
		{"spaces", "  0\t1000   5  \n", []IDMapEntry{{0, 1000, 5}}, nil},
		{"two", "0 1000 1\n1 100000 65536\n", []IDMapEntry{{0, 1000, 1}, {1, 100000, 65536}}, nil},
		{"empty", "", nil, unix.EINVAL},
		{"blank line", "0 1000 1\n\n", nil, unix.EINVAL},
		{"two fields", "0 1000\n", nil, unix.EINVAL},
		{"junk", "0 1000 1 x\n", nil, unix.EINVAL},
		{"letter", "a 1000 1\n", nil, unix.EINVAL},
		{"sign", "-1 1000 1\n", nil, unix.EINVAL},
		{"count zero", "0 1000 0\n", nil, unix.EINVAL},
		{"first -1", "4294967295 0 1\n", nil, unix.EINVAL},
		{"lower -1", "0 4294967295 1\n", nil, unix.EINVAL},
		{"wraps", "4294967290 0 10\n", nil, unix.EINVAL},
		{"whole space", "0 0 4294967295\n", []IDMapEntry{{0, 0, 4294967295}}, nil},
		{"overflow wraps to 0", "4294967296 1000 1\n", []IDMapEntry{{0, 1000, 1}}, nil},
		{"upper overlap", "0 1000 10\n5 2000 10\n", nil, unix.EINVAL},
		{"lower overlap", "0 1000 10\n100 1005 10\n", nil, unix.EINVAL},
		{"adjacent", "0 1000 10\n10 1010 10\n", []IDMapEntry{{0, 1000, 10}, {10, 1010, 10}}, nil},
		{"340 lines", many(340), nil, nil},
		{"341 lines", many(341), nil, unix.EINVAL},
		{"page", strings.Repeat(" ", 4090) + "0 0 1\n", nil, unix.EINVAL},
		{"nul ends", "0 1000 1\x00junk", []IDMapEntry{{0, 1000, 1}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseIDMap([]byte(tc.in))
			if err != tc.err {
				t.Fatalf("ParseIDMap(%q) error %v, want %v", tc.in, err, tc.err)
			}
			if tc.want != nil && fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("ParseIDMap(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

// FuzzParseIDMap checks that any text either fails with EINVAL or gives
// a map Linux would accept: 1 to 340 lines, none empty or wrapping, none
// overlapping another in either id space.
func FuzzParseIDMap(f *testing.F) {
	for _, s := range []string{"0 1000 1\n", "0 0 4294967295", "1 2 3\n4 5 6\n", " 7\t8 9 \n", "0 1 1\n\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseIDMap(data)
		if err != nil {
			if err != unix.EINVAL {
				t.Fatalf("error %v, want EINVAL", err)
			}
			return
		}
		if len(m) == 0 || len(m) > MaxIDMapLines {
			t.Fatalf("%d lines", len(m))
		}
		for i, e := range m {
			if e.Count == 0 || e.First+e.Count < e.First || e.Lower+e.Count < e.Lower || e.First == NoID || e.Lower == NoID {
				t.Fatalf("bad line %v", e)
			}
			for _, p := range m[:i] {
				if p.First < e.First+e.Count && e.First < p.First+p.Count {
					t.Fatalf("%v overlaps %v", e, p)
				}
				if p.Lower < e.Lower+e.Count && e.Lower < p.Lower+p.Count {
					t.Fatalf("%v overlaps %v in lower ids", e, p)
				}
			}
		}
		// A map that parses installs in a fresh namespace whose writer
		// has every capability over the parent, and translates both ways.
		ns, err := NewUserNamespace(NewRootCredentials(), 1)
		if err != nil {
			t.Fatal(err)
		}
		c := NewRootCredentials()
		if err := ns.WriteUIDMap(c, c, data); err != nil {
			t.Fatalf("WriteUIDMap: %v", err)
		}
		for _, e := range m {
			for _, id := range []uint32{e.First, e.First + e.Count - 1} {
				k, ok := ns.MapToKUID(id)
				if !ok {
					t.Fatalf("uid %d unmapped", id)
				}
				if back, ok := ns.MapFromKUID(k); !ok || back != id {
					t.Fatalf("uid %d -> %d -> %d", id, k, back)
				}
			}
		}
	})
}

// child returns a namespace made by c.
func child(t *testing.T, c *Credentials) *UserNamespace {
	t.Helper()
	ns, err := NewUserNamespace(c, 100)
	if err != nil {
		t.Fatalf("NewUserNamespace: %v", err)
	}
	return ns
}

// user returns credentials of uid and gid without capabilities in ns.
func user(ns *UserNamespace, uid KUID, gid KGID) *Credentials {
	return &Credentials{RealUID: uid, EffectiveUID: uid, SavedUID: uid, FilesystemUID: uid,
		RealGID: gid, EffectiveGID: gid, SavedGID: gid, FilesystemGID: gid, UserNamespace: ns, BoundingCaps: AllCaps}
}

func TestTranslation(t *testing.T) {
	ns := child(t, NewRootCredentials())
	root := NewRootCredentials()
	if err := ns.WriteUIDMap(root, root, []byte("0 1000 10\n100 5000 1\n")); err != nil {
		t.Fatal(err)
	}
	if err := ns.WriteGIDMap(root, root, []byte("0 2000 1\n")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		k    KUID
		id   uint32
		ok   bool
		show uint32
	}{
		{1000, 0, true, 0},
		{1009, 9, true, 9},
		{1010, 0, false, OverflowID},
		{5000, 100, true, 100},
		{0, 0, false, OverflowID},
	} {
		t.Run(fmt.Sprint(tc.k), func(t *testing.T) {
			id, ok := ns.MapFromKUID(tc.k)
			if ok != tc.ok || (ok && id != tc.id) {
				t.Errorf("MapFromKUID(%d) = %d, %v; want %d, %v", tc.k, id, ok, tc.id, tc.ok)
			}
			if got := ns.UIDOf(tc.k); got != tc.show {
				t.Errorf("UIDOf(%d) = %d, want %d", tc.k, got, tc.show)
			}
			if tc.ok {
				if k, ok := ns.MapToKUID(tc.id); !ok || k != tc.k {
					t.Errorf("MapToKUID(%d) = %d, %v; want %d", tc.id, k, ok, tc.k)
				}
			}
		})
	}
	if _, ok := ns.MapToKGID(1); ok {
		t.Errorf("gid 1 maps")
	}
	if ns.RootKUID() != 1000 {
		t.Errorf("RootKUID = %d", ns.RootKUID())
	}
	// The initial namespace maps every id but -1 to itself.
	var init *UserNamespace
	if k, ok := init.MapToKUID(42); !ok || k != 42 {
		t.Errorf("initial MapToKUID(42) = %d, %v", k, ok)
	}
	if _, ok := init.MapToKUID(NoID); ok {
		t.Errorf("initial maps -1")
	}
	// The map as a reader in the namespace and one in the parent see it.
	if got, want := ns.IDMapText(ns, false), "         0       1000         10\n       100       5000          1\n"; got != want {
		t.Errorf("IDMapText(self) = %q, want %q", got, want)
	}
	nested := child(t, &Credentials{EffectiveUID: 1000, EffectiveGID: 2000, UserNamespace: ns})
	// Mapping the parent's uid 0 takes CAP_SETFCAP there.
	w := user(ns, 1000, 2000)
	if err := nested.WriteUIDMap(w, w, []byte("0 0 1\n")); err != unix.EPERM {
		t.Fatalf("nested WriteUIDMap without CAP_SETFCAP: %v, want EPERM", err)
	}
	w.EffectiveCaps = AllCaps
	if err := nested.WriteUIDMap(w, w, []byte("0 0 1\n")); err != nil {
		t.Fatalf("nested WriteUIDMap: %v", err)
	}
	// A nested map's lower ids are global: the parent's 0 is 1000.
	if got := nested.UIDMap(); len(got) != 1 || got[0].Lower != 1000 {
		t.Errorf("nested map %v", got)
	}
	if got, want := nested.IDMapText(nil, false), "         0       1000          1\n"; got != want {
		t.Errorf("nested as initial sees %q, want %q", got, want)
	}
	if got, want := nested.IDMapText(ns, false), "         0          0          1\n"; got != want {
		t.Errorf("nested as parent sees %q, want %q", got, want)
	}
}

func TestNewUserNamespace(t *testing.T) {
	c := NewRootCredentials()
	for i := 0; i < MaxUserNSLevel; i++ {
		ns := child(t, c)
		if ns.Level() != i+1 {
			t.Fatalf("level %d, want %d", ns.Level(), i+1)
		}
		if err := ns.WriteUIDMap(c, c, []byte("0 0 1")); err != nil {
			t.Fatalf("level %d uid_map: %v", i+1, err)
		}
		if err := ns.WriteGIDMap(c, c, []byte("0 0 1")); err != nil {
			t.Fatalf("level %d gid_map: %v", i+1, err)
		}
		c = c.InUserNamespace(ns)
	}
	if _, err := NewUserNamespace(c, 1); err != unix.ENOSPC {
		t.Errorf("level 33: %v, want ENOSPC", err)
	}
	// The creator's ids must be mapped in its namespace.
	ns := child(t, NewRootCredentials())
	in := NewRootCredentials().InUserNamespace(ns)
	if _, err := NewUserNamespace(in, 1); err != unix.EPERM {
		t.Errorf("unmapped creator: %v, want EPERM", err)
	}
}

func TestWriteMapRules(t *testing.T) {
	const uid, gid = 1000, 1000
	type step struct {
		what string // uid, gid, setgroups
		data string
		want error
	}
	for _, tc := range []struct {
		name  string
		steps []step
		// byParent writes as the creator in the parent, not from inside.
		byParent bool
	}{
		{"own uid", []step{{"uid", "0 1000 1", nil}}, false},
		{"own uid twice", []step{{"uid", "0 1000 1", nil}, {"uid", "0 1000 1", unix.EPERM}}, false},
		{"a page after the map", []step{{"uid", "0 1000 1", nil}, {"uid", strings.Repeat(" ", 4096), unix.EINVAL}}, false},
		{"other uid", []step{{"uid", "0 1001 1", unix.EPERM}}, false},
		{"two uids", []step{{"uid", "0 1000 2", unix.EPERM}}, false},
		{"parent root", []step{{"uid", "0 0 1", unix.EPERM}}, false},
		{"bad text", []step{{"uid", "0 1000", unix.EINVAL}}, false},
		{"gid before deny", []step{{"gid", "0 1000 1", unix.EPERM}}, false},
		{"gid after deny", []step{{"setgroups", "deny", nil}, {"gid", "0 1000 1", nil}}, false},
		{"deny after gid", []step{{"setgroups", "deny", nil}, {"gid", "0 1000 1", nil}, {"setgroups", "deny", unix.EPERM}}, false},
		{"allow after deny", []step{{"setgroups", "deny", nil}, {"setgroups", "allow", unix.EPERM}}, false},
		{"allow", []step{{"setgroups", "allow\n", nil}}, false},
		{"setgroups junk", []step{{"setgroups", "denyx", unix.EINVAL}}, false},
		{"setgroups long", []step{{"setgroups", "deny    ", unix.EINVAL}}, false},
		{"by parent own uid", []step{{"uid", "0 1000 1", nil}}, true},
		{"by parent other", []step{{"uid", "0 1001 1", unix.EPERM}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			creator := user(nil, uid, gid)
			ns := child(t, creator)
			w := creator.InUserNamespace(ns)
			if tc.byParent {
				w = creator
			}
			for _, s := range tc.steps {
				var err error
				switch s.what {
				case "uid":
					err = ns.WriteUIDMap(w, w, []byte(s.data))
				case "gid":
					err = ns.WriteGIDMap(w, w, []byte(s.data))
				case "setgroups":
					err = ns.WriteSetgroups(w, []byte(s.data))
				}
				if err != s.want {
					t.Fatalf("%s %q: %v, want %v", s.what, s.data, err, s.want)
				}
			}
		})
	}
	// A stranger, in neither the namespace nor its parent, cannot write.
	ns := child(t, user(nil, uid, gid))
	other := child(t, NewRootCredentials())
	stranger := NewRootCredentials().InUserNamespace(other)
	if err := ns.WriteUIDMap(stranger, stranger, []byte("0 1000 1")); err != unix.EPERM {
		t.Errorf("stranger: %v, want EPERM", err)
	}
	// Nor can a task of the parent without capabilities that is not the owner.
	nonOwner := user(nil, 2000, 2000)
	if err := ns.WriteUIDMap(nonOwner, nonOwner, []byte("0 2000 1")); err != unix.EPERM {
		t.Errorf("non-owner: %v, want EPERM", err)
	}
	// Root of the parent maps anything the parent maps.
	ns = child(t, user(nil, uid, gid))
	root := NewRootCredentials()
	if err := ns.WriteUIDMap(root, root, []byte("0 100000 65536")); err != nil {
		t.Errorf("root writes a range: %v", err)
	}
	// The initial namespace's maps are fixed.
	var init *UserNamespace
	if err := init.WriteUIDMap(root, root, []byte("0 0 1")); err != unix.EPERM {
		t.Errorf("initial uid_map: %v, want EPERM", err)
	}
}

// TestWriteMapOpener checks that a map file's opener, not only its
// writer, must be entitled to the map (Linux's map_write checks
// file->f_cred; CVE-2013-1959 was a privileged writer handed a file an
// unprivileged process opened).
func TestWriteMapOpener(t *testing.T) {
	const uid, gid = 1000, 1000
	root := NewRootCredentials()
	for _, tc := range []struct {
		name string
		// opener and writer: "root" (root of the parent), "creator" (the
		// unprivileged creator, in the parent), "inside" (the creator
		// after unshare, in the namespace), "stranger" (root of a sibling
		// namespace).
		opener, writer string
		what           string // uid, gid, setgroups
		data           string
		want           error
	}{
		{"root both", "root", "root", "uid", "0 0 1000", nil},
		{"inside opens, root writes parent's root", "inside", "root", "uid", "0 0 1000", unix.EPERM},
		{"inside opens, root writes another id", "inside", "root", "uid", "0 1001 1", unix.EPERM},
		{"inside opens, root writes a range", "inside", "root", "uid", "0 1000 2", unix.EPERM},
		{"creator opens, root writes a range", "creator", "root", "uid", "0 1000 2", unix.EPERM},
		{"inside opens, root writes the opener's id", "inside", "root", "uid", "0 1000 1", nil},
		{"inside opens, root writes a gid before deny", "inside", "root", "gid", "0 1000 1", unix.EPERM},
		{"root opens, inside writes a range", "root", "inside", "uid", "0 1000 2", unix.EPERM},
		{"root opens, creator writes a range", "root", "creator", "uid", "0 1000 2", unix.EPERM},
		{"stranger opens, root writes", "stranger", "root", "uid", "0 1000 1", unix.EPERM},
		{"root opens setgroups, creator writes", "root", "creator", "setgroups", "deny", nil},
		{"stranger opens setgroups, root writes", "stranger", "root", "setgroups", "deny", unix.EACCES},
	} {
		t.Run(tc.name, func(t *testing.T) {
			creator := user(nil, uid, gid)
			ns := child(t, creator)
			creds := map[string]*Credentials{
				"root":     root,
				"creator":  creator,
				"inside":   creator.InUserNamespace(ns),
				"stranger": root.InUserNamespace(child(t, root)),
			}
			opener, writer := creds[tc.opener], creds[tc.writer]
			var err error
			switch tc.what {
			case "uid":
				err = ns.WriteUIDMap(opener, writer, []byte(tc.data))
			case "gid":
				err = ns.WriteGIDMap(opener, writer, []byte(tc.data))
			case "setgroups":
				err = ns.WriteSetgroups(opener, []byte(tc.data))
			}
			if err != tc.want {
				t.Fatalf("%s %q: %v, want %v", tc.what, tc.data, err, tc.want)
			}
		})
	}
}

func TestHasCapabilityIn(t *testing.T) {
	creator := user(nil, 1000, 1000)
	ns := child(t, creator)
	inside := creator.InUserNamespace(ns)
	if err := ns.WriteUIDMap(inside, inside, []byte("0 1000 1")); err != nil {
		t.Fatal(err)
	}
	if err := ns.WriteSetgroups(inside, []byte("deny")); err != nil {
		t.Fatal(err)
	}
	if err := ns.WriteGIDMap(inside, inside, []byte("0 1000 1")); err != nil {
		t.Fatal(err)
	}
	grand := child(t, inside)
	other := child(t, user(nil, 2000, 2000))
	root := NewRootCredentials()
	for _, tc := range []struct {
		name string
		c    *Credentials
		ns   *UserNamespace
		want bool
	}{
		{"root over initial", root, nil, true},
		{"root over child", root, ns, true},
		{"root over grandchild", root, grand, true},
		{"creator over initial", creator, nil, false},
		{"owner over its namespace", creator, ns, true},
		{"owner over grandchild", creator, grand, true},
		{"owner over another's", creator, other, false},
		{"inside over own", inside, ns, true},
		{"inside over initial", inside, nil, false},
		{"inside over child of own", inside, grand, true},
		{"inside over sibling", inside, other, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.c.HasCapabilityIn(unix.CAP_SYS_ADMIN, tc.ns); got != tc.want {
				t.Errorf("HasCapabilityIn = %v, want %v", got, tc.want)
			}
		})
	}
	if inside.HasCapability(unix.CAP_SYS_ADMIN) {
		t.Errorf("a task with every capability in a child namespace has them over the initial one")
	}
}
