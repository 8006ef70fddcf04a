package socket

import (
	"encoding/binary"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Buffer sizes, as Linux's defaults (net.core.wmem_default and
// wmem_max are 212992) and SOCK_MIN_SNDBUF/SOCK_MIN_RCVBUF on amd64.
const (
	DefaultBufSize = 212992
	MaxBufSize     = 212992
	MinSndBuf      = 4608
	MinRcvBuf      = 2304
)

// Options are the SOL_SOCKET options every family keeps the same way.
// The zero value is not ready: use NewOptions.
type Options struct {
	// rcvTimeo and sndTimeo (Timeout values) are atomic: every blocking
	// call reads them, and none should take mu for it.
	rcvTimeo atomic.Int64
	sndTimeo atomic.Int64

	mu       sync.Mutex
	sndBuf   int
	rcvBuf   int
	passCred bool
	bools    map[int]bool
	linger   [8]byte
	priority int
	rcvLowat int
	sndLowat int
	mark     int
	peekOff  int
	busyPoll int
}

// NewOptions returns the options of a new socket.
func NewOptions() *Options {
	return &Options{sndBuf: DefaultBufSize, rcvBuf: DefaultBufSize, rcvLowat: 1, sndLowat: 1, peekOff: -1}
}

// boolOptions are the SOL_SOCKET flags kept and reported without effect
// on Unix-domain sockets.
var boolOptions = map[int]bool{
	unix.SO_REUSEADDR: true, unix.SO_REUSEPORT: true, unix.SO_KEEPALIVE: true,
	unix.SO_BROADCAST: true, unix.SO_OOBINLINE: true, unix.SO_DONTROUTE: true,
	unix.SO_TIMESTAMP: true, unix.SO_TIMESTAMPNS: true, unix.SO_PASSSEC: true,
	unix.SO_RXQ_OVFL: true, unix.SO_WIFI_STATUS: true, unix.SO_NOFCS: true,
	unix.SO_SELECT_ERR_QUEUE: true, unix.SO_ZEROCOPY: true,
}

// SndBuf returns SO_SNDBUF.
func (o *Options) SndBuf() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.sndBuf
}

// RcvBuf returns SO_RCVBUF.
func (o *Options) RcvBuf() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.rcvBuf
}

// PassCred returns SO_PASSCRED.
func (o *Options) PassCred() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.passCred
}

// RcvTimeout returns SO_RCVTIMEO.
func (o *Options) RcvTimeout() Timeout { return Timeout(o.rcvTimeo.Load()) }

// Timeouts returns SO_RCVTIMEO and SO_SNDTIMEO.
func (o *Options) Timeouts() (rcv, snd Timeout) { return o.RcvTimeout(), o.SndTimeout() }

// SndTimeout returns SO_SNDTIMEO.
func (o *Options) SndTimeout() Timeout { return Timeout(o.sndTimeo.Load()) }

// Int encodes an int option value.
func Int(v int) []byte {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], uint32(int32(v)))
	return b[:]
}

// Bool encodes a boolean option value.
func Bool(v bool) []byte {
	if v {
		return Int(1)
	}
	return Int(0)
}

// ParseInt decodes an int option value: EINVAL if shorter than an int.
func ParseInt(b []byte) (int, error) {
	if len(b) < 4 {
		return 0, unix.EINVAL
	}
	return int(int32(binary.LittleEndian.Uint32(b))), nil
}

// EncodeCredentials encodes struct ucred.
func EncodeCredentials(c Credentials) []byte {
	var b [12]byte
	binary.LittleEndian.PutUint32(b[0:], uint32(c.PID))
	binary.LittleEndian.PutUint32(b[4:], uint32(c.UID))
	binary.LittleEndian.PutUint32(b[8:], uint32(c.GID))
	return b[:]
}

func encodeTimeout(t Timeout) []byte {
	var b [16]byte
	if t > 0 {
		d := time.Duration(t)
		binary.LittleEndian.PutUint64(b[0:], uint64(d/time.Second))
		binary.LittleEndian.PutUint64(b[8:], uint64((d%time.Second)/time.Microsecond))
	}
	return b[:]
}

// parseTimeout decodes a struct timeval as setsockopt's SO_RCVTIMEO:
// EINVAL if short, EDOM for microseconds out of range; a negative
// second count means "never wait".
func parseTimeout(b []byte) (Timeout, error) {
	if len(b) < 16 {
		return 0, unix.EINVAL
	}
	sec := int64(binary.LittleEndian.Uint64(b[0:]))
	usec := int64(binary.LittleEndian.Uint64(b[8:]))
	if usec < 0 || usec >= 1e6 {
		return 0, unix.EDOM
	}
	if sec < 0 {
		return -1, nil
	}
	if sec > int64(time.Duration(1<<62)/time.Second) {
		return 0, nil
	}
	return Timeout(time.Duration(sec)*time.Second + time.Duration(usec)*time.Microsecond), nil
}

