package unix

import (
	"bytes"
	"testing"
	"time"

	sys "golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
	"github.com/moat-sandbox/moat/sentry/fs/pipe"
	"github.com/moat-sandbox/moat/sentry/fs/synth"
	"github.com/moat-sandbox/moat/sentry/socket"
	"github.com/moat-sandbox/moat/sentry/syserror"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

// testCtx is a task for socket calls: fstest's fake task with a file
// system context (no tree: path addresses are not used here).
type testCtx struct {
	*fstest.Context
	fsc *fs.FSContext
}

func (c testCtx) FSContext() *fs.FSContext { return c.fsc }

func newCtx() testCtx {
	return testCtx{Context: fstest.NewContext(), fsc: fs.NewFSContext(fs.VirtualDentry{}, fs.VirtualDentry{}, 0o022)}
}

func sockOf(t *testing.T, f *fs.FileDescription) *Socket {
	t.Helper()
	s, ok := socket.FromFile(f).(*Socket)
	if !ok {
		t.Fatalf("file %v is not a unix socket", f)
	}
	return s
}

func abstract(name string) []byte {
	return address{abstract: true, name: name}.encode()
}

func TestParseAddress(t *testing.T) {
	fam := []byte{byte(sys.AF_UNIX), 0}
	cases := []struct {
		name    string
		in      []byte
		forBind bool
		want    address
		err     error
	}{
		{"short", []byte{1}, true, address{}, sys.EINVAL},
		{"family only bind", fam, true, address{autobind: true}, nil},
		{"family only connect", fam, false, address{}, sys.EINVAL},
		{"wrong family", []byte{2, 0, 'x', 0}, true, address{}, sys.EINVAL},
		{"path", append(append([]byte{}, fam...), "a/b\x00junk"...), false, address{name: "a/b"}, nil},
		{"path without nul", append(append([]byte{}, fam...), "abc"...), false, address{name: "abc"}, nil},
		{"abstract", append(append([]byte{}, fam...), "\x00n\x00m"...), false, address{abstract: true, name: "n\x00m"}, nil},
		{"too long", make([]byte, 111), true, address{}, sys.EINVAL},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseAddress(c.in, c.forBind)
			if err != c.err || got != c.want {
				t.Errorf("parseAddress(%q) = %+v, %v; want %+v, %v", c.in, got, err, c.want, c.err)
			}
		})
	}
}

func FuzzParseAddress(f *testing.F) {
	f.Add([]byte{1, 0, 0, 'a'}, true)
	f.Add([]byte{1, 0, '/', 't', 0}, false)
	f.Add([]byte{1, 0}, true)
	f.Fuzz(func(t *testing.T, b []byte, forBind bool) {
		a, err := parseAddress(b, forBind)
		if err != nil || a.autobind {
			return
		}
		// A parsed address encodes to one that parses the same.
		again, err := parseAddress(a.encode(), forBind)
		if err != nil || again != a {
			t.Fatalf("%q: parsed %+v, re-encoded %q parsed %+v, %v", b, a, a.encode(), again, err)
		}
	})
}

func TestStreamPair(t *testing.T) {
	ctx := newCtx()
	fa, fb := NewPair(ctx, NewNamespace(), sys.SOCK_STREAM, 0)
	defer fb.DecRef()
	a, b := sockOf(t, fa), sockOf(t, fb)
	send := func(s *Socket, data string) {
		t.Helper()
		if n, err := s.SendMsg(ctx, []byte(data), socket.SendOptions{}); err != nil || n != len(data) {
			t.Fatalf("send %q: %d, %v", data, n, err)
		}
	}
	recv := func(s *Socket, n, flags int) (string, error) {
		buf := make([]byte, n)
		r, err := s.RecvMsg(ctx, buf, socket.RecvOptions{Flags: flags})
		return string(buf[:r.N]), err
	}
	send(a, "ab")
	send(a, "cd")
	if got := b.Readiness(waiter.EventIn | waiter.EventOut); got != waiter.EventIn|waiter.EventOut {
		t.Errorf("readiness with data: %#x", got)
	}
	steps := []struct {
		name  string
		n     int
		flags int
		want  string
		err   error
	}{
		{"peek", 3, sys.MSG_PEEK, "abc", nil},
		{"partial", 3, 0, "abc", nil},
		{"rest", 10, 0, "d", nil},
		{"empty", 10, 0, "", syserror.ErrWouldBlock},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			got, err := recv(b, st.n, st.flags)
			if got != st.want || err != st.err {
				t.Errorf("recv = %q, %v; want %q, %v", got, err, st.want, st.err)
			}
		})
	}
	if err := a.Shutdown(ctx, sys.SHUT_WR); err != nil {
		t.Fatal(err)
	}
	if got, err := recv(b, 4, 0); got != "" || err != nil {
		t.Errorf("recv after peer SHUT_WR = %q, %v; want EOF", got, err)
	}
	if _, err := a.SendMsg(ctx, []byte("x"), socket.SendOptions{}); err != sys.EPIPE {
		t.Errorf("send after SHUT_WR: %v, want EPIPE", err)
	}
	if got := b.Readiness(waiter.EventRdHUp | waiter.EventIn); got != waiter.EventRdHUp|waiter.EventIn {
		t.Errorf("readiness after peer SHUT_WR: %#x", got)
	}
	send(b, "back")
	fa.DecRef()
	if _, err := b.SendMsg(ctx, []byte("x"), socket.SendOptions{}); err != sys.EPIPE {
		t.Errorf("send to released peer: %v, want EPIPE", err)
	}
	// a left "back" unread: b sees a reset once, then end of file.
	if _, err := recv(b, 4, 0); err != sys.ECONNRESET {
		t.Errorf("recv after peer released with unread data: %v, want ECONNRESET", err)
	}
	if got, err := recv(b, 4, 0); got != "" || err != nil {
		t.Errorf("second recv = %q, %v; want EOF", got, err)
	}
}

