package kernel

import (
	"testing"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// TestWouldDump checks Linux's would_dump: an exec of a file its caller
// cannot read is not dumpable, and its address space moves up to the
// nearest user namespace mapping the file's owner and group.
func TestWouldDump(t *testing.T) {
	creator := plainCreds(1000, 1000)
	ns, err := auth.NewUserNamespace(creator, 1)
	if err != nil {
		t.Fatal(err)
	}
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
	for _, tc := range []struct {
		name    string
		files   []*execFile
		nonDump bool
		userNS  *auth.UserNamespace
	}{
		{"readable", []*execFile{{uid: 0, gid: 0}}, false, ns},
		{"unreadable, owner mapped", []*execFile{{unreadable: true, uid: 1000, gid: 1000}}, true, ns},
		{"unreadable, owner unmapped", []*execFile{{unreadable: true, uid: 0, gid: 0}}, true, nil},
		{"unreadable, group unmapped", []*execFile{{unreadable: true, uid: 1000, gid: 0}}, true, nil},
		{"unreadable interpreter", []*execFile{{uid: 1000, gid: 1000}, {unreadable: true, uid: 0, gid: 0}}, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := wouldDump(inside, tc.files)
			if d.nonDumpable != tc.nonDump || d.userNS != tc.userNS {
				t.Errorf("wouldDump = %v, %p; want %v, %p", d.nonDumpable, d.userNS, tc.nonDump, tc.userNS)
			}
		})
	}
}
