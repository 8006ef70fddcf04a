package fs_test

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
)

func TestMutations(t *testing.T) {
	_, root := testTree(t)
	ctx := fstest.NewContext()
	lk := func(p string) *fs.Lookup { return &fs.Lookup{Root: root, Start: root, Path: p} }
	resolve := func(p string) fs.VirtualDentry {
		vd, err := fs.Resolve(ctx, lk(p))
		if err != nil {
			t.Fatal(err)
		}
		return vd
	}
	cases := []struct {
		name string
		err  error
		want error
	}{
		{"mkdir existing", fs.CheckCreate(ctx, lk("/etc"), true), unix.EEXIST},
		{"mkdir /", fs.CheckCreate(ctx, lk("/"), true), unix.EEXIST},
		{"mkdir new", fs.CheckCreate(ctx, lk("/etc/new"), true), unix.EROFS},
		{"mkdir new slash", fs.CheckCreate(ctx, lk("/etc/new/"), true), unix.EROFS},
		{"mknod new slash", fs.CheckCreate(ctx, lk("/etc/new/"), false), unix.ENOENT},
		{"mkdir missing parent", fs.CheckCreate(ctx, lk("/nope/new"), true), unix.ENOENT},
		{"mkdir under file", fs.CheckCreate(ctx, lk("/etc/passwd/x"), true), unix.ENOTDIR},
		{"mkdir on rw fs", fs.CheckCreate(ctx, lk("/mnt/x"), true), unix.EPERM},
		{"unlink missing on ro", fs.CheckRemove(ctx, lk("/etc/nope"), false), unix.EROFS},
		{"unlink dotdot", fs.CheckRemove(ctx, lk("/etc/.."), false), unix.EISDIR},
		{"unlink missing parent", fs.CheckRemove(ctx, lk("/nope/x"), false), unix.ENOENT},
		{"unlink on rw fs missing", fs.CheckRemove(ctx, lk("/mnt/nope"), false), unix.ENOENT},
		{"unlink dir on rw fs", fs.CheckRemove(ctx, lk("/mnt/inner/"), false), unix.ENOTDIR},
		{"rmdir dot", fs.CheckRemove(ctx, lk("/etc/."), true), unix.EINVAL},
		{"rmdir dotdot", fs.CheckRemove(ctx, lk("/etc/.."), true), unix.ENOTEMPTY},
		{"rmdir root", fs.CheckRemove(ctx, lk("/"), true), unix.EBUSY},
		{"rmdir ro", fs.CheckRemove(ctx, lk("/etc"), true), unix.EROFS},
		{"rmdir mountpoint", fs.CheckRemove(ctx, lk("/mnt"), true), unix.EROFS},
		{"rename across mounts", fs.CheckRename(ctx, lk("/etc/passwd"), lk("/mnt/x"), false), unix.EXDEV},
		{"rename ro", fs.CheckRename(ctx, lk("/etc/passwd"), lk("/etc/x"), false), unix.EROFS},
		{"rename dot", fs.CheckRename(ctx, lk("/etc/."), lk("/etc/x"), false), unix.EBUSY},
		{"rename missing parent", fs.CheckRename(ctx, lk("/x/y"), lk("/etc/x"), false), unix.ENOENT},
		{"chmod ro", fs.CheckSetAttr(ctx, resolve("/etc/passwd")), unix.EROFS},
		{"truncate dir", fs.CheckTruncate(ctx, resolve("/etc")), unix.EISDIR},
		{"truncate ro", fs.CheckTruncate(ctx, resolve("/etc/passwd")), unix.EROFS},
	}
	for _, c := range cases {
		if c.err != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.err, c.want)
		}
	}
}
