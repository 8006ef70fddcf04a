package mqueue

import (
	"errors"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
	"github.com/moat-sandbox/moat/sentry/syserror"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

// open is mq_open of name in ns.
func open(t *testing.T, ctx fs.Context, ns *Namespace, name string, flags uint32, attr *Attr) (*fs.FileDescription, error) {
	t.Helper()
	root := ns.Root()
	return fs.Open(WithCreateAttr(ctx, CreateAttr{Attr: attr, Limit: 819200}),
		fs.Lookup{Root: root, Start: root, Path: name}, fs.OpenOptions{Flags: flags, Mode: 0o600})
}

func mustOpen(t *testing.T, ctx fs.Context, ns *Namespace, name string, flags uint32, attr *Attr) *fs.FileDescription {
	t.Helper()
	f, err := open(t, ctx, ns, name, flags, attr)
	if err != nil {
		t.Fatalf("open %q: %v", name, err)
	}
	return f
}

func TestCreateAttr(t *testing.T) {
	root := fstest.NewContext()
	user := fstest.NewUserContext(1000, 1000)
	cases := []struct {
		name string
		ctx  fs.Context
		attr *Attr
		want error
	}{
		{"defaults", root, nil, nil},
		{"small", user, &Attr{MaxMsg: 1, MsgSize: 1}, nil},
		{"at limits", user, &Attr{MaxMsg: MsgMax, MsgSize: MsgsizeMax}, nil},
		{"zero maxmsg", user, &Attr{MaxMsg: 0, MsgSize: 1}, unix.EINVAL},
		{"negative msgsize", user, &Attr{MaxMsg: 1, MsgSize: -1}, unix.EINVAL},
		{"user past msg_max", user, &Attr{MaxMsg: MsgMax + 1, MsgSize: 1}, unix.EINVAL},
		{"user past msgsize_max", user, &Attr{MaxMsg: 1, MsgSize: MsgsizeMax + 1}, unix.EINVAL},
		{"root past msg_max", root, &Attr{MaxMsg: MsgMax + 1, MsgSize: 1}, nil},
		{"root past hard max", root, &Attr{MaxMsg: HardMsgMax + 1, MsgSize: 1}, unix.EINVAL},
		{"rlimit", root, &Attr{MaxMsg: 100, MsgSize: 10000}, unix.EMFILE},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ns := NewNamespace()
			f, err := open(t, c.ctx, ns, "q", unix.O_RDWR|unix.O_CREAT, c.attr)
			if !errors.Is(err, c.want) && err != c.want {
				t.Fatalf("open: %v, want %v", err, c.want)
			}
			if err != nil {
				if ns.Queues() != 0 {
					t.Errorf("queues after a refused create: %d", ns.Queues())
				}
				return
			}
			a := f.Impl().(*File).Queue().Attr()
			want := Attr{MaxMsg: MsgDefault, MsgSize: MsgsizeDefault}
			if c.attr != nil {
				want = Attr{MaxMsg: c.attr.MaxMsg, MsgSize: c.attr.MsgSize}
			}
			if a != want {
				t.Errorf("attr %+v, want %+v", a, want)
			}
			f.DecRef()
		})
	}
}

func TestPriorityOrder(t *testing.T) {
	ctx := fstest.NewContext()
	ns := NewNamespace()
	f := mustOpen(t, ctx, ns, "q", unix.O_RDWR|unix.O_CREAT, &Attr{MaxMsg: 8, MsgSize: 4})
	defer f.DecRef()
	for _, m := range []struct {
		data string
		prio uint32
	}{{"a", 1}, {"b", 5}, {"c", 1}, {"d", 3}} {
		if err := Send(ctx, f, []byte(m.data), m.prio, Deadline{}, Sender{}); err != nil {
			t.Fatalf("send %q: %v", m.data, err)
		}
	}
	if got := f.Impl().(*File).Queue().Status(); got != "QSIZE:4          NOTIFY:0     SIGNO:0     NOTIFY_PID:0     \n" {
		t.Errorf("status %q", got)
	}
	for i, want := range []struct {
		data string
		prio uint32
	}{{"b", 5}, {"d", 3}, {"a", 1}, {"c", 1}} {
		buf := make([]byte, 4)
		n, prio, err := Receive(ctx, f, buf, Deadline{})
		if err != nil || string(buf[:n]) != want.data || prio != want.prio {
			t.Errorf("receive %d: %q prio %d %v, want %q prio %d", i, buf[:n], prio, err, want.data, want.prio)
		}
	}
}

