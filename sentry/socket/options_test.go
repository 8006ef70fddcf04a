package socket

import (
	"bytes"
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"
)

func timeval(sec, usec int64) []byte {
	b := make([]byte, 16)
	binary.LittleEndian.PutUint64(b, uint64(sec))
	binary.LittleEndian.PutUint64(b[8:], uint64(usec))
	return b
}

func TestOptionsSet(t *testing.T) {
	cases := []struct {
		name       string
		opt        int
		val        []byte
		privileged bool
		err        error
		get        int    // option to read back (0: opt)
		want       []byte // nil: do not read back
	}{
		{"sndbuf doubles", unix.SO_SNDBUF, Int(10000), false, nil, 0, Int(20000)},
		{"sndbuf minimum", unix.SO_SNDBUF, Int(1), false, nil, 0, Int(MinSndBuf)},
		{"sndbuf capped", unix.SO_SNDBUF, Int(1 << 30), false, nil, 0, Int(2 * MaxBufSize)},
		{"sndbuf negative is capped", unix.SO_SNDBUF, Int(-1), false, nil, 0, Int(2 * MaxBufSize)},
		{"rcvbuf minimum", unix.SO_RCVBUF, Int(0), false, nil, 0, Int(MinRcvBuf)},
		{"sndbufforce unprivileged", unix.SO_SNDBUFFORCE, Int(1 << 20), false, unix.EPERM, 0, nil},
		{"sndbufforce privileged", unix.SO_SNDBUFFORCE, Int(1 << 20), true, nil, unix.SO_SNDBUF, Int(2 << 20)},
		{"short int", unix.SO_REUSEADDR, []byte{1, 0}, false, unix.EINVAL, 0, nil},
		{"reuseaddr kept", unix.SO_REUSEADDR, Int(5), false, nil, 0, Int(1)},
		{"passcred", unix.SO_PASSCRED, Int(1), false, nil, 0, Int(1)},
		{"timeout", unix.SO_RCVTIMEO, timeval(2, 500000), false, nil, 0, timeval(2, 500000)},
		{"timeout bad usec", unix.SO_RCVTIMEO, timeval(0, 1000000), false, unix.EDOM, 0, nil},
		{"timeout short", unix.SO_SNDTIMEO, make([]byte, 8), false, unix.EINVAL, 0, nil},
		{"timeout negative never waits", unix.SO_SNDTIMEO, timeval(-1, 0), false, nil, 0, timeval(0, 0)},
		{"mark unprivileged", unix.SO_MARK, Int(1), false, unix.EPERM, 0, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := NewOptions()
			ok, err := o.Set(c.opt, c.val, c.privileged)
			if !ok || err != c.err {
				t.Fatalf("Set = %v, %v; want true, %v", ok, err, c.err)
			}
			if c.want == nil {
				return
			}
			get := c.get
			if get == 0 {
				get = c.opt
			}
			v, ok := o.Get(get)
			if !ok || !bytes.Equal(v, c.want) {
				t.Errorf("Get = %v, %v; want %v", v, ok, c.want)
			}
		})
	}
	if ok, _ := NewOptions().Set(9999, Int(1), true); ok {
		t.Error("an unknown option was accepted")
	}
}

func TestNegativeTimeoutDeadline(t *testing.T) {
	o := NewOptions()
	if _, err := o.Set(unix.SO_RCVTIMEO, timeval(-5, 0), false); err != nil {
		t.Fatal(err)
	}
	if _, has := o.RcvTimeout().Deadline(); !has {
		t.Error("a negative timeout must give a deadline (do not wait)")
	}
	if _, has := Timeout(0).Deadline(); has {
		t.Error("a zero timeout waits forever")
	}
}
