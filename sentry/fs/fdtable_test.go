package fs_test

import (
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
)

type countFile struct {
	fs.FileDefaults
	fs.NotPollable
	released *int
	mu       *sync.Mutex
}

func (c *countFile) Release() {
	c.mu.Lock()
	*c.released++
	c.mu.Unlock()
}

func newCountFile() (*fs.FileDescription, func() int) {
	var n int
	var mu sync.Mutex
	fd := fs.NewFileDescription(&countFile{released: &n, mu: &mu}, fs.VirtualDentry{}, 0, fs.FDOptions{})
	return fd, func() int { mu.Lock(); defer mu.Unlock(); return n }
}

func TestFDTable(t *testing.T) {
	tbl := fs.NewFDTable()
	f, released := newCountFile()
	for want := int32(0); want < 3; want++ {
		fd, err := tbl.NewFD(0, f, fs.FDFlags{}, 1024)
		if err != nil || fd != want {
			t.Fatalf("NewFD = %d, %v; want %d", fd, err, want)
		}
	}
	if err := tbl.Remove(1); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Remove(1); err != unix.EBADF {
		t.Fatalf("double close = %v", err)
	}
	if fd, _ := tbl.NewFD(0, f, fs.FDFlags{CloseOnExec: true}, 1024); fd != 1 {
		t.Fatalf("lowest free = %d, want 1", fd)
	}
	if fd, _ := tbl.NewFD(10, f, fs.FDFlags{}, 1024); fd != 10 {
		t.Fatalf("NewFD(min 10) = %d", fd)
	}
	if _, err := tbl.NewFD(0, f, fs.FDFlags{}, 4); err != nil {
		t.Fatalf("fd 3 below limit 4: %v", err)
	}
	if _, err := tbl.NewFD(0, f, fs.FDFlags{}, 4); err != unix.EMFILE {
		t.Fatalf("over limit = %v, want EMFILE", err)
	}
	if err := tbl.NewFDAt(4, f, fs.FDFlags{}, 4); err != unix.EBADF {
		t.Fatalf("NewFDAt over limit = %v, want EBADF", err)
	}
	if err := tbl.NewFDAt(2, f, fs.FDFlags{CloseOnExec: true}, 1024); err != nil {
		t.Fatal(err)
	}
	if got := tbl.FDs(); len(got) != 5 {
		t.Fatalf("FDs = %v", got)
	}
	child := tbl.Fork()
	tbl.CloseOnExec()
	if got := tbl.FDs(); len(got) != 3 || got[0] != 0 || got[1] != 3 || got[2] != 10 {
		t.Fatalf("after CloseOnExec FDs = %v", got)
	}
	if g, fl, ok := child.Get(2); !ok || !fl.CloseOnExec {
		t.Fatal("fork lost fd 2 or its flag")
	} else {
		g.DecRef()
	}
	tbl.RemoveRange(3, ^uint32(0), true)
	if g, fl, _ := tbl.Get(10); !fl.CloseOnExec {
		t.Fatal("CLOSE_RANGE_CLOEXEC did not mark fd 10")
	} else {
		g.DecRef()
	}
	tbl.DecRef()
	if released() != 0 {
		t.Fatal("released while the fork holds it")
	}
	child.DecRef()
	f.DecRef()
	if released() != 1 {
		t.Fatalf("released %d times, want 1", released())
	}
}

func TestFDTableConcurrent(t *testing.T) {
	tbl := fs.NewFDTable()
	f, released := newCountFile()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				fd, err := tbl.NewFD(0, f, fs.FDFlags{}, 1<<20)
				if err != nil {
					t.Error(err)
					return
				}
				if got, _, ok := tbl.Get(fd); ok {
					got.DecRef()
				}
				if err := tbl.Remove(fd); err != nil {
					t.Errorf("Remove(%d): %v", fd, err)
				}
			}
		}()
	}
	wg.Wait()
	if tbl.Len() != 0 {
		t.Fatalf("Len = %d", tbl.Len())
	}
	f.DecRef()
	if released() != 1 {
		t.Fatal("not released")
	}
}
