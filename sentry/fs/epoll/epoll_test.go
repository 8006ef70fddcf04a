package epoll

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
	"github.com/moat-sandbox/moat/sentry/fs/pipe"
	"github.com/moat-sandbox/moat/sentry/fs/synth"
	"github.com/moat-sandbox/moat/sentry/syserror"
)

func now() time.Time { return time.Now() }

func TestLevelEdgeOneshot(t *testing.T) {
	ctx := fstest.NewContext()
	cases := []struct {
		name  string
		flags uint32
		// how many of three consecutive waits see the event
		want []int
	}{
		{"level", 0, []int{1, 1, 1}},
		{"edge", unix.EPOLLET, []int{1, 0, 0}},
		{"oneshot", unix.EPOLLONESHOT, []int{1, 0, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, w := pipe.NewPair(ctx, unix.O_NONBLOCK)
			defer r.DecRef()
			defer w.DecRef()
			epf := New()
			defer epf.DecRef()
			ep := FromFile(epf)
			if err := ep.Add(ctx, 3, r, Event{Events: unix.EPOLLIN | c.flags, Data: 42}); err != nil {
				t.Fatal(err)
			}
			if evs, _ := ep.Wait(ctx, 10, now(), true); len(evs) != 0 {
				t.Fatalf("empty pipe reported %v", evs)
			}
			w.Write(ctx, []byte("x"))
			for i, want := range c.want {
				evs, err := ep.Wait(ctx, 10, now(), true)
				if err != nil || len(evs) != want {
					t.Fatalf("wait %d: %v, %v; want %d events", i, evs, err, want)
				}
				if want == 1 && (evs[0].Events != unix.EPOLLIN || evs[0].Data != 42) {
					t.Fatalf("event %+v", evs[0])
				}
			}
			// A new write re-arms edge-triggered but not a fired oneshot.
			w.Write(ctx, []byte("y"))
			evs, _ := ep.Wait(ctx, 10, now(), true)
			if want := map[string]int{"level": 1, "edge": 1, "oneshot": 0}[c.name]; len(evs) != want {
				t.Fatalf("after second write: %v, want %d", evs, want)
			}
			if c.flags == unix.EPOLLONESHOT {
				if err := ep.Modify(ctx, 3, r, Event{Events: unix.EPOLLIN | unix.EPOLLONESHOT, Data: 7}); err != nil {
					t.Fatal(err)
				}
				if evs, _ := ep.Wait(ctx, 10, now(), true); len(evs) != 1 || evs[0].Data != 7 {
					t.Fatalf("re-armed oneshot: %v", evs)
				}
			}
		})
	}
}

