package msg

import (
	"math"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/kernel/ipc"
	"github.com/moat-sandbox/moat/sentry/syserror"
)

type blocker struct{ interrupt chan struct{} }

func (b blocker) BlockOn(ch <-chan struct{}, _ time.Time, _ bool) error {
	select {
	case <-ch:
		return nil
	case <-b.interrupt:
		return syserror.ErrInterrupted
	}
}

func TestReceiveSelection(t *testing.T) {
	r := NewRegistry()
	root := auth.NewRootCredentials()
	tests := []struct {
		name     string
		typ      int64
		flags    int32
		size     uint64
		want     string
		wantType int64
		err      error
	}{
		{"lowest type up to 2", -2, 0, 100, "a1", 1, nil},
		{"first not of type 1", 1, FlagExcept, 100, "c", 3, nil},
		{"missing type", 5, unix.IPC_NOWAIT, 100, "", 0, unix.ENOMSG},
		{"too big", 0, 0, 1, "", 0, unix.E2BIG},
		{"truncated", 0, FlagNoError, 1, "b", 2, nil},
		{"copy by index", 0, FlagCopy | unix.IPC_NOWAIT, 100, "a2", 1, nil},
		{"first", 0, 0, 100, "a2", 1, nil},
		{"empty", 0, unix.IPC_NOWAIT, 100, "", 0, unix.ENOMSG},
	}
	id, _ := r.Get(root, unix.IPC_PRIVATE, 0o600)
	for _, m := range []Message{{3, []byte("c")}, {1, []byte("a1")}, {2, []byte("bb")}, {1, []byte("a2")}} {
		if err := r.Send(blocker{}, root, ipc.NumericPID(1), id, m, 0); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := r.Receive(blocker{}, root, ipc.NumericPID(1), id, tc.size, tc.typ, tc.flags)
			if err != tc.err || string(m.Text) != tc.want || m.Type != tc.wantType {
				t.Errorf("Receive = %d %q %v, want %d %q %v", m.Type, m.Text, err, tc.wantType, tc.want, tc.err)
			}
		})
	}
}

func TestReceiveLongMin(t *testing.T) {
	r := NewRegistry()
	root := auth.NewRootCredentials()
	id, _ := r.Get(root, unix.IPC_PRIVATE, 0o600)
	for _, typ := range []int64{math.MaxInt64, 5} {
		if err := r.Send(blocker{}, root, nil, id, Message{typ, nil}, 0); err != nil {
			t.Fatal(err)
		}
	}
	m, err := r.Receive(blocker{}, root, nil, id, 0, math.MinInt64, unix.IPC_NOWAIT)
	if err != nil || m.Type != 5 {
		t.Errorf("Receive(LONG_MIN) = type %d, %v; want 5", m.Type, err)
	}
}

func TestBlocking(t *testing.T) {
	root := auth.NewRootCredentials()
	r := NewRegistry()
	id, _ := r.Get(root, unix.IPC_PRIVATE, 0o600)
	if err := r.Set(root, id, 0, 0, 0o600, 4); err != nil {
		t.Fatal(err)
	}
	if err := r.Send(blocker{}, root, nil, id, Message{1, []byte("1234")}, 0); err != nil {
		t.Fatal(err)
	}
	if err := r.Send(blocker{}, root, nil, id, Message{1, []byte("5")}, unix.IPC_NOWAIT); err != unix.EAGAIN {
		t.Errorf("send to a full queue = %v, want EAGAIN", err)
	}
	done := make(chan error)
	go func() { done <- r.Send(blocker{}, root, nil, id, Message{2, []byte("5")}, 0) }()
	if _, err := r.Receive(blocker{}, root, nil, id, 10, 1, 0); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("blocked send = %v", err)
	}
	b := blocker{interrupt: make(chan struct{})}
	go func() { done <- func() error { _, err := r.Receive(b, root, nil, id, 10, 7, 0); return err }() }()
	close(b.interrupt)
	if err := <-done; err != syserror.ERESTARTNOHAND {
		t.Errorf("interrupted receive = %v, want ERESTARTNOHAND", err)
	}
	go func() { done <- func() error { _, err := r.Receive(blocker{}, root, nil, id, 10, 7, 0); return err }() }()
	time.Sleep(10 * time.Millisecond)
	if err := r.Remove(root, id); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != unix.EIDRM {
		t.Errorf("receive from a removed queue = %v, want EIDRM", err)
	}
	if q, _, msgs, bytes := r.Info(); q != 0 || msgs != 0 || bytes != 0 {
		t.Errorf("Info after removal = %d queues %d msgs %d bytes", q, msgs, bytes)
	}
}