func TestErrors(t *testing.T) {
	ctx := fstest.NewContext()
	ns := NewNamespace()
	w := mustOpen(t, ctx, ns, "q", unix.O_WRONLY|unix.O_CREAT|unix.O_NONBLOCK, &Attr{MaxMsg: 1, MsgSize: 4})
	defer w.DecRef()
	r := mustOpen(t, ctx, ns, "q", unix.O_RDONLY|unix.O_NONBLOCK, nil)
	defer r.DecRef()
	buf := make([]byte, 8)
	past := Deadline{At: time.Unix(1, 0), Set: true}
	check := func(name string, got, want error) {
		t.Helper()
		if got != want {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
	_, _, err := Receive(ctx, r, buf, Deadline{})
	check("receive empty", err, syserror.ErrWouldBlock)
	_, _, err = Receive(ctx, w, buf, Deadline{})
	check("receive write-only", err, unix.EBADF)
	check("send read-only", Send(ctx, r, []byte("x"), 0, Deadline{}, Sender{}), unix.EBADF)
	check("send too long", Send(ctx, w, []byte("12345"), 0, Deadline{}, Sender{}), unix.EMSGSIZE)
	check("send", Send(ctx, w, []byte("1234"), 0, Deadline{}, Sender{}), nil)
	check("send full", Send(ctx, w, []byte("x"), 0, Deadline{}, Sender{}), syserror.ErrWouldBlock)
	_, _, err = Receive(ctx, r, buf[:3], Deadline{})
	check("receive short buffer", err, unix.EMSGSIZE)
	// Blocking: a full queue times out at the deadline.
	if _, err := GetSetAttr(w, &Attr{}); err != nil {
		t.Fatal(err)
	}
	check("send full past deadline", Send(ctx, w, []byte("x"), 0, past, Sender{}), unix.ETIMEDOUT)
	_, err = GetSetAttr(w, &Attr{Flags: unix.O_APPEND})
	check("setattr bad flag", err, unix.EINVAL)
	old, err := GetSetAttr(r, nil)
	if err != nil || old != (Attr{Flags: unix.O_NONBLOCK, MaxMsg: 1, MsgSize: 4, CurMsgs: 1}) {
		t.Errorf("getattr: %+v %v", old, err)
	}
}

func TestBlockedReceiver(t *testing.T) {
	ctx := fstest.NewContext()
	ns := NewNamespace()
	f := mustOpen(t, ctx, ns, "q", unix.O_RDWR|unix.O_CREAT, &Attr{MaxMsg: 2, MsgSize: 8})
	defer f.DecRef()
	fired := make(chan struct{}, 1)
	if err := SetNotify(f, &Notification{Notify: SigevSignal, Signo: 10, Owner: "me", Deliver: func(int32, uint32) { fired <- struct{}{} }}, "me"); err != nil {
		t.Fatal(err)
	}
	done := make(chan string)
	go func() {
		buf := make([]byte, 8)
		n, _, err := Receive(ctx, f, buf, Deadline{})
		if err != nil {
			done <- err.Error()
			return
		}
		done <- string(buf[:n])
	}()
	// Wait until the receiver is waiting.
	for {
		q := f.Impl().(*File).Queue()
		q.mu.Lock()
		waiting := len(q.recvWaiters)
		q.mu.Unlock()
		if waiting == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err := Send(ctx, f, []byte("hi"), 0, Deadline{}, Sender{}); err != nil {
		t.Fatal(err)
	}
	if got := <-done; got != "hi" {
		t.Errorf("receiver got %q", got)
	}
	select {
	case <-fired:
		t.Error("notification fired for a message a waiting receiver took")
	default:
	}
	// With nobody waiting, a message into the empty queue notifies once.
	if err := Send(ctx, f, []byte("a"), 0, Deadline{}, Sender{PID: 7}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-fired:
	default:
		t.Error("no notification")
	}
	if err := SetNotify(f, &Notification{Notify: SigevNone, Owner: "me"}, "me"); err != nil {
		t.Errorf("register after firing: %v", err)
	}
	if err := SetNotify(f, &Notification{Notify: SigevNone, Owner: "other"}, "other"); err != unix.EBUSY {
		t.Errorf("second registration: %v, want EBUSY", err)
	}
}

func TestInterrupt(t *testing.T) {
	ctx := fstest.NewContext()
	ns := NewNamespace()
	f := mustOpen(t, ctx, ns, "q", unix.O_RDWR|unix.O_CREAT, &Attr{MaxMsg: 1, MsgSize: 8})
	defer f.DecRef()
	go func() {
		time.Sleep(20 * time.Millisecond)
		ctx.Interrupt()
	}()
	if _, _, err := Receive(ctx, f, make([]byte, 8), Deadline{}); err != syserror.ErrInterrupted {
		t.Errorf("receive: %v, want ErrInterrupted", err)
	}
	q := f.Impl().(*File).Queue()
	if len(q.recvWaiters) != 0 {
		t.Errorf("receivers %d after an interrupted wait", len(q.recvWaiters))
	}
}

func TestReadinessAndAccounting(t *testing.T) {
	ctx := fstest.NewContext()
	ns := NewNamespace()
	f := mustOpen(t, ctx, ns, "q", unix.O_RDWR|unix.O_CREAT, &Attr{MaxMsg: 1, MsgSize: 8})
	mask := waiter.EventIn | waiter.EventOut
	if got := f.Readiness(mask); got != waiter.EventOut {
		t.Errorf("empty: %v", got)
	}
	if err := Send(ctx, f, []byte("x"), 0, Deadline{}, Sender{}); err != nil {
		t.Fatal(err)
	}
	if got := f.Readiness(mask); got != waiter.EventIn {
		t.Errorf("full: %v", got)
	}
	root := ns.Root()
	if err := fs.Unlink(ctx, &fs.Lookup{Root: root, Start: root, Path: "q"}); err != nil {
		t.Fatal(err)
	}
	if ns.Queues() != 1 {
		t.Errorf("an open unlinked queue is gone")
	}
	f.DecRef()
	if ns.Queues() != 0 {
		t.Errorf("queues %d after the last close", ns.Queues())
	}
	if len(ns.bytes) != 0 {
		t.Errorf("bytes left charged: %v", ns.bytes)
	}
}

func TestDirRefusals(t *testing.T) {
	ctx := fstest.NewContext()
	ns := NewNamespace()
	root := ns.Root()
	lk := func(p string) *fs.Lookup { return &fs.Lookup{Root: root, Start: root, Path: p} }
	if err := fs.Mkdir(ctx, lk("d"), 0o755); err != unix.EPERM {
		t.Errorf("mkdir: %v", err)
	}
	if err := fs.Symlink(ctx, lk("l"), "x"); err != unix.EPERM {
		t.Errorf("symlink: %v", err)
	}
	if err := fs.Mknod(ctx, lk("p"), unix.S_IFIFO|0o644, 0); err != unix.EPERM {
		t.Errorf("mknod: %v", err)
	}
}

// TestBlockedSenderHandoff: a receive from a full queue moves the oldest
// waiting sender's message in, so the slot is not up for grabs.
func TestBlockedSenderHandoff(t *testing.T) {
	ctx := fstest.NewContext()
	ns := NewNamespace()
	f := mustOpen(t, ctx, ns, "q", unix.O_RDWR|unix.O_CREAT, &Attr{MaxMsg: 1, MsgSize: 8})
	defer f.DecRef()
	if err := Send(ctx, f, []byte("first"), 0, Deadline{}, Sender{}); err != nil {
		t.Fatal(err)
	}
	q := f.Impl().(*File).Queue()
	sent := make(chan error, 1)
	go func() { sent <- Send(fstest.NewContext(), f, []byte("second"), 1, Deadline{}, Sender{}) }()
	for {
		q.mu.Lock()
		n := len(q.sendWaiters)
		q.mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	buf := make([]byte, 8)
	if n, _, err := Receive(ctx, f, buf, Deadline{}); err != nil || string(buf[:n]) != "first" {
		t.Fatalf("receive: %q %v", buf[:n], err)
	}
	if err := <-sent; err != nil {
		t.Fatalf("blocked send: %v", err)
	}
	if q.Attr().CurMsgs != 1 {
		t.Errorf("curmsgs %d, want the moved message", q.Attr().CurMsgs)
	}
	nb := mustOpen(t, ctx, ns, "q", unix.O_WRONLY|unix.O_NONBLOCK, nil)
	defer nb.DecRef()
	if err := Send(ctx, nb, []byte("x"), 0, Deadline{}, Sender{}); err != syserror.ErrWouldBlock {
		t.Errorf("send to the refilled queue: %v, want EAGAIN", err)
	}
}
