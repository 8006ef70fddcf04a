package eventfd

import (
	"encoding/binary"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
	"github.com/moat-sandbox/moat/sentry/syserror"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

func u64(v uint64) []byte { return binary.NativeEndian.AppendUint64(nil, v) }

func TestCounter(t *testing.T) {
	ctx := fstest.NewContext()
	fd, err := New(3, unix.EFD_NONBLOCK)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.DecRef()
	buf := make([]byte, 8)
	steps := []struct {
		name  string
		write bool
		data  []byte
		n     int
		err   error
		value uint64 // read result
	}{
		{name: "short read", data: make([]byte, 7), err: unix.EINVAL},
		{name: "read all", data: buf, n: 8, value: 3},
		{name: "empty", data: buf, err: syserror.ErrWouldBlock},
		{name: "short write", write: true, data: make([]byte, 4), err: unix.EINVAL},
		{name: "write max+1", write: true, data: u64(^uint64(0)), err: unix.EINVAL},
		{name: "write", write: true, data: u64(5), n: 8},
		{name: "overflow", write: true, data: u64(^uint64(0) - 1), err: syserror.ErrWouldBlock},
		{name: "read", data: buf, n: 8, value: 5},
	}
	for _, s := range steps {
		var n int
		var err error
		if s.write {
			n, err = fd.Write(ctx, s.data)
		} else {
			n, err = fd.Read(ctx, s.data)
		}
		if n != s.n || err != s.err {
			t.Fatalf("%s: %d, %v; want %d, %v", s.name, n, err, s.n, s.err)
		}
		if !s.write && err == nil {
			if v := binary.NativeEndian.Uint64(buf); v != s.value {
				t.Fatalf("%s: value %d, want %d", s.name, v, s.value)
			}
		}
	}
	if _, err := New(0, 0x1000); err != unix.EINVAL {
		t.Errorf("bad flags = %v", err)
	}
	if st, _ := fd.Stat(ctx); st.Mode != 0o600 {
		t.Errorf("mode %#o", st.Mode)
	}
}

func TestSemaphoreAndBlocking(t *testing.T) {
	ctx := fstest.NewContext()
	fd, _ := New(2, unix.EFD_SEMAPHORE)
	defer fd.DecRef()
	buf := make([]byte, 8)
	for i := 0; i < 2; i++ {
		if n, err := fs.ReadBlocking(ctx, fd, buf); n != 8 || err != nil || binary.NativeEndian.Uint64(buf) != 1 {
			t.Fatalf("semaphore read %d: %d %v %v", i, n, err, buf)
		}
	}
	if fd.Readiness(waiter.EventIn) != 0 {
		t.Fatal("readable at zero")
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		fd.Write(ctx, u64(7))
	}()
	if n, err := fs.ReadBlocking(ctx, fd, buf); n != 8 || err != nil || binary.NativeEndian.Uint64(buf) != 1 {
		t.Fatalf("blocking read: %d %v %v", n, err, buf)
	}
	if v := fd.Impl().(*File).Value(); v != 6 {
		t.Fatalf("value %d", v)
	}
}

// TestReadinessBits checks the poll bits of each counter state: POLLIN
// and POLLOUT only, as Linux's eventfd_poll (no POLLRDNORM/POLLWRNORM).
func TestReadinessBits(t *testing.T) {
	all := waiter.EventIn | waiter.EventOut | waiter.EventRdNorm | waiter.EventWrNorm | waiter.EventPri
	cases := []struct {
		name  string
		count uint64
		want  waiter.EventMask
	}{
		{"zero", 0, waiter.EventOut},
		{"some", 1, waiter.EventIn | waiter.EventOut},
		{"full", maxCount, waiter.EventIn},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fd, err := New(0, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer fd.DecRef()
			if c.count > 0 {
				if _, err := fd.Write(fstest.NewContext(), u64(c.count)); err != nil {
					t.Fatal(err)
				}
			}
			if got := fd.Readiness(all); got != c.want {
				t.Errorf("readiness = %#x, want %#x", got, c.want)
			}
		})
	}
}
