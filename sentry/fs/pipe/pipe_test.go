package pipe

import (
	"bytes"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
	"github.com/moat-sandbox/moat/sentry/syserror"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

func TestReadWriteEOFAndEPIPE(t *testing.T) {
	ctx := fstest.NewContext()
	r, w := NewPair(ctx, unix.O_NONBLOCK)
	buf := make([]byte, 10)
	if _, err := r.Read(ctx, buf); err != syserror.ErrWouldBlock {
		t.Fatalf("empty read: %v", err)
	}
	if n, err := w.Write(ctx, []byte("hello")); n != 5 || err != nil {
		t.Fatalf("write = %d, %v", n, err)
	}
	if n, _ := r.Read(ctx, buf[:3]); string(buf[:n]) != "hel" {
		t.Fatalf("read %q", buf[:n])
	}
	if n, _ := r.Read(ctx, buf); string(buf[:n]) != "lo" {
		t.Fatalf("read %q", buf[:n])
	}
	if _, err := r.PRead(ctx, buf, 0); err != unix.ESPIPE {
		t.Errorf("pread = %v, want ESPIPE", err)
	}
	if _, err := r.Seek(ctx, 0, unix.SEEK_SET); err != unix.ESPIPE {
		t.Errorf("lseek = %v, want ESPIPE", err)
	}
	w.DecRef()
	if n, err := r.Read(ctx, buf); n != 0 || err != nil {
		t.Fatalf("read after writer closed = %d, %v, want EOF", n, err)
	}
	if got := r.Readiness(waiter.AllEvents); got&waiter.EventHUp == 0 {
		t.Errorf("readiness %#x lacks HUP", got)
	}
	r.DecRef()

	r, w = NewPair(ctx, 0)
	r.DecRef()
	if _, err := w.Write(ctx, []byte("x")); err != unix.EPIPE {
		t.Errorf("write without reader = %v, want EPIPE", err)
	}
	if got := w.Readiness(waiter.AllEvents); got&waiter.EventErr == 0 {
		t.Errorf("readiness %#x lacks ERR", got)
	}
	w.DecRef()
}

func TestAtomicAndPartialWrites(t *testing.T) {
	ctx := fstest.NewContext()
	r, w := NewPair(ctx, unix.O_NONBLOCK)
	defer r.DecRef()
	defer w.DecRef()
	fill := bytes.Repeat([]byte{'a'}, DefaultSize-100)
	if n, _ := w.Write(ctx, fill); n != len(fill) {
		t.Fatalf("fill wrote %d", n)
	}
	// 200 bytes <= PIPE_BUF do not fit: nothing is written.
	if n, err := w.Write(ctx, make([]byte, 200)); n != 0 || err != syserror.ErrWouldBlock {
		t.Fatalf("atomic write = %d, %v", n, err)
	}
	if got := w.Readiness(waiter.EventOut); got != 0 {
		t.Errorf("writable with 100 bytes free")
	}
	// A large write takes what fits.
	n, err := fs.WriteBlocking(ctx, w, make([]byte, 2*Buf))
	if n != 100 || err != nil {
		t.Fatalf("partial nonblocking write = %d, %v", n, err)
	}
	var b [4]byte
	if _, err := r.Ioctl(ctx, unix.TIOCINQ, fstest.MemBase); err != nil {
		t.Fatal(err)
	}
	ctx.CopyInBytes(fstest.MemBase, b[:])
	if got := int(b[0]) | int(b[1])<<8 | int(b[2])<<16; got != DefaultSize {
		t.Errorf("FIONREAD = %d", got)
	}
}

func TestBlockingReadWakesAndInterrupts(t *testing.T) {
	ctx := fstest.NewContext()
	r, w := NewPair(ctx, 0)
	defer r.DecRef()
	defer w.DecRef()
	go func() {
		time.Sleep(20 * time.Millisecond)
		w.Write(ctx, []byte("ping"))
	}()
	buf := make([]byte, 8)
	n, err := fs.ReadBlocking(ctx, r, buf)
	if err != nil || string(buf[:n]) != "ping" {
		t.Fatalf("ReadBlocking = %q, %v", buf[:n], err)
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		ctx.Interrupt()
	}()
	if _, err := fs.ReadBlocking(ctx, r, buf); err != syserror.ErrInterrupted {
		t.Fatalf("interrupted read = %v", err)
	}
}

func TestBlockingWriteWaitsForRoom(t *testing.T) {
	ctx := fstest.NewContext()
	r, w := NewPair(ctx, 0)
	defer r.DecRef()
	defer w.DecRef()
	data := bytes.Repeat([]byte("0123456789abcdef"), DefaultSize/8) // twice the capacity
	done := make(chan int)
	go func() {
		n, _ := fs.WriteBlocking(ctx, w, data)
		done <- n
	}()
	var got []byte
	buf := make([]byte, 5000)
	for len(got) < len(data) {
		n, err := fs.ReadBlocking(ctx, r, buf)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, buf[:n]...)
	}
	if n := <-done; n != len(data) || !bytes.Equal(got, data) {
		t.Fatalf("wrote %d, read %d bytes, equal %v", n, len(got), bytes.Equal(got, data))
	}
}

