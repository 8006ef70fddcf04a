package ipc

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

type obj struct{ p Perm }

func (o *obj) IPCPerm() *Perm { return &o.p }

func TestTableIDs(t *testing.T) {
	var tab Table[*obj]
	a, b := &obj{p: Perm{Key: 7}}, &obj{}
	if err := tab.Add(a, 2); err != nil {
		t.Fatal(err)
	}
	if err := tab.Add(b, 2); err != nil {
		t.Fatal(err)
	}
	if err := tab.Add(&obj{}, 2); err != unix.ENOSPC {
		t.Errorf("Add past the limit = %v, want ENOSPC", err)
	}
	if a.p.ID != 0 || b.p.ID != 1 {
		t.Errorf("ids %d %d, want 0 1", a.p.ID, b.p.ID)
	}
	tab.Remove(a)
	c := &obj{p: Perm{Key: 7}}
	if err := tab.Add(c, 2); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		id   int32
		want *obj
		err  error
	}{
		{"reused slot's new id", SeqMultiplier, c, nil},
		{"reused slot's old id", 0, nil, unix.EIDRM},
		{"live", 1, b, nil},
		{"empty slot", 2, nil, unix.EINVAL},
		{"negative", -1, nil, unix.EINVAL},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tab.ByID(tc.id)
			if got != tc.want || err != tc.err {
				t.Errorf("ByID(%d) = %v, %v; want %v, %v", tc.id, got, err, tc.want, tc.err)
			}
		})
	}
	if o, ok := tab.ByKey(7); !ok || o != c {
		t.Errorf("ByKey(7) = %v, %v; want the new object", o, ok)
	}
	if c.p.Seq() != 1 {
		t.Errorf("Seq = %d, want 1", c.p.Seq())
	}
	tab.HideKey(c)
	if _, ok := tab.ByKey(7); ok || c.p.Key != unix.IPC_PRIVATE {
		t.Errorf("key still found after HideKey")
	}
	if tab.Count() != 2 || tab.Highest() != 1 || len(tab.All()) != 2 {
		t.Errorf("Count %d Highest %d All %d, want 2 1 2", tab.Count(), tab.Highest(), len(tab.All()))
	}
}

func TestPermCheck(t *testing.T) {
	owner := &auth.Credentials{EffectiveUID: 10, EffectiveGID: 10}
	group := &auth.Credentials{EffectiveUID: 11, EffectiveGID: 10}
	other := &auth.Credentials{EffectiveUID: 12, EffectiveGID: 12}
	root := auth.NewRootCredentials()
	p := NewPerm(owner, 1, unix.IPC_CREAT|0o640)
	tests := []struct {
		name string
		c    *auth.Credentials
		want uint32
		err  error
	}{
		{"owner writes", owner, MayWrite, nil},
		{"group reads", group, MayRead, nil},
		{"group writes", group, MayWrite, unix.EACCES},
		{"other reads", other, MayRead, unix.EACCES},
		{"other asks nothing", other, 0, nil},
		{"CAP_IPC_OWNER", root, MayRead | MayWrite, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := p.Check(tc.c, tc.want); err != tc.err {
				t.Errorf("Check = %v, want %v", err, tc.err)
			}
		})
	}
	if p.MayChange(group) || !p.MayChange(owner) || !p.MayChange(root) {
		t.Errorf("MayChange: group may, or owner or root may not")
	}
	p.Set(12, 12, 0o7777)
	if p.UID != 12 || p.CUID != 10 || p.Mode != 0o777 {
		t.Errorf("after Set: uid %d cuid %d mode %o", p.UID, p.CUID, p.Mode)
	}
}

func TestTableForStatForChange(t *testing.T) {
	owner := &auth.Credentials{EffectiveUID: 10, EffectiveGID: 10}
	other := &auth.Credentials{EffectiveUID: 12, EffectiveGID: 12}
	var tab Table[*obj]
	a := &obj{p: NewPerm(owner, 0, 0o600)}
	if err := tab.Add(a, 4); err != nil {
		t.Fatal(err)
	}
	tab.Remove(a)
	b := &obj{p: NewPerm(owner, 0, 0o600)}
	if err := tab.Add(b, 4); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		call    func() (*obj, error)
		want    *obj
		wantErr error
	}{
		{"stat by slot", func() (*obj, error) { return tab.ForStat(0, true) }, b, nil},
		{"stat by empty slot", func() (*obj, error) { return tab.ForStat(1, true) }, nil, unix.EINVAL},
		{"stat by id", func() (*obj, error) { return tab.ForStat(b.p.ID, false) }, b, nil},
		{"stat by old id", func() (*obj, error) { return tab.ForStat(0, false) }, nil, unix.EIDRM},
		{"change by owner", func() (*obj, error) { return tab.ForChange(owner, b.p.ID) }, b, nil},
		{"change by other", func() (*obj, error) { return tab.ForChange(other, b.p.ID) }, nil, unix.EPERM},
		{"change of old id", func() (*obj, error) { return tab.ForChange(owner, 0) }, nil, unix.EIDRM},
		{"change of empty slot", func() (*obj, error) { return tab.ForChange(owner, 1) }, nil, unix.EINVAL},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.call()
			if got != tc.want || err != tc.wantErr {
				t.Errorf("got %v, %v; want %v, %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}
