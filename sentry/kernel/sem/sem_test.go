package sem

import (
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/kernel/ipc"
	"github.com/moat-sandbox/moat/sentry/syserror"
)

// blocker blocks like a task: on the channel, until the deadline, or
// until interrupt is closed.
type blocker struct{ interrupt chan struct{} }

func (b blocker) BlockOn(ch <-chan struct{}, deadline time.Time, hasDeadline bool) error {
	var timeout <-chan time.Time
	if hasDeadline {
		tm := time.NewTimer(time.Until(deadline))
		defer tm.Stop()
		timeout = tm.C
	}
	select {
	case <-ch:
		return nil
	case <-timeout:
		return unix.ETIMEDOUT
	case <-b.interrupt:
		return syserror.ErrInterrupted
	}
}

func user(uid uint32) *auth.Credentials {
	return &auth.Credentials{EffectiveUID: auth.KUID(uid), EffectiveGID: auth.KGID(uid)}
}

func TestDoErrors(t *testing.T) {
	r := NewRegistry()
	root := auth.NewRootCredentials()
	id, err := r.Get(root, unix.IPC_PRIVATE, 2, unix.IPC_CREAT|0o600)
	if err != nil {
		t.Fatal(err)
	}
	b := blocker{}
	tests := []struct {
		name string
		c    *auth.Credentials
		id   int32
		ops  []Op
		want error
	}{
		{"no such id", root, id + 1, []Op{{0, 1, 0}}, unix.EINVAL},
		{"later id in the slot", root, id + ipc.SeqMultiplier, []Op{{0, 1, 0}}, unix.EIDRM},
		{"num past the set", root, id, []Op{{2, 1, 0}}, unix.EFBIG},
		{"other user", user(1000), id, []Op{{0, 0, unix.IPC_NOWAIT}}, unix.EACCES},
		{"would block", root, id, []Op{{0, -1, unix.IPC_NOWAIT}}, unix.EAGAIN},
		{"past SEMVMX", root, id, []Op{{0, SEMVMX, 0}, {0, 1, 0}}, unix.ERANGE},
		{"ok", root, id, []Op{{0, 2, 0}, {1, 0, 0}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := r.Do(b, tc.c, 1, ipc.NumericPID(1), tc.id, tc.ops, time.Time{}, false); err != tc.want {
				t.Errorf("Do = %v, want %v", err, tc.want)
			}
		})
	}
	if v, _ := r.GetOne(root, id, 0, Val, nil); v != 2 {
		t.Errorf("value %d, want 2", v)
	}
}

func TestMaxSems(t *testing.T) {
	r := NewRegistry()
	root := auth.NewRootCredentials()
	for range MaxSems / SEMMSL {
		if _, err := r.Get(root, unix.IPC_PRIVATE, SEMMSL, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	left := MaxSems % SEMMSL
	if _, err := r.Get(root, unix.IPC_PRIVATE, int32(left)+1, 0o600); err != unix.ENOSPC {
		t.Errorf("semget past MaxSems = %v, want ENOSPC", err)
	}
	if _, err := r.Get(root, unix.IPC_PRIVATE, int32(left), 0o600); err != nil {
		t.Errorf("semget up to MaxSems = %v", err)
	}
}

func TestBlockingOutcomes(t *testing.T) {
	root := auth.NewRootCredentials()
	tests := []struct {
		name string
		wake func(r *Registry, id int32, b blocker)
		want error
	}{
		{"woken by an increment", func(r *Registry, id int32, _ blocker) {
			r.Do(blocker{}, root, 2, ipc.NumericPID(2), id, []Op{{0, 1, 0}}, time.Time{}, false)
		}, nil},
		{"removed", func(r *Registry, id int32, _ blocker) { r.Remove(root, id) }, unix.EIDRM},
		{"interrupted", func(_ *Registry, _ int32, b blocker) { close(b.interrupt) }, unix.EINTR},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRegistry()
			id, _ := r.Get(root, unix.IPC_PRIVATE, 1, 0o600)
			b := blocker{interrupt: make(chan struct{})}
			done := make(chan error)
			go func() { done <- r.Do(b, root, 1, ipc.NumericPID(1), id, []Op{{0, -1, 0}}, time.Time{}, false) }()
			for {
				if n, _ := r.GetOne(root, id, 0, NCnt, nil); n == 1 {
					break
				}
				time.Sleep(time.Millisecond)
			}
			tc.wake(r, id, b)
			if err := <-done; err != tc.want {
				t.Errorf("Do = %v, want %v", err, tc.want)
			}
		})
	}
	t.Run("timeout", func(t *testing.T) {
		r := NewRegistry()
		id, _ := r.Get(root, unix.IPC_PRIVATE, 1, 0o600)
		err := r.Do(blocker{}, root, 1, ipc.NumericPID(1), id, []Op{{0, -1, 0}}, time.Now().Add(5*time.Millisecond), true)
		if err != unix.EAGAIN {
			t.Errorf("Do = %v, want EAGAIN", err)
		}
	})
}

func TestUndoAtExit(t *testing.T) {
	r := NewRegistry()
	root := auth.NewRootCredentials()
	id, _ := r.Get(root, unix.IPC_PRIVATE, 2, 0o600)
	if err := r.SetVal(root, nil, id, 0, 5); err != nil {
		t.Fatal(err)
	}
	owner := new(int)
	if err := r.Do(blocker{}, root, owner, ipc.NumericPID(7), id, []Op{{0, -3, semUndo}, {1, 2, semUndo}}, time.Time{}, false); err != nil {
		t.Fatal(err)
	}
	// Another process takes semaphore 1 to 0: the undo clamps at 0.
	if err := r.Do(blocker{}, root, 2, nil, id, []Op{{1, -2, 0}}, time.Time{}, false); err != nil {
		t.Fatal(err)
	}
	ProcessExited(owner, ipc.NumericPID(7))
	vals, _ := r.GetAll(root, id)
	if vals[0] != 5 || vals[1] != 0 {
		t.Errorf("values after exit %v, want [5 0]", vals)
	}
	if pid, _ := r.GetOne(root, id, 0, PID, nil); pid != 7 {
		t.Errorf("GETPID %d, want 7", pid)
	}
}

func TestConcurrentOps(t *testing.T) {
	r := NewRegistry()
	root := auth.NewRootCredentials()
	id, _ := r.Get(root, unix.IPC_PRIVATE, 1, 0o600)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for range 100 {
				r.Do(blocker{}, root, i, nil, id, []Op{{0, -1, 0}}, time.Time{}, false)
			}
		}()
		go func() {
			defer wg.Done()
			for range 100 {
				r.Do(blocker{}, root, i, nil, id, []Op{{0, 1, 0}}, time.Time{}, false)
			}
		}()
	}
	wg.Wait()
	if v, _ := r.GetOne(root, id, 0, Val, nil); v != 0 {
		t.Errorf("value %d, want 0", v)
	}
}
