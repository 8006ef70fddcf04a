package unix

import (
	"testing"

	sys "golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/socket"
	"github.com/moat-sandbox/moat/sentry/syserror"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

// TestOOB walks a stream pair through urgent data: the mark, POLLPRI,
// taking the byte, and the reads around it.
func TestOOB(t *testing.T) {
	ctx := newCtx()
	fa, fb := NewPair(ctx, NewNamespace(), sys.SOCK_STREAM, 0)
	defer fa.DecRef()
	defer fb.DecRef()
	a, b := sockOf(t, fa), sockOf(t, fb)
	if n, err := a.SendMsg(ctx, []byte("abc"), socket.SendOptions{Flags: sys.MSG_OOB}); n != 3 || err != nil {
		t.Fatalf("send(MSG_OOB) = %d, %v", n, err)
	}
	if _, err := a.SendMsg(ctx, nil, socket.SendOptions{Flags: sys.MSG_OOB}); err != sys.EOPNOTSUPP {
		t.Errorf("empty send(MSG_OOB): %v, want EOPNOTSUPP", err)
	}
	if b.Readiness(waiter.EventPri) == 0 {
		t.Error("no POLLPRI with an urgent byte queued")
	}
	buf := make([]byte, 8)
	steps := []struct {
		name  string
		flags int
		want  string
		err   error
		mark  bool
	}{
		{"read stops at the mark", 0, "ab", nil, true},
		{"peek urgent", sys.MSG_OOB | sys.MSG_PEEK, "c", nil, true},
		{"take urgent", sys.MSG_OOB, "c", nil, true},
		{"no more urgent", sys.MSG_OOB, "", sys.EINVAL, true},
		{"empty place dropped", 0, "", syserror.ErrWouldBlock, false},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			res, err := b.RecvMsg(ctx, buf, socket.RecvOptions{Flags: st.flags})
			if err != st.err || string(buf[:res.N]) != st.want {
				t.Fatalf("recv = %q, %v; want %q, %v", buf[:res.N], err, st.want, st.err)
			}
			if got := b.atMark(); got != st.mark {
				t.Errorf("at mark = %v, want %v", got, st.mark)
			}
		})
	}
	if b.Readiness(waiter.EventPri|waiter.EventIn) != 0 {
		t.Error("still readable after everything was read")
	}
	if a.wmem.Load() != 0 {
		t.Errorf("sender's buffer still charged %d bytes", a.wmem.Load())
	}
	// Datagram sockets have no urgent data.
	da, db := NewPair(ctx, NewNamespace(), sys.SOCK_DGRAM, 0)
	defer da.DecRef()
	defer db.DecRef()
	if _, err := sockOf(t, da).SendMsg(ctx, []byte("x"), socket.SendOptions{Flags: sys.MSG_OOB}); err != sys.EOPNOTSUPP {
		t.Errorf("datagram send(MSG_OOB): %v, want EOPNOTSUPP", err)
	}
}

// urgOwner counts SIGURGs.
type urgOwner struct{ urg int }

func (o *urgOwner) SendIO(int32, int32, waiter.EventMask) {}
func (o *urgOwner) SendURG()                              { o.urg++ }

// TestOOBSignalsOwner checks that each urgent byte, and only urgent data,
// signals the owner of the receiving file.
func TestOOBSignalsOwner(t *testing.T) {
	ctx := newCtx()
	fa, fb := NewPair(ctx, NewNamespace(), sys.SOCK_STREAM, 0)
	defer fa.DecRef()
	defer fb.DecRef()
	o := &urgOwner{}
	fb.SetOwner(o)
	a := sockOf(t, fa)
	for _, s := range []struct {
		flags int
		want  int
	}{{sys.MSG_OOB, 1}, {0, 1}, {sys.MSG_OOB, 2}} {
		if _, err := a.SendMsg(ctx, []byte("xy"), socket.SendOptions{Flags: s.flags}); err != nil {
			t.Fatal(err)
		}
		if o.urg != s.want {
			t.Errorf("after a send with flags %#x: %d SIGURGs, want %d", s.flags, o.urg, s.want)
		}
	}
}
