package gofer

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
)

// TestDirReadSkipsRemoved: a gofer directory file does not list a name
// removed through the sandbox after it was opened, before the read that
// would return it; offsets keep naming the same entries.
func TestDirReadSkipsRemoved(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 6; i++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root := serveRW(t, dir)
	ctx := fstest.NewContext()
	fd, err := fs.Open(ctx, fs.Lookup{Root: root, Start: root, Path: "/"}, fs.OpenOptions{Flags: unix.O_RDONLY | unix.O_DIRECTORY})
	if err != nil {
		t.Fatal(err)
	}
	defer fd.DecRef()
	it := fd.Impl().(fs.DirIterator)
	type ent struct {
		name string
		off  int64
	}
	read := func(max int) []ent {
		var out []ent
		if err := it.IterDirents(ctx, fd, func(d fs.Dirent) bool {
			if len(out) == max {
				return false
			}
			out = append(out, ent{d.Name, d.NextOff})
			return true
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	first := read(3) // ".", "..", and one file
	if len(first) != 3 {
		t.Fatalf("first read %v", first)
	}
	kept := first[2].name
	var removed []string
	for i := 0; i < 6 && len(removed) < 3; i++ {
		if n := fmt.Sprintf("f%d", i); n != kept {
			if err := fs.Unlink(ctx, &fs.Lookup{Root: root, Start: root, Path: "/" + n}); err != nil {
				t.Fatal(err)
			}
			removed = append(removed, n)
		}
	}
	rest := read(100)
	if len(rest) != 2 {
		t.Fatalf("after removing %v: %v, want the 2 files left", removed, rest)
	}
	for _, e := range rest {
		if slices.Contains(removed, e.name) || e.name == kept {
			t.Errorf("listed %s", e.name)
		}
	}
	// Seeking back to after the first file lists the same two.
	if _, err := fd.Seek(ctx, first[2].off, unix.SEEK_SET); err != nil {
		t.Fatal(err)
	}
	if again := read(100); !slices.Equal(again, rest) {
		t.Errorf("after seekdir: %v, want %v", again, rest)
	}
}

// TestSharedDirReadSkipsHostRemoved: in a directory host processes share
// (a bind mount's), a name the host removed after the directory was
// opened is not listed by the reads that follow.
func TestSharedDirReadSkipsHostRemoved(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 6; i++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root := serveRW(t, dir)
	root.Dentry.Filesystem().Impl().(*filesystem).shared = true
	ctx := fstest.NewContext()
	fd, err := fs.Open(ctx, fs.Lookup{Root: root, Start: root, Path: "/"}, fs.OpenOptions{Flags: unix.O_RDONLY | unix.O_DIRECTORY})
	if err != nil {
		t.Fatal(err)
	}
	defer fd.DecRef()
	it := fd.Impl().(fs.DirIterator)
	read := func(max int) []string {
		var out []string
		if err := it.IterDirents(ctx, fd, func(d fs.Dirent) bool {
			if len(out) == max {
				return false
			}
			out = append(out, d.Name)
			return true
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got := read(2); len(got) != 2 {
		t.Fatalf("first read %v", got)
	}
	// The reader notices host changes by the directory's times, which
	// kernels with coarse timestamps move only once a tick.
	time.Sleep(50 * time.Millisecond)
	for _, n := range []string{"f1", "f4"} {
		if err := os.Remove(filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	got := read(100)
	slices.Sort(got)
	if want := []string{"f0", "f2", "f3", "f5"}; !slices.Equal(got, want) {
		t.Errorf("after host removals: %v, want %v", got, want)
	}
}