// Get returns the value of the SOL_SOCKET option name if it is one of
// the common ones; ok is false otherwise.
func (o *Options) Get(name int) (val []byte, ok bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch name {
	case unix.SO_SNDBUF:
		return Int(o.sndBuf), true
	case unix.SO_RCVBUF:
		return Int(o.rcvBuf), true
	case unix.SO_RCVTIMEO:
		return encodeTimeout(o.RcvTimeout()), true
	case unix.SO_SNDTIMEO:
		return encodeTimeout(o.SndTimeout()), true
	case unix.SO_PASSCRED:
		return Bool(o.passCred), true
	case unix.SO_LINGER:
		return append([]byte(nil), o.linger[:]...), true
	case unix.SO_PRIORITY:
		return Int(o.priority), true
	case unix.SO_RCVLOWAT:
		return Int(o.rcvLowat), true
	case unix.SO_SNDLOWAT:
		return Int(o.sndLowat), true
	case unix.SO_MARK:
		return Int(o.mark), true
	case unix.SO_PEEK_OFF:
		return Int(o.peekOff), true
	case unix.SO_BUSY_POLL:
		return Int(o.busyPoll), true
	}
	if boolOptions[name] {
		return Bool(o.bools[name]), true
	}
	return nil, false
}

// Set sets the SOL_SOCKET option name if it is one of the common ones;
// ok is false otherwise. privileged says the caller has CAP_NET_ADMIN
// (for SO_SNDBUFFORCE, SO_RCVBUFFORCE and SO_MARK).
func (o *Options) Set(name int, val []byte, privileged bool) (ok bool, err error) {
	switch name {
	case unix.SO_RCVTIMEO, unix.SO_SNDTIMEO:
		t, err := parseTimeout(val)
		if err != nil {
			return true, err
		}
		if name == unix.SO_RCVTIMEO {
			o.rcvTimeo.Store(int64(t))
		} else {
			o.sndTimeo.Store(int64(t))
		}
		return true, nil
	case unix.SO_LINGER:
		if len(val) < 8 {
			return true, unix.EINVAL
		}
		o.mu.Lock()
		copy(o.linger[:], val)
		o.mu.Unlock()
		return true, nil
	case unix.SO_PEEK_OFF:
		// Unix sockets support it, but Moat's receive paths do not.
		return true, unix.EOPNOTSUPP
	}
	if _, known := o.Get(name); !known && name != unix.SO_SNDBUFFORCE && name != unix.SO_RCVBUFFORCE {
		return false, nil
	}
	v, err := ParseInt(val)
	if err != nil {
		return true, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	switch name {
	case unix.SO_SNDBUF, unix.SO_SNDBUFFORCE:
		if name == unix.SO_SNDBUFFORCE && !privileged {
			return true, unix.EPERM
		}
		u := uint32(v)
		if name == unix.SO_SNDBUF && u > MaxBufSize {
			u = MaxBufSize
		}
		o.sndBuf = max(int(min(u, 1<<30)*2), MinSndBuf)
	case unix.SO_RCVBUF, unix.SO_RCVBUFFORCE:
		if name == unix.SO_RCVBUFFORCE && !privileged {
			return true, unix.EPERM
		}
		u := uint32(v)
		if name == unix.SO_RCVBUF && u > MaxBufSize {
			u = MaxBufSize
		}
		o.rcvBuf = max(int(min(u, 1<<30)*2), MinRcvBuf)
	case unix.SO_PASSCRED:
		o.passCred = v != 0
	case unix.SO_PRIORITY:
		if (v < 0 || v > 6) && !privileged {
			return true, unix.EPERM
		}
		o.priority = v
	case unix.SO_RCVLOWAT:
		if v < 0 {
			v = 1<<31 - 1
		}
		o.rcvLowat = max(v, 1)
	case unix.SO_SNDLOWAT:
		return true, unix.ENOPROTOOPT
	case unix.SO_MARK:
		if !privileged {
			return true, unix.EPERM
		}
		o.mark = v
	case unix.SO_BUSY_POLL:
		if v < 0 {
			return true, unix.EINVAL
		}
		o.busyPoll = v
	default:
		if o.bools == nil {
			o.bools = make(map[int]bool)
		}
		o.bools[name] = v != 0
	}
	return true, nil
}
