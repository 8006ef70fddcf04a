package fs_test

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
)

// FuzzResolve walks arbitrary paths from a chroot at /etc of the test
// tree: resolution must never panic, never leave the root, and fail only
// with errors Linux's path walk can give.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"/etc/passwd", "../../..", "abs/../loop", "hosts/", "//./..//hosts", "", "/mnt/inner/..", strings.Repeat("a/", 300)} {
		f.Add(s, true, uint8(0))
	}
	f.Fuzz(func(t *testing.T, path string, follow bool, resolve uint8) {
		_, root := testTree(t)
		ctx := fstest.NewContext()
		etc, err := fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: "/etc"})
		if err != nil {
			t.Fatal(err)
		}
		flags := uint64(resolve) & (unix.RESOLVE_NO_XDEV | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_BENEATH | unix.RESOLVE_IN_ROOT)
		vd, err := fs.Resolve(ctx, &fs.Lookup{Root: etc, Start: etc, Path: path, FollowFinal: follow, Resolve: flags})
		switch err {
		case nil:
			if _, ok := fs.PathOf(etc, vd); !ok {
				t.Fatalf("Resolve(%q) escaped the root", path)
			}
		case unix.ENOENT, unix.ENOTDIR, unix.ELOOP, unix.ENAMETOOLONG, unix.EACCES, unix.EXDEV:
		default:
			t.Fatalf("Resolve(%q) = unexpected %v", path, err)
		}
		if _, err := fs.ResolveParent(ctx, &fs.Lookup{Root: etc, Start: etc, Path: path, Resolve: flags}); err != nil {
			switch err {
			case unix.ENOENT, unix.ENOTDIR, unix.ELOOP, unix.ENAMETOOLONG, unix.EACCES, unix.EXDEV:
			default:
				t.Fatalf("ResolveParent(%q) = unexpected %v", path, err)
			}
		}
	})
}
