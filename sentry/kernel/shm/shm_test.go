package shm

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/mm"
)

func newRegistry(t *testing.T) (*Registry, *mm.MemoryFile) {
	t.Helper()
	mf, err := mm.NewMemoryFile()
	if err != nil {
		t.Fatal(err)
	}
	return NewRegistry(mf), mf
}

func user(uid uint32) *auth.Credentials {
	return &auth.Credentials{EffectiveUID: auth.KUID(uid), EffectiveGID: auth.KGID(uid), FilesystemUID: auth.KUID(uid), FilesystemGID: auth.KGID(uid)}
}

func TestGetErrors(t *testing.T) {
	r, _ := newRegistry(t)
	root := auth.NewRootCredentials()
	id, err := r.Get(root, NumericPID(1), 42, 4096, unix.IPC_CREAT|0o600)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		c     *auth.Credentials
		key   int32
		size  uint64
		flags int32
		want  error
		id    int32
	}{
		{"exclusive on existing", root, 42, 4096, unix.IPC_CREAT | unix.IPC_EXCL, unix.EEXIST, 0},
		{"lookup", root, 42, 0, 0, nil, id},
		{"larger than the segment", root, 42, 8192, 0, unix.EINVAL, 0},
		{"missing key", root, 43, 4096, 0, unix.ENOENT, 0},
		{"zero size", root, unix.IPC_PRIVATE, 0, unix.IPC_CREAT, unix.EINVAL, 0},
		{"other user, no access", user(1000), 42, 0, 0o400, unix.EACCES, 0},
		{"other user, access asked in the other bits", user(1000), 42, 0, 0o004, unix.EACCES, 0},
		{"other user, no access asked", user(1000), 42, 0, 0, nil, id},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Get(tc.c, NumericPID(1), tc.key, tc.size, tc.flags)
			if err != tc.want || (err == nil && got != tc.id) {
				t.Fatalf("got %d %v, want %d %v", got, err, tc.id, tc.want)
			}
		})
	}
}

func TestRemoveDestroysOnLastDetach(t *testing.T) {
	r, mf := newRegistry(t)
	root := auth.NewRootCredentials()
	id, _ := r.Get(root, NumericPID(1), 7, 3*4096, unix.IPC_CREAT|0o600)
	s, err := r.Attach(root, NumericPID(1), id, false, false)
	if err != nil {
		t.Fatal(err)
	}
	m := mm.New(nil, mf)
	addr, err := m.MMap(mm.MMapOpts{Length: uintptr(s.Size), Prot: unix.PROT_READ | unix.PROT_WRITE, Object: s.Object()})
	s.Object().DecRef()
	if err != nil {
		t.Fatal(err)
	}
	m.CopyOut(addr, []byte("data"))
	if err := r.Remove(user(1000), id); err != unix.EPERM {
		t.Fatalf("IPC_RMID by another user: %v", err)
	}
	if err := r.Remove(root, id); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Get(root, NumericPID(1), 7, 0, 0); err != unix.ENOENT {
		t.Fatalf("key after IPC_RMID: %v", err)
	}
	d, _, err := r.Stat(root, id, false, false, nil)
	if err != nil || d.Perm.Mode&ModeDest == 0 || d.Nattch != 1 {
		t.Fatalf("stat after IPC_RMID: %+v %v", d, err)
	}
	if _, err := m.DetachObject(addr, r.Owns); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Stat(root, id, false, false, nil); err != unix.EINVAL {
		t.Fatalf("stat after the last detach: %v", err)
	}
	m.DecUsers()
	if u := mf.Used(); u != 0 {
		t.Fatalf("%d bytes leaked", u)
	}
}