func TestSetSize(t *testing.T) {
	ctx := fstest.NewContext()
	user := fstest.NewUserContext(1000, 1000)
	r, w := NewPair(ctx, unix.O_NONBLOCK)
	defer r.DecRef()
	defer w.DecRef()
	s := w.Impl().(Sizer)
	cases := []struct {
		ctx  fs.Context
		size int64
		want int64
		err  error
	}{
		{ctx, 0, 4096, nil},
		{ctx, 5000, 8192, nil},
		{ctx, 65536, 65536, nil},
		{user, 2 << 20, 0, unix.EPERM},
		{ctx, 2 << 20, 2 << 20, nil},
		{ctx, -1, 0, unix.EINVAL},
	}
	for _, c := range cases {
		got, err := s.SetPipeSize(c.ctx, c.size)
		if got != c.want || err != c.err {
			t.Errorf("SetPipeSize(%d) = %d, %v; want %d, %v", c.size, got, err, c.want, c.err)
		}
	}
	s.SetPipeSize(ctx, 65536)
	w.Write(ctx, make([]byte, 10000))
	if _, err := s.SetPipeSize(ctx, 4096); err != unix.EBUSY {
		t.Errorf("shrink below content = %v, want EBUSY", err)
	}
}

func TestPollPipe(t *testing.T) {
	ctx := fstest.NewContext()
	r, w := NewPair(ctx, 0)
	defer r.DecRef()
	defer w.DecRef()
	items := []fs.PollItem{{File: r, Events: waiter.EventIn}, {File: w, Events: waiter.EventOut}, {File: nil}}
	n, err := fs.Poll(ctx, items, time.Now(), true)
	if n != 2 || err != nil || items[0].Revents != 0 || items[1].Revents != waiter.EventOut || items[2].Revents != waiter.EventNVal {
		t.Fatalf("poll = %d, %v, %+v", n, err, items)
	}
	items = items[:1]
	go func() {
		time.Sleep(20 * time.Millisecond)
		w.Write(ctx, []byte("x"))
	}()
	n, err = fs.Poll(ctx, items, time.Time{}, false)
	if n != 1 || items[0].Revents != waiter.EventIn {
		t.Fatalf("blocking poll = %d, %v, %#x", n, err, items[0].Revents)
	}
	// Timeout.
	buf := make([]byte, 1)
	r.Read(ctx, buf)
	start := time.Now()
	n, err = fs.Poll(ctx, items, start.Add(30*time.Millisecond), true)
	if n != 0 || err != nil || time.Since(start) < 30*time.Millisecond {
		t.Fatalf("timed poll = %d, %v after %v", n, err, time.Since(start))
	}
}

func TestPacketMode(t *testing.T) {
	ctx := fstest.NewContext()
	r, w := NewPair(ctx, unix.O_DIRECT|unix.O_NONBLOCK)
	defer r.DecRef()
	defer w.DecRef()
	buf := make([]byte, 64)
	w.Write(ctx, []byte("one"))
	w.Write(ctx, []byte("two!"))
	if n, _ := r.Read(ctx, buf); n != 3 {
		t.Fatalf("first packet read %d bytes", n)
	}
	if n, _ := r.Read(ctx, buf); n != 4 || string(buf[:4]) != "two!" {
		t.Fatalf("second packet %q", buf[:n])
	}
	w.Write(ctx, []byte("abcdef"))
	w.Write(ctx, []byte("gh"))
	if n, _ := r.Read(ctx, buf[:2]); n != 2 {
		t.Fatalf("short read %d", n)
	}
	if n, _ := r.Read(ctx, buf); n != 2 || string(buf[:2]) != "gh" {
		t.Fatalf("after a short read: %q (the rest of the packet must be gone)", buf[:n])
	}
	// Stream data written without O_DIRECT merges.
	w.SetStatusFlags(unix.O_NONBLOCK)
	w.Write(ctx, []byte("ab"))
	w.Write(ctx, []byte("cd"))
	if n, _ := r.Read(ctx, buf); string(buf[:n]) != "abcd" {
		t.Fatalf("stream data %q", buf[:n])
	}
}

func TestTransfer(t *testing.T) {
	ctx := fstest.NewContext()
	ar, aw := NewPair(ctx, unix.O_NONBLOCK)
	br, bw := NewPair(ctx, unix.O_NONBLOCK)
	defer ar.DecRef()
	defer br.DecRef()
	defer bw.DecRef()
	a, b := FromFile(ar), FromFile(bw)
	if _, blocked, err := Transfer(b, a, 8, true); err != syserror.ErrWouldBlock || !blocked {
		t.Fatalf("tee from empty = %v, blocked %v", err, blocked)
	}
	aw.Write(ctx, []byte("spliced!"))
	if n, _, err := Transfer(b, a, 8, true); n != 8 || err != nil || a.Buffered() != 8 {
		t.Fatalf("tee = %d, %v; source keeps %d", n, err, a.Buffered())
	}
	if n, _, _ := Transfer(b, a, 5, false); n != 5 || a.Buffered() != 3 || b.Buffered() != 13 {
		t.Fatalf("splice = %d; source %d, dest %d", n, a.Buffered(), b.Buffered())
	}
	buf := make([]byte, 32)
	if n, _ := br.Read(ctx, buf); string(buf[:n]) != "spliced!splic" {
		t.Fatalf("dest holds %q", buf[:n])
	}
	aw.DecRef()
	Transfer(b, a, 3, false)
	if n, _, err := Transfer(b, a, 3, false); n != 0 || err != nil {
		t.Fatalf("at EOF = %d, %v", n, err)
	}
}
