package fs_test

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// newTypedMemFS returns an empty memfs that says it is of type typ.
func newTypedMemFS(typ string) *fs.Filesystem {
	m := &memfs{}
	root := m.newDir(fs.CreateOptions{Mode: unix.S_IFDIR | 0o777}, nil)
	return fs.NewFilesystem(typ, m, root, false)
}

// TestMountNewTooRevealing checks Linux's mount_too_revealing: a new
// proc in a user namespace's mount namespace needs a whole proc there
// with no locked mount on it, and inherits its read-only lock.
func TestMountNewTooRevealing(t *testing.T) {
	userNS, err := auth.NewUserNamespace(auth.NewRootCredentials(), 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		// setup runs as the sandbox's root in the first namespace, whose
		// /proc is a proc.
		setup    func(w *nsWorld)
		owner    *auth.UserNamespace // of the copy the new proc is made in
		readOnly bool                // of the new proc
		want     error
		lockedRO bool // the new proc cannot be made writable
	}{
		{name: "whole proc", owner: userNS},
		{name: "masked file", owner: userNS, want: unix.EPERM,
			setup: func(w *nsWorld) { w.mountNew(w.ns, "/proc/sys") }},
		{name: "masked, initial namespace", owner: nil,
			setup: func(w *nsWorld) { w.mountNew(w.ns, "/proc/sys") }},
		{name: "masked, another whole proc", owner: userNS,
			setup: func(w *nsWorld) {
				w.mountNew(w.ns, "/proc/sys")
				if _, err := w.ns.Mount(w.ctx, w.at(w.ns, "/q"), newTypedMemFS("proc"), fs.MountFlags{}); err != nil {
					w.t.Fatal(err)
				}
			}},
		{name: "read-only proc, read-write new", owner: userNS, want: unix.EPERM,
			setup: func(w *nsWorld) { w.mountOf(w.ns, "/proc").SetFlags(fs.MountFlags{ReadOnly: true}) }},
		{name: "read-only proc, read-only new", owner: userNS, readOnly: true, lockedRO: true,
			setup: func(w *nsWorld) { w.mountOf(w.ns, "/proc").SetFlags(fs.MountFlags{ReadOnly: true}) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newNSWorld(t, "/proc", "/p", "/q")
			if _, err := w.ns.Mount(w.ctx, w.at(w.ns, "/proc"), newTypedMemFS("proc"), fs.MountFlags{}); err != nil {
				t.Fatal(err)
			}
			if err := fs.Mkdir(w.ctx, &fs.Lookup{Root: w.ns.TopRoot(), Start: w.ns.TopRoot(), Path: "/proc/sys"}, 0o755); err != nil {
				t.Fatal(err)
			}
			if tc.setup != nil {
				tc.setup(w)
			}
			c, _ := w.ns.Copy(tc.owner)
			defer c.DecRef()
			m, err := c.MountNew(w.ctx, w.at(c, "/p"), newTypedMemFS("proc"), fs.MountFlags{ReadOnly: tc.readOnly}, tc.owner)
			if err != tc.want {
				t.Fatalf("MountNew: %v, want %v", err, tc.want)
			}
			if err != nil {
				return
			}
			if err := m.Remount(fs.MountFlags{}); (err == unix.EPERM) != tc.lockedRO {
				t.Errorf("remount read-write: %v, locked read-only %v", err, tc.lockedRO)
			}
		})
	}
}