func TestCtlErrors(t *testing.T) {
	ctx := fstest.NewContext()
	r, w := pipe.NewPair(ctx, 0)
	defer r.DecRef()
	defer w.DecRef()
	epf := New()
	defer epf.DecRef()
	ep := FromFile(epf)
	root := synth.NewDir(0o755, map[string]fs.Node{"f": synth.NewStaticFile(0o644, nil)})
	ns := fs.NewMountNamespace(synth.NewFilesystem("x", 1, root, true), fs.MountFlags{})
	reg, err := fs.Open(ctx, fs.Lookup{Root: ns.Root(), Start: ns.Root(), Path: "f"}, fs.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.DecRef()
	inner := New()
	defer inner.DecRef()

	check := func(name string, got, want error) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	check("add regular file", ep.Add(ctx, 5, reg, Event{Events: unix.EPOLLIN}), unix.EPERM)
	check("mod missing", ep.Modify(ctx, 3, r, Event{Events: unix.EPOLLIN}), unix.ENOENT)
	check("del missing", ep.Delete(3, r), unix.ENOENT)
	check("add", ep.Add(ctx, 3, r, Event{Events: unix.EPOLLIN}), nil)
	check("add again", ep.Add(ctx, 3, r, Event{Events: unix.EPOLLIN}), unix.EEXIST)
	check("add same file other fd", ep.Add(ctx, 4, r, Event{Events: unix.EPOLLIN}), nil)
	check("exclusive with oneshot", ep.Add(ctx, 6, w, Event{Events: unix.EPOLLOUT | unix.EPOLLEXCLUSIVE | unix.EPOLLONESHOT}), unix.EINVAL)
	check("exclusive", ep.Add(ctx, 6, w, Event{Events: unix.EPOLLOUT | unix.EPOLLEXCLUSIVE}), nil)
	check("mod exclusive item", ep.Modify(ctx, 6, w, Event{Events: unix.EPOLLOUT}), unix.EINVAL)
	check("mod with exclusive", ep.Modify(ctx, 3, r, Event{Events: unix.EPOLLIN | unix.EPOLLEXCLUSIVE}), unix.EINVAL)
	check("del", ep.Delete(4, r), nil)
	check("nest", FromFile(inner).Add(ctx, 9, epf, Event{Events: unix.EPOLLIN}), nil)
	check("loop", ep.Add(ctx, 10, inner, Event{Events: unix.EPOLLIN}), unix.ELOOP)
	check("exclusive on epoll", New().Impl().(*EventPoll).Add(ctx, 1, inner, Event{Events: unix.EPOLLIN | unix.EPOLLEXCLUSIVE}), unix.EINVAL)
}

func TestNestedAndCloseRemoves(t *testing.T) {
	ctx := fstest.NewContext()
	r, w := pipe.NewPair(ctx, 0)
	defer w.DecRef()
	innerF, outerF := New(), New()
	defer innerF.DecRef()
	defer outerF.DecRef()
	inner, outer := FromFile(innerF), FromFile(outerF)
	if err := inner.Add(ctx, 3, r, Event{Events: unix.EPOLLIN, Data: 1}); err != nil {
		t.Fatal(err)
	}
	if err := outer.Add(ctx, 4, innerF, Event{Events: unix.EPOLLIN, Data: 2}); err != nil {
		t.Fatal(err)
	}
	w.Write(ctx, []byte("x"))
	evs, _ := outer.Wait(ctx, 10, now(), true)
	if len(evs) != 1 || evs[0].Data != 2 {
		t.Fatalf("outer saw %v", evs)
	}
	// Closing the last reference to r drops it from inner's list.
	r.DecRef()
	if n := len(inner.items); n != 0 {
		t.Fatalf("inner still has %d items", n)
	}
	if evs, _ := inner.Wait(ctx, 10, now(), true); len(evs) != 0 {
		t.Fatalf("closed file reported %v", evs)
	}
}

func TestWaitBlocks(t *testing.T) {
	ctx := fstest.NewContext()
	r, w := pipe.NewPair(ctx, 0)
	defer r.DecRef()
	defer func() {
		if w != nil {
			w.DecRef()
		}
	}()
	epf := New()
	defer epf.DecRef()
	ep := FromFile(epf)
	ep.Add(ctx, 3, r, Event{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Data: 1})
	go func() {
		time.Sleep(20 * time.Millisecond)
		w.Write(ctx, []byte("x"))
	}()
	evs, err := ep.Wait(ctx, 1, time.Time{}, false)
	if err != nil || len(evs) != 1 {
		t.Fatalf("Wait = %v, %v", evs, err)
	}
	buf := make([]byte, 1)
	r.Read(ctx, buf)
	start := time.Now()
	evs, err = ep.Wait(ctx, 1, start.Add(30*time.Millisecond), true)
	if err != nil || len(evs) != 0 || time.Since(start) < 30*time.Millisecond {
		t.Fatalf("timed Wait = %v, %v", evs, err)
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		ctx.Interrupt()
	}()
	if _, err := ep.Wait(ctx, 1, time.Time{}, false); err != syserror.ErrInterrupted {
		t.Fatalf("interrupted Wait = %v", err)
	}
	// Max events respected, the rest stay ready.
	r2, w2 := pipe.NewPair(ctx, 0)
	defer r2.DecRef()
	defer w2.DecRef()
	ep.Add(ctx, 5, w2, Event{Events: unix.EPOLLOUT, Data: 5})
	w.Write(ctx, []byte("x"))
	if evs, _ := ep.Wait(ctx, 1, now(), true); len(evs) != 1 {
		t.Fatalf("max 1: %v", evs)
	}
	if evs, _ := ep.Wait(ctx, 10, now(), true); len(evs) != 2 {
		t.Fatalf("then: %v", evs)
	}
	// Hang-up of the writer reaches the reader with EPOLLHUP.
	w.DecRef()
	w = nil
	evs, _ = ep.Wait(ctx, 10, now(), true)
	found := false
	for _, e := range evs {
		if e.Data == 1 && e.Events&unix.EPOLLHUP != 0 {
			found = true
		}
	}
	if !found {
		t.Fatalf("no HUP in %v", evs)
	}
}

func TestLevelTriggeredRotation(t *testing.T) {
	ctx := fstest.NewContext()
	epf := New()
	defer epf.DecRef()
	ep := FromFile(epf)
	const n = 5
	for i := range n {
		r, w := pipe.NewPair(ctx, unix.O_NONBLOCK)
		defer r.DecRef()
		defer w.DecRef()
		w.Write(ctx, []byte("x"))
		if err := ep.Add(ctx, int32(3+i), r, Event{Events: unix.EPOLLIN, Data: uint64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	// Waits of two take turns: every item is reported before any twice.
	var got []uint64
	for range 5 {
		evs, err := ep.Wait(ctx, 2, now(), true)
		if err != nil || len(evs) != 2 {
			t.Fatalf("wait: %v, %v", evs, err)
		}
		for _, e := range evs {
			got = append(got, e.Data)
		}
	}
	for i, d := range got {
		if d != uint64(i%n) {
			t.Fatalf("reported %v, want each of %d in turn", got, n)
		}
	}
}