func TestDatagramTruncation(t *testing.T) {
	ctx := newCtx()
	fa, fb := NewPair(ctx, NewNamespace(), sys.SOCK_DGRAM, 0)
	defer fa.DecRef()
	defer fb.DecRef()
	a, b := sockOf(t, fa), sockOf(t, fb)
	for _, m := range []string{"abcdef", "", "x"} {
		if _, err := a.SendMsg(ctx, []byte(m), socket.SendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	want := []struct {
		n, msgLen, flags int
	}{{2, 6, sys.MSG_TRUNC}, {0, 0, 0}, {1, 1, 0}}
	for i, w := range want {
		buf := make([]byte, 2)
		r, err := b.RecvMsg(ctx, buf, socket.RecvOptions{})
		if err != nil || r.N != w.n || r.MsgLen != w.msgLen || r.Flags != w.flags {
			t.Errorf("datagram %d: %+v, %v; want %+v", i, r, err, w)
		}
	}
	if a.wmem.Load() != 0 {
		t.Errorf("sender still charged %d bytes after every datagram was read", a.wmem.Load())
	}
}

func TestListenConnectAccept(t *testing.T) {
	ctx := newCtx()
	ns := NewNamespace()
	lf := New(ctx, ns, sys.SOCK_STREAM, 0)
	defer lf.DecRef()
	l := sockOf(t, lf)
	if err := l.Listen(ctx, 1); err != sys.EINVAL {
		t.Errorf("listen unbound: %v, want EINVAL", err)
	}
	if err := l.Bind(ctx, abstract("srv")); err != nil {
		t.Fatal(err)
	}
	if err := l.Listen(ctx, 0); err != nil {
		t.Fatal(err)
	}
	c1f := New(ctx, ns, sys.SOCK_STREAM, 0)
	defer c1f.DecRef()
	c2f := New(ctx, ns, sys.SOCK_STREAM, 0)
	defer c2f.DecRef()
	c1, c2 := sockOf(t, c1f), sockOf(t, c2f)
	if err := c1.Connect(ctx, abstract("srv"), false); err != nil {
		t.Fatal(err)
	}
	if err := c2.Connect(ctx, abstract("srv"), false); err != syserror.ErrWouldBlock {
		t.Errorf("connect past backlog 0: %v, want EAGAIN", err)
	}
	if err := c1.Connect(ctx, abstract("srv"), false); err != sys.EISCONN {
		t.Errorf("second connect: %v, want EISCONN", err)
	}
	df := New(ctx, ns, sys.SOCK_DGRAM, 0)
	defer df.DecRef()
	if err := sockOf(t, df).Connect(ctx, abstract("srv"), false); err != sys.ECONNREFUSED {
		t.Errorf("datagram connect to a stream name: %v, want ECONNREFUSED", err)
	}
	af, peer, err := l.Accept(ctx, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	defer af.DecRef()
	if !bytes.Equal(peer, unboundAddress()) {
		t.Errorf("peer address %q, want the family alone", peer)
	}
	name, _ := sockOf(t, af).SockName(ctx)
	if !bytes.Equal(name, abstract("srv")) {
		t.Errorf("accepted socket's name %q, want the listener's", name)
	}
	if _, _, err := l.Accept(ctx, 0, false); err != syserror.ErrWouldBlock {
		t.Errorf("accept of an empty queue: %v, want EAGAIN", err)
	}
	if err := c2.Connect(ctx, abstract("srv"), false); err != nil {
		t.Errorf("connect after accept made room: %v", err)
	}
	v, err := c1.GetSockOpt(ctx, sys.SOL_SOCKET, sys.SO_PEERCRED, 12)
	if err != nil || !bytes.Equal(v, socket.EncodeCredentials(credsOf(ctx))) {
		t.Errorf("SO_PEERCRED = %v, %v", v, err)
	}
}

func TestBlockingRecvWakesAndInterrupts(t *testing.T) {
	ctx := newCtx()
	fa, fb := NewPair(ctx, NewNamespace(), sys.SOCK_SEQPACKET, 0)
	defer fa.DecRef()
	defer fb.DecRef()
	a, b := sockOf(t, fa), sockOf(t, fb)
	done := make(chan error, 1)
	go func() {
		_, err := b.RecvMsg(ctx, make([]byte, 8), socket.RecvOptions{Blocking: true})
		done <- err
	}()
	time.Sleep(10 * time.Millisecond)
	if _, err := a.SendMsg(ctx, []byte("wake"), socket.SendOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("blocked recv: %v", err)
	}
	rctx := newCtx()
	go func() {
		_, err := b.RecvMsg(rctx, make([]byte, 8), socket.RecvOptions{Blocking: true})
		done <- err
	}()
	time.Sleep(10 * time.Millisecond)
	rctx.Interrupt()
	if err := <-done; err != syserror.ErrInterrupted {
		t.Errorf("interrupted recv: %v, want ErrInterrupted", err)
	}
}

func TestRightsReleasedWithUnreadMessage(t *testing.T) {
	ctx := newCtx()
	ns := NewNamespace()
	fa, fb := NewPair(ctx, ns, sys.SOCK_DGRAM, 0)
	defer fa.DecRef()
	r, w := pipe.NewPair(ctx, 0)
	defer r.DecRef()
	o := socket.SendOptions{Control: socket.ControlMessages{Rights: []*fs.FileDescription{w}}}
	if _, err := sockOf(t, fa).SendMsg(ctx, []byte("x"), o); err != nil {
		t.Fatal(err)
	}
	if got := ns.inflight[ctx.Credentials().EffectiveUID]; got != 1 {
		t.Errorf("in flight: %d, want 1", got)
	}
	if n, err := r.Read(ctx, make([]byte, 1)); err != syserror.ErrWouldBlock {
		t.Errorf("pipe read with the writer in flight: %d, %v; want EAGAIN", n, err)
	}
	fb.DecRef()
	if n, err := r.Read(ctx, make([]byte, 1)); n != 0 || err != nil {
		t.Errorf("pipe read after the message was dropped: %d, %v; want EOF", n, err)
	}
	if got := len(ns.inflight); got != 0 {
		t.Errorf("in-flight counts left: %v", ns.inflight)
	}
}

func TestInflightLimit(t *testing.T) {
	ctx := newCtx()
	ns := NewNamespace()
	fa, fb := NewPair(ctx, ns, sys.SOCK_DGRAM, 0)
	defer fa.DecRef()
	defer fb.DecRef()
	r, w := pipe.NewPair(ctx, 0)
	defer r.DecRef()
	defer w.DecRef()
	send := func() error {
		w.IncRef()
		o := socket.SendOptions{MaxInflight: 2, Control: socket.ControlMessages{Rights: []*fs.FileDescription{w}}}
		_, err := sockOf(t, fa).SendMsg(ctx, []byte("x"), o)
		return err
	}
	for i, want := range []error{nil, nil, sys.ETOOMANYREFS} {
		if err := send(); err != want {
			t.Errorf("send %d: %v, want %v", i, err, want)
		}
	}
}

// hostSockNode is a socket file whose host socket is a real one the test
// listens on.
type hostSockNode struct {
	path string
}

func (n *hostSockNode) Stat(fs.Context) (fs.Stat, error) {
	return fs.Stat{Mode: sys.S_IFSOCK | 0o777, Nlink: 1, Ino: 77}, nil
}

func (n *hostSockNode) ConnectHostSocket(_ fs.Context, _ fs.Node, _ string, typ int) (int, error) {
	fd, err := sys.Socket(sys.AF_UNIX, typ|sys.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if err := sys.Connect(fd, &sys.SockaddrUnix{Name: n.path}); err != nil {
		sys.Close(fd)
		return -1, err
	}
	return fd, nil
}

func TestConnectToHostSocket(t *testing.T) {
	hostPath := t.TempDir() + "/h.sock"
	lfd, err := sys.Socket(sys.AF_UNIX, sys.SOCK_STREAM|sys.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Close(lfd)
	if err := sys.Bind(lfd, &sys.SockaddrUnix{Name: hostPath}); err != nil {
		t.Fatal(err)
	}
	if err := sys.Listen(lfd, 1); err != nil {
		t.Fatal(err)
	}
	root := synth.NewDir(0o755, map[string]fs.Node{"h.sock": &hostSockNode{path: hostPath}})
	mns := fs.NewMountNamespace(synth.NewFilesystem("rootfs", 1, root, true), fs.MountFlags{})
	ctx := newCtx()
	ctx.fsc = fs.NewFSContext(mns.Root(), mns.Root(), 0o022)
	ns := NewNamespace()

	df := New(ctx, ns, sys.SOCK_DGRAM, 0)
	defer df.DecRef()
	if err := sockOf(t, df).Connect(ctx, address{name: "/h.sock"}.encode(), true); err != sys.EPROTOTYPE {
		t.Errorf("datagram connect to a host stream socket: %v, want EPROTOTYPE", err)
	}

	f := New(ctx, ns, sys.SOCK_STREAM, 0)
	defer f.DecRef()
	s := sockOf(t, f)
	if err := s.Connect(ctx, address{name: "/h.sock"}.encode(), true); err != nil {
		t.Fatalf("connect: %v", err)
	}
	if err := s.Connect(ctx, address{name: "/h.sock"}.encode(), true); err != sys.EISCONN {
		t.Errorf("second connect: %v, want EISCONN", err)
	}
	cfd, _, err := sys.Accept4(lfd, sys.SOCK_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Close(cfd)
	if n, err := s.SendMsg(ctx, []byte("ping"), socket.SendOptions{Blocking: true}); n != 4 || err != nil {
		t.Fatalf("send: %d, %v", n, err)
	}
	buf := make([]byte, 8)
	if n, err := sys.Read(cfd, buf); n != 4 || err != nil || string(buf[:4]) != "ping" {
		t.Errorf("host read %q, %v", buf[:max(n, 0)], err)
	}
	if got := s.Readiness(waiter.EventIn); got != 0 {
		t.Errorf("readiness before the host writes: %#x", got)
	}
	done := make(chan error, 1)
	got := make([]byte, 8)
	var res socket.RecvResult
	go func() {
		var err error
		res, err = s.RecvMsg(ctx, got, socket.RecvOptions{Blocking: true})
		done <- err
	}()
	time.Sleep(10 * time.Millisecond)
	if _, err := sys.Write(cfd, []byte("pong")); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil || res.N != 4 || string(got[:4]) != "pong" {
		t.Errorf("blocking recv from the host: %+v %q, %v", res, got, err)
	}
	peer, err := s.PeerName(ctx)
	if err != nil || !bytes.Equal(peer, address{name: "/h.sock"}.encode()) {
		t.Errorf("peer name %q, %v", peer, err)
	}
	w, _ := pipe.NewPair(ctx, 0)
	o := socket.SendOptions{Control: socket.ControlMessages{Rights: []*fs.FileDescription{w}}}
	if _, err := s.SendMsg(ctx, []byte("x"), o); err != sys.EOPNOTSUPP {
		t.Errorf("descriptors to a host socket: %v, want EOPNOTSUPP", err)
	}
	if err := s.Shutdown(ctx, sys.SHUT_WR); err != nil {
		t.Fatal(err)
	}
	if n, err := sys.Read(cfd, buf); n != 0 || err != nil {
		t.Errorf("host read after SHUT_WR: %d, %v; want EOF", n, err)
	}
	sys.Close(cfd)
	deadline := time.Now().Add(2 * time.Second)
	for s.Readiness(waiter.EventIn|waiter.EventRdHUp)&waiter.EventRdHUp == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if r, err := s.RecvMsg(ctx, got, socket.RecvOptions{}); r.N != 0 || err != nil {
		t.Errorf("recv after the host closed: %+v, %v; want EOF", r, err)
	}
}

// TestEmptyDatagramsAreBounded checks that each queued message costs its
// sender's buffer something, so a peer that never reads cannot be sent
// zero-length datagrams without end.
func TestEmptyDatagramsAreBounded(t *testing.T) {
	ctx := newCtx()
	fa, fb := NewPair(ctx, NewNamespace(), sys.SOCK_DGRAM, 0)
	defer fa.DecRef()
	defer fb.DecRef()
	a := sockOf(t, fa)
	sent := 0
	for ; sent < 1<<20; sent++ {
		if _, err := a.SendMsg(ctx, nil, socket.SendOptions{}); err == syserror.ErrWouldBlock {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if want := socket.DefaultBufSize / msgOverhead; sent > want+1 {
		t.Errorf("queued %d empty datagrams, want at most %d", sent, want+1)
	}
	if got := a.Readiness(waiter.EventOut); got != 0 {
		t.Errorf("sender writable with a full buffer: %#x", got)
	}
}
