package proto

import (
	"encoding/binary"
	"errors"

	"golang.org/x/sys/unix"
)

// Decoding errors. They say what was wrong with a message; the caller
// decides whether that costs the message or the connection.
var (
	errShort      = errors.New("message too short")
	errTrailing   = errors.New("trailing bytes after message")
	errBadValue   = errors.New("invalid field value")
	errUnknown    = errors.New("unknown message type")
	errTooLarge   = errors.New("message larger than MaxMessage")
	errStringSize = errors.New("string too long to encode")
)

// encoder appends little-endian fields to buf.
type encoder struct {
	buf []byte
	err error
}

func (e *encoder) u8(v uint8)   { e.buf = append(e.buf, v) }
func (e *encoder) u16(v uint16) { e.buf = binary.LittleEndian.AppendUint16(e.buf, v) }
func (e *encoder) u32(v uint32) { e.buf = binary.LittleEndian.AppendUint32(e.buf, v) }
func (e *encoder) u64(v uint64) { e.buf = binary.LittleEndian.AppendUint64(e.buf, v) }
func (e *encoder) i64(v int64)  { e.u64(uint64(v)) }

func (e *encoder) boolean(v bool) {
	if v {
		e.u8(1)
	} else {
		e.u8(0)
	}
}

func (e *encoder) str(s string) {
	if len(s) > 0xffff {
		e.err = errStringSize
		return
	}
	e.u16(uint16(len(s)))
	e.buf = append(e.buf, s...)
}

func (e *encoder) timespec(ts unix.Timespec) {
	e.i64(ts.Sec)
	e.i64(ts.Nsec)
}

func (e *encoder) attr(a *Attr) {
	e.u32(a.Mode)
	e.u64(a.Ino)
	e.u64(a.Dev)
	e.u64(a.Nlink)
	e.u32(a.UID)
	e.u32(a.GID)
	e.u64(a.Rdev)
	e.i64(a.Size)
	e.i64(a.Blksize)
	e.i64(a.Blocks)
	e.timespec(a.Atime)
	e.timespec(a.Mtime)
	e.timespec(a.Ctime)
}

func (e *encoder) statfs(s *unix.Statfs_t) {
	e.i64(s.Type)
	e.i64(s.Bsize)
	e.u64(s.Blocks)
	e.u64(s.Bfree)
	e.u64(s.Bavail)
	e.u64(s.Files)
	e.u64(s.Ffree)
	e.u32(uint32(s.Fsid.Val[0]))
	e.u32(uint32(s.Fsid.Val[1]))
	e.i64(s.Namelen)
	e.i64(s.Frsize)
	e.i64(s.Flags)
}

// decoder consumes little-endian fields from buf. The first failure sticks:
// later reads return zero values and err keeps the first cause.
type decoder struct {
	buf []byte
	err error
}

func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
	d.buf = nil
}

func (d *decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || len(d.buf) < n {
		d.fail(errShort)
		return nil
	}
	b := d.buf[:n:n]
	d.buf = d.buf[n:]
	return b
}

func (d *decoder) u8() uint8 {
	b := d.take(1)
	if b == nil {
		return 0
	}
	return b[0]
}

func (d *decoder) u16() uint16 {
	b := d.take(2)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint16(b)
}

func (d *decoder) u32() uint32 {
	b := d.take(4)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

func (d *decoder) u64() uint64 {
	b := d.take(8)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}

func (d *decoder) i64() int64 { return int64(d.u64()) }

func (d *decoder) boolean() bool {
	switch d.u8() {
	case 0:
		return false
	case 1:
		return true
	}
	d.fail(errBadValue)
	return false
}

// str reads a length-prefixed string. The copy it makes is bounded by the
// bytes actually present.
func (d *decoder) str() string {
	n := d.u16()
	return string(d.take(int(n)))
}

func (d *decoder) timespec() unix.Timespec {
	return unix.Timespec{Sec: d.i64(), Nsec: d.i64()}
}

func (d *decoder) attr(a *Attr) {
	a.Mode = d.u32()
	a.Ino = d.u64()
	a.Dev = d.u64()
	a.Nlink = d.u64()
	a.UID = d.u32()
	a.GID = d.u32()
	a.Rdev = d.u64()
	a.Size = d.i64()
	a.Blksize = d.i64()
	a.Blocks = d.i64()
	a.Atime = d.timespec()
	a.Mtime = d.timespec()
	a.Ctime = d.timespec()
}

func (d *decoder) statfs(s *unix.Statfs_t) {
	s.Type = d.i64()
	s.Bsize = d.i64()
	s.Blocks = d.u64()
	s.Bfree = d.u64()
	s.Bavail = d.u64()
	s.Files = d.u64()
	s.Ffree = d.u64()
	s.Fsid.Val[0] = int32(d.u32())
	s.Fsid.Val[1] = int32(d.u32())
	s.Namelen = d.i64()
	s.Frsize = d.i64()
	s.Flags = d.i64()
}

// finish reports the first error, or errTrailing if bytes are left over.
func (d *decoder) finish() error {
	if d.err == nil && len(d.buf) != 0 {
		d.err = errTrailing
	}
	return d.err
}
