package fs_test

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
)

// racyDir is a memfs directory that looks up runs of names at once
// (fs.PathLookupDir, as the gofer's directories do) and, once it has
// answered its first run, calls after: the moment another task could
// change the tree before the walk goes on.
type racyDir struct {
	*memDir
	after func()
}

// LookupPath implements fs.PathLookupDir.
func (d *racyDir) LookupPath(ctx fs.Context, names []string, _ bool) ([]fs.Node, error) {
	var nodes []fs.Node
	var err error
	var cur fs.Node = d.memDir
	for _, name := range names {
		dir, ok := cur.(*memDir)
		if !ok {
			break
		}
		if cur, err = dir.Lookup(ctx, name); err != nil {
			break
		}
		nodes = append(nodes, cur)
	}
	if d.after != nil {
		after := d.after
		d.after = nil
		after()
	}
	return nodes, err
}

// TestOpenCreateRacesCreate opens a/b/f with O_CREAT while another task
// creates f just after the walk has looked up the path (racyDir's
// after). Linux never fails an O_CREAT open with ENOENT: without O_EXCL
// the open gets the other task's file, with O_EXCL it is EEXIST. A walk
// that looked f up in the same run as a and b remembered it missing and
// failed with ENOENT (sentry/fs/open.go looks the last component up on
// its own since).
func TestOpenCreateRacesCreate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags uint32
		want  error
	}{
		{"O_CREAT", unix.O_CREAT | unix.O_RDWR, nil},
		{"O_CREAT|O_EXCL", unix.O_CREAT | unix.O_EXCL | unix.O_RDWR, unix.EEXIST},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := fstest.NewContext()
			m := &memfs{}
			root := &racyDir{memDir: m.newDir(fs.CreateOptions{Mode: unix.S_IFDIR | 0o777}, nil)}
			a, err := root.Mkdir(ctx, "a", fs.CreateOptions{Mode: unix.S_IFDIR | 0o777})
			if err != nil {
				t.Fatal(err)
			}
			b, err := a.(*memDir).Mkdir(ctx, "b", fs.CreateOptions{Mode: unix.S_IFDIR | 0o777})
			if err != nil {
				t.Fatal(err)
			}
			var theirs fs.Node
			root.after = func() {
				if theirs, err = b.(*memDir).Mknod(ctx, "f", fs.CreateOptions{Mode: unix.S_IFREG | 0o644}); err != nil {
					t.Errorf("the other task's create: %v", err)
				}
			}
			vd := fs.NewMountNamespace(fs.NewFilesystem("memfs", m, root, false), fs.MountFlags{}).Root()
			fd, err := fs.Open(ctx, fs.Lookup{Root: vd, Start: vd, Path: "a/b/f"}, fs.OpenOptions{Flags: tc.flags, Mode: 0o644})
			if theirs == nil {
				t.Fatal("the walk made no batched lookup: the race was not set up")
			}
			if err != tc.want {
				t.Fatalf("open: %v, want %v", err, tc.want)
			}
			if err != nil {
				return
			}
			defer fd.DecRef()
			st, err := fd.Stat(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if want, _ := theirs.Stat(ctx); st.Ino != want.Ino {
				t.Errorf("opened inode %d, want the other task's %d", st.Ino, want.Ino)
			}
		})
	}
}
