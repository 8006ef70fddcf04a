package fs_test

import (
	"fmt"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
)

// TestDirFileChanges checks what a directory file lists when the
// directory changes between reads: removed entries are skipped, offsets
// (d_off) keep naming the same entries, a rewind lists afresh.
func TestDirFileChanges(t *testing.T) {
	type step struct {
		op   string // "read N", "seek N", "unlink X", "create X", "rename X Y"
		want string // for reads: the names listed, comma-separated, with their d_off as name@off
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"removed before read", []step{
			{"read 3", ".@1,..@2,f0@3"},
			{"unlink f1", ""},
			{"unlink f3", ""},
			{"read 9", "f2@5,f4@7"},
		}},
		{"removed after read stays read", []step{
			{"read 4", ".@1,..@2,f0@3,f1@4"},
			{"unlink f0", ""},
			{"read 9", "f2@5,f3@6,f4@7"},
			{"seek 0", ""},
			{"read 9", ".@1,..@2,f1@3,f2@4,f3@5,f4@6"},
		}},
		{"seek back to an offset", []step{
			{"read 9", ".@1,..@2,f0@3,f1@4,f2@5,f3@6,f4@7"},
			{"unlink f2", ""},
			{"seek 3", ""},
			{"read 9", "f1@4,f3@6,f4@7"},
		}},
		{"renamed away and made", []step{
			{"read 2", ".@1,..@2"},
			{"rename f0 z", ""},
			{"create a", ""},
			{"read 9", "f1@4,f2@5,f3@6,f4@7"},
			{"seek 0", ""},
			{"read 9", ".@1,..@2,a@3,f1@4,f2@5,f3@6,f4@7,z@8"},
		}},
		{"all removed", []step{
			{"read 1", ".@1"},
			{"unlink f0", ""}, {"unlink f1", ""}, {"unlink f2", ""}, {"unlink f3", ""}, {"unlink f4", ""},
			{"read 9", "..@2"},
			{"read 9", ""},
		}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := fstest.NewContext()
			f := &tfs{t: t, root: writableTree(t), ctx: ctx}
			dir := fmt.Sprintf("/w/d%d", i)
			f.must("mkdir", fs.Mkdir(ctx, f.lk(dir), 0o755))
			for j := 0; j < 5; j++ {
				f.must("mknod", fs.Mknod(ctx, f.lk(fmt.Sprintf("%s/f%d", dir, j)), 0o644, 0))
			}
			fd, err := fs.Open(ctx, *f.lk(dir), fs.OpenOptions{Flags: unix.O_DIRECTORY})
			f.must("open", err)
			defer fd.DecRef()
			it := fd.Impl().(fs.DirIterator)
			for _, s := range c.steps {
				var arg, arg2 string
				var n int
				fields := strings.Fields(s.op)
				if len(fields) > 1 {
					arg = fields[1]
					fmt.Sscan(arg, &n)
				}
				if len(fields) > 2 {
					arg2 = fields[2]
				}
				switch fields[0] {
				case "read":
					var got []string
					err := it.IterDirents(ctx, fd, func(d fs.Dirent) bool {
						if len(got) == n {
							return false
						}
						got = append(got, fmt.Sprintf("%s@%d", d.Name, d.NextOff))
						return true
					})
					f.must("iter", err)
					if g := strings.Join(got, ","); g != s.want {
						t.Fatalf("%s: got %s, want %s", s.op, g, s.want)
					}
				case "seek":
					_, err := fd.Seek(ctx, int64(n), unix.SEEK_SET)
					f.must("seek", err)
				case "unlink":
					f.must("unlink", fs.Unlink(ctx, f.lk(dir+"/"+arg)))
				case "create":
					f.must("mknod", fs.Mknod(ctx, f.lk(dir+"/"+arg), 0o644, 0))
				case "rename":
					f.must("rename", fs.Rename(ctx, f.lk(dir+"/"+arg), f.lk(dir+"/"+arg2), 0))
				default:
					t.Fatalf("bad step %q", s.op)
				}
			}
		})
	}
}
