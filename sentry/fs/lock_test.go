package fs_test

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
	"github.com/moat-sandbox/moat/sentry/syserror"
)

func TestPOSIXLocks(t *testing.T) {
	_, root := testTree(t)
	ctx := fstest.NewContext()
	open := func() *fs.FileDescription {
		f, err := fs.Open(ctx, fs.Lookup{Root: root, Start: root, Path: "/etc/passwd"}, fs.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	a, b := open(), open()
	defer a.DecRef()
	defer b.DecRef()
	procA, procB := new(int), new(int)
	if err := fs.SetPOSIXLock(ctx, a, procA, 10, fs.WriteLock, 0, 100, false); err != nil {
		t.Fatal(err)
	}
	// Another process conflicts; the same one does not.
	if err := fs.SetPOSIXLock(ctx, b, procB, 20, fs.ReadLock, 50, 60, false); err != syserror.ErrWouldBlock {
		t.Fatalf("conflicting lock = %v", err)
	}
	if err := fs.SetPOSIXLock(ctx, b, procA, 10, fs.ReadLock, 50, 60, false); err != nil {
		t.Fatalf("same owner = %v", err)
	}
	// procA now holds W[0,50) R[50,60) W[60,100): a reader may take [50,60).
	if err := fs.SetPOSIXLock(ctx, b, procB, 20, fs.ReadLock, 50, 60, false); err != nil {
		t.Fatalf("read over the split range = %v", err)
	}
	l, found, _ := fs.TestPOSIXLock(ctx, b, procB, fs.WriteLock, 0, fs.LockEOF)
	if !found || l.PID != 10 || l.Type != fs.WriteLock || l.Start != 0 || l.End != 50 {
		t.Fatalf("F_GETLK found %v %+v", found, l)
	}
	// A blocked writer wakes when the holder closes the file.
	done := make(chan error)
	go func() { done <- fs.SetPOSIXLock(ctx, b, procB, 20, fs.WriteLock, 0, 10, true) }()
	time.Sleep(20 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("writer did not wait: %v", err)
	default:
	}
	fs.ReleasePOSIXLocks(ctx, a, procA)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestFlockAndOFD(t *testing.T) {
	_, root := testTree(t)
	ctx := fstest.NewContext()
	open := func() *fs.FileDescription {
		f, err := fs.Open(ctx, fs.Lookup{Root: root, Start: root, Path: "/etc/passwd"}, fs.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	a, b := open(), open()
	defer b.DecRef()
	if err := fs.Flock(ctx, a, fs.WriteLock, false); err != nil {
		t.Fatal(err)
	}
	if err := fs.Flock(ctx, b, fs.ReadLock, false); err != syserror.ErrWouldBlock {
		t.Fatalf("flock conflict = %v", err)
	}
	// flock and record locks do not interact.
	if err := fs.SetPOSIXLock(ctx, b, b, -1, fs.WriteLock, 0, fs.LockEOF, false); err != nil {
		t.Fatalf("OFD lock beside a flock = %v", err)
	}
	if err := fs.SetPOSIXLock(ctx, a, a, -1, fs.ReadLock, 0, 1, false); err != syserror.ErrWouldBlock {
		t.Fatalf("OFD conflict = %v", err)
	}
	// The last close of a description drops its locks.
	a.DecRef()
	if err := fs.Flock(ctx, b, fs.WriteLock, false); err != nil {
		t.Fatalf("flock after the holder closed = %v", err)
	}
}

func TestPOSIXLockMergeAndDeadlock(t *testing.T) {
	_, root := testTree(t)
	ctx := fstest.NewContext()
	open := func() *fs.FileDescription {
		f, err := fs.Open(ctx, fs.Lookup{Root: root, Start: root, Path: "/etc/passwd"}, fs.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	a, b := open(), open()
	defer a.DecRef()
	defer b.DecRef()
	procA, procB := new(int), new(int)
	set := func(f *fs.FileDescription, owner *int, pid int32, typ int16, start, end uint64) {
		t.Helper()
		if err := fs.SetPOSIXLock(ctx, f, owner, pid, typ, start, end, false); err != nil {
			t.Fatalf("lock [%d,%d): %v", start, end, err)
		}
	}
	tests := []struct {
		name       string
		locks      [][2]uint64
		start, end uint64
	}{
		{"adjacent", [][2]uint64{{0, 10}, {10, 20}}, 0, 20},
		{"overlapping", [][2]uint64{{100, 110}, {105, 120}}, 100, 120},
		{"bridged", [][2]uint64{{200, 210}, {220, 230}, {210, 220}}, 200, 230},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, r := range tc.locks {
				set(a, procA, 10, fs.WriteLock, r[0], r[1])
			}
			l, found, _ := fs.TestPOSIXLock(ctx, b, procB, fs.ReadLock, tc.start, tc.start+1)
			if !found || l.Start != tc.start || l.End != tc.end {
				t.Fatalf("F_GETLK found %v %+v, want [%d,%d)", found, l, tc.start, tc.end)
			}
		})
	}
	fs.ReleasePOSIXLocks(ctx, a, procA)

	// A holds 0, B holds 1; each then waits for the other's byte. Whichever
	// asks second closes the cycle and gets EDEADLK; the other gets its
	// lock once the loser lets go.
	set(a, procA, 10, fs.WriteLock, 0, 1)
	set(b, procB, 20, fs.WriteLock, 1, 2)
	type result struct {
		who string
		err error
	}
	done := make(chan result, 2)
	go func() { done <- result{"B", fs.SetPOSIXLock(ctx, b, procB, 20, fs.WriteLock, 0, 1, true)} }()
	go func() { done <- result{"A", fs.SetPOSIXLock(ctx, a, procA, 10, fs.WriteLock, 1, 2, true)} }()
	first := <-done
	if first.err != unix.EDEADLK {
		t.Fatalf("%s returned %v first, want EDEADLK", first.who, first.err)
	}
	if first.who == "A" {
		fs.ReleasePOSIXLocks(ctx, a, procA)
	} else {
		fs.ReleasePOSIXLocks(ctx, b, procB)
	}
	if second := <-done; second.err != nil {
		t.Fatalf("%s after the other's release: %v", second.who, second.err)
	}
	fs.ReleasePOSIXLocks(ctx, a, procA)
	fs.ReleasePOSIXLocks(ctx, b, procB)
}
