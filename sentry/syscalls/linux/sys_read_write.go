package linux

import (
	"encoding/binary"
	"math"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/pipe"
	"github.com/moat-sandbox/moat/sentry/kernel"
	"github.com/moat-sandbox/moat/sentry/socket"
	"github.com/moat-sandbox/moat/sentry/syserror"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

const (
	// maxRWCount is MAX_RW_COUNT: one read or write moves at most this.
	maxRWCount = 0x7ffff000
	// uioMaxIOV is UIO_MAXIOV.
	uioMaxIOV = 1024
	// rwChunk is the Sentry buffer one step of a read or write uses.
	rwChunk = 64 << 10
)

var rwBufs = sync.Pool{New: func() any { b := make([]byte, rwChunk); return &b }}

// iovec is one segment of application memory.
type iovec struct {
	base uintptr
	len  uint64
}

// copyInIovecs reads iovcnt iovecs at addr, clamping the total to
// maxRWCount as Linux does.
func copyInIovecs(t *kernel.Task, addr uintptr, iovcnt int32) ([]iovec, error) {
	if iovcnt < 0 || iovcnt > uioMaxIOV {
		return nil, unix.EINVAL
	}
	if iovcnt == 0 {
		return nil, nil
	}
	b := make([]byte, 16*int(iovcnt))
	if _, err := t.CopyInBytes(addr, b); err != nil {
		return nil, unix.EFAULT
	}
	iovs := make([]iovec, iovcnt)
	for i := range iovs {
		if int64(binary.LittleEndian.Uint64(b[16*i+8:])) < 0 {
			return nil, unix.EINVAL
		}
	}
	var total uint64
	for i := range iovs {
		base := binary.LittleEndian.Uint64(b[16*i:])
		n := binary.LittleEndian.Uint64(b[16*i+8:])
		// Linux's access_ok on each segment, before clamping.
		if n > 0 && (base >= arch.MaxUserAddress || n > arch.MaxUserAddress-base) {
			return nil, unix.EFAULT
		}
		if n > maxRWCount-total {
			n = maxRWCount - total
		}
		total += n
		iovs[i] = iovec{uintptr(base), n}
	}
	return iovs, nil
}

func iovTotal(iovs []iovec) uint64 {
	var n uint64
	for _, v := range iovs {
		n += v.len
	}
	return n
}

// iovCursor walks application segments as one stream of bytes.
type iovCursor struct {
	iovs []iovec
	i    int
	off  uint64
}

// copyOut writes b to the segments; the count written and EFAULT if a
// segment faulted.
func (c *iovCursor) copyOut(t *kernel.Task, b []byte) (int, error) {
	done := 0
	for done < len(b) && c.i < len(c.iovs) {
		v := c.iovs[c.i]
		n := min(uint64(len(b)-done), v.len-c.off)
		k, err := t.CopyOutBytes(v.base+uintptr(c.off), b[done:done+int(n)])
		done += k
		c.off += uint64(k)
		if err != nil {
			return done, unix.EFAULT
		}
		if c.off == v.len {
			c.i, c.off = c.i+1, 0
		}
	}
	return done, nil
}

// copyIn fills b from the segments.
func (c *iovCursor) copyIn(t *kernel.Task, b []byte) (int, error) {
	done := 0
	for done < len(b) && c.i < len(c.iovs) {
		v := c.iovs[c.i]
		n := min(uint64(len(b)-done), v.len-c.off)
		k, err := t.CopyInBytes(v.base+uintptr(c.off), b[done:done+int(n)])
		done += k
		c.off += uint64(k)
		if err != nil {
			return done, unix.EFAULT
		}
		if c.off == v.len {
			c.i, c.off = c.i+1, 0
		}
	}
	return done, nil
}

// rwOptions say how one read or write goes.
type rwOptions struct {
	pos    bool  // at off, without moving the file's offset
	off    int64 // for pos
	noWait bool  // RWF_NOWAIT
	// appendMode is pwritev2's RWF_APPEND (1); RWF_NOAPPEND is refused
	// (vectored).
	appendMode int8
}

// vfsReadFile reads from f into iovs.
func vfsReadFile(t *kernel.Task, f *fs.FileDescription, iovs []iovec, o rwOptions) (uintptr, error) {
	if !f.Readable() {
		return 0, unix.EBADF
	}
	if s := socket.FromFile(f); s != nil && !o.pos {
		return sockRead(t, f, s, iovs, o.noWait)
	}
	total := iovTotal(iovs)
	if direct(f, total) {
		return vfsReadDirect(t, f, iovs, o)
	}
	// Read no more than the application can receive: Linux copies out as
	// it consumes, so bytes behind a bad buffer stay unread.
	if w := writablePrefix(t, iovs); w < total {
		if w == 0 {
			return 0, readBadBuffer(t, f, o)
		}
		total = w
	}
	bp := rwBufs.Get().(*[]byte)
	defer rwBufs.Put(bp)
	buf := *bp
	cur := iovCursor{iovs: iovs}
	var done uint64
	// A zero-length read still reaches the file (which may fail it).
	for first := true; first || done < total; first = false {
		n := min(uint64(len(buf)), total-done)
		var k int
		var err error
		switch {
		case o.pos:
			k, err = f.PRead(t, buf[:n], o.off+int64(done))
		case o.noWait || done > 0:
			k, err = f.Read(t, buf[:n])
		default:
			k, err = fs.ReadBlocking(t, f, buf[:n])
		}
		if k > 0 {
			c, cerr := cur.copyOut(t, buf[:k])
			done += uint64(c)
			if cerr != nil {
				return vfsPartial(done, cerr)
			}
		}
		if err != nil {
			return vfsPartial(done, vfsIOErr(err))
		}
		if uint64(k) < n || f.Options().Stream {
			break
		}
	}
	return uintptr(done), nil
}

// readBadBuffer is the error of a read into a buffer the application
// cannot receive anything in. Linux's files look at the buffer only when
// they have something to copy: a pollable file with nothing to read says
// EAGAIN if non-blocking, or waits, before the copy fails with EFAULT.
func readBadBuffer(t *kernel.Task, f *fs.FileDescription, o rwOptions) error {
	const mask = waiter.EventIn | waiter.EventRdHUp | waiter.EventErr | waiter.EventHUp
	if o.pos || f.Readiness(mask) != 0 {
		return unix.EFAULT
	}
	if o.noWait || f.NonBlocking() {
		return syserror.ErrWouldBlock
	}
	e, ch := waiter.NewChannelEntry(mask)
	f.EventRegister(e)
	defer f.EventUnregister(e)
	for f.Readiness(mask) == 0 {
		if err := t.BlockOn(ch, time.Time{}, false); err != nil {
			return vfsIOErr(err)
		}
	}
	return unix.EFAULT
}

// discardsWrites is implemented by files whose writes never look at the
// data (/dev/null), so a bad buffer still "writes" its whole length.
type discardsWrites interface{ DiscardsWrites() bool }

// writablePrefix returns how many bytes of iovs, from the start, the
// application's mappings let it receive.
func writablePrefix(t *kernel.Task, iovs []iovec) uint64 {
	m := t.MemoryManager()
	var n uint64
	for _, v := range iovs {
		if v.len == 0 {
			continue
		}
		w := m.WritableLen(v.base, v.len)
		n += w
		if w < v.len {
			break
		}
	}
	return n
}

// vfsWriteFile writes iovs to f.
func vfsWriteFile(t *kernel.Task, f *fs.FileDescription, iovs []iovec, o rwOptions) (uintptr, error) {
	if !f.Writable() {
		return 0, unix.EBADF
	}
	if err := fs.RemovePrivs(t, f); err != nil {
		return 0, err
	}
	if s := socket.FromFile(f); s != nil && !o.pos {
		return sockWrite(t, f, s, iovs, o.noWait)
	}
	total := iovTotal(iovs)
	if d, ok := f.Impl().(discardsWrites); ok && d.DiscardsWrites() {
		return uintptr(total), nil
	}
	if total > 0 && !f.Options().Stream {
		var err error
		if total, err = fsizeClamp(t, f, o, total); err != nil {
			return 0, err
		}
	}
	if direct(f, total) {
		return vfsWriteDirect(t, f, iovs, total, o)
	}
	bp := rwBufs.Get().(*[]byte)
	defer rwBufs.Put(bp)
	buf := *bp
	cur := iovCursor{iovs: iovs}
	var done uint64
	// A zero-length write still reaches the file (/dev/full fails it).
	for first := true; first || done < total; first = false {
		n, cerr := cur.copyIn(t, buf[:min(uint64(len(buf)), total-done)])
		var k int
		var err error
		if n > 0 || total == 0 {
			switch {
			case o.appendMode > 0:
				k, err = f.WriteAppend(t, buf[:n], !o.pos)
			case o.pos:
				k, err = f.PWrite(t, buf[:n], o.off+int64(done))
			case o.noWait:
				k, err = f.Write(t, buf[:n])
			default:
				k, err = fs.WriteBlocking(t, f, buf[:n])
			}
			done += uint64(k)
		}
		if err == unix.EPIPE {
			t.SendSignal(kernel.NewSignalInfo(kernel.Signal(unix.SIGPIPE), kernel.SI_USER))
		}
		if err != nil {
			return vfsPartial(done, vfsIOErr(err))
		}
		if cerr != nil {
			return vfsPartial(done, cerr)
		}
		if k < n {
			break
		}
	}
	return uintptr(done), nil
}

// fsizeClamp applies RLIMIT_FSIZE to a write of total bytes to a regular
// file: none at all (SIGXFSZ and EFBIG) from the limit on, fewer up to it.
func fsizeClamp(t *kernel.Task, f *fs.FileDescription, o rwOptions, total uint64) (uint64, error) {
	lim := t.ThreadGroup().Limits().Get(unix.RLIMIT_FSIZE).Cur
	if lim == unix.RLIM_INFINITY {
		return total, nil
	}
	st, err := f.Stat(t)
	if err != nil || !st.IsRegular() {
		return total, nil
	}
	pos := uint64(o.off)
	if !o.pos {
		pos = uint64(f.Offset())
		if f.Flags()&unix.O_APPEND != 0 {
			pos = uint64(st.Size)
		}
	}
	if pos >= lim {
		t.SendSignal(kernel.NewSignalInfo(kernel.SIGXFSZ, kernel.SI_USER))
		return 0, unix.EFBIG
	}
	return min(total, lim-pos), nil
}

// vfsPartial returns done if anything moved, else err.
func vfsPartial(done uint64, err error) (uintptr, error) {
	if done > 0 {
		return uintptr(done), nil
	}
	return 0, err
}

// vfsIOErr maps an interrupted wait to the restart code of read and
// write.
func vfsIOErr(err error) error {
	if err == syserror.ErrInterrupted {
		return syserror.ERESTARTSYS
	}
	return err
}

// single returns the one segment of read(2) and write(2), clamped.
func single(addr uintptr, count uint64) ([]iovec, error) {
	if count > maxRWCount {
		count = maxRWCount
	}
	if count > 0 && (addr >= arch.MaxUserAddress || uint64(addr)+count > arch.MaxUserAddress) {
		return nil, unix.EFAULT
	}
	return []iovec{{addr, count}}, nil
}

// Read implements read(2).
func Read(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	f, err := vfsIOFile(t, a[0].Int())
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	if !f.Readable() {
		return 0, unix.EBADF
	}
	iovs, err := single(a[1].Pointer(), a[2].Uint64())
	if err != nil {
		return 0, err
	}
	return vfsReadFile(t, f, iovs, rwOptions{})
}

// Write implements write(2).
func Write(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	f, err := vfsIOFile(t, a[0].Int())
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	if !f.Writable() {
		return 0, unix.EBADF
	}
	iovs, err := single(a[1].Pointer(), a[2].Uint64())
	if err != nil {
		return 0, err
	}
	return vfsWriteFile(t, f, iovs, rwOptions{})
}

// Pread64 implements pread64(2).
func Pread64(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return positional(t, a, false)
}

// Pwrite64 implements pwrite64(2).
func Pwrite64(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return positional(t, a, true)
}

// positional is pread64 and pwrite64.
func positional(t *kernel.Task, a arch.SyscallArguments, write bool) (uintptr, error) {
	off := a[3].Int64()
	if off < 0 {
		return 0, unix.EINVAL
	}
	f, err := vfsIOFile(t, a[0].Int())
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	if f.Options().Stream {
		return 0, unix.ESPIPE
	}
	if (write && !f.Writable()) || (!write && !f.Readable()) {
		return 0, unix.EBADF
	}
	count := a[2].Uint64()
	iovs, err := single(a[1].Pointer(), count)
	if err != nil {
		return 0, err
	}
	if rangeOverflows(off, count) {
		return 0, unix.EINVAL
	}
	o := rwOptions{pos: true, off: off}
	if write {
		return vfsWriteFile(t, f, iovs, o)
	}
	return vfsReadFile(t, f, iovs, o)
}

// rangeOverflows reports whether a positional transfer of count bytes at
// off runs past the largest file offset: Linux's rw_verify_area checks
// the whole request, before clamping it to MAX_RW_COUNT, and says EINVAL.
func rangeOverflows(off int64, count uint64) bool {
	return count > uint64(math.MaxInt64-off)
}

// vectored is readv, writev, preadv, pwritev, preadv2 and pwritev2. off
// -1 (or !pos) uses the file offset.
func vectored(t *kernel.Task, a arch.SyscallArguments, write, pos bool, off int64, flags uint32) (uintptr, error) {
	// RWF_NOAPPEND (Linux 6.9) is EOPNOTSUPP, as on the 6.1 kernel uname
	// reports: honouring it would take an offset write that bypasses
	// O_APPEND, which the file systems do not offer.
	const knownRWF = unix.RWF_HIPRI | unix.RWF_DSYNC | unix.RWF_SYNC | unix.RWF_NOWAIT | unix.RWF_APPEND
	if flags&^uint32(knownRWF) != 0 {
		return 0, unix.EOPNOTSUPP
	}
	if pos && off < 0 {
		if off != -1 {
			return 0, unix.EINVAL
		}
		pos = false
	}
	f, err := vfsIOFile(t, a[0].Int())
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	if pos && f.Options().Stream {
		return 0, unix.ESPIPE
	}
	if (write && !f.Writable()) || (!write && !f.Readable()) {
		return 0, unix.EBADF
	}
	iovs, err := copyInIovecs(t, a[1].Pointer(), a[2].Int())
	if err != nil {
		return 0, err
	}
	if pos && rangeOverflows(off, iovTotal(iovs)) {
		return 0, unix.EINVAL
	}
	o := rwOptions{pos: pos, off: off, noWait: flags&unix.RWF_NOWAIT != 0}
	if write && flags&unix.RWF_APPEND != 0 {
		o.appendMode = 1
	}
	if write {
		return vfsWriteFile(t, f, iovs, o)
	}
	return vfsReadFile(t, f, iovs, o)
}

// Readv implements readv(2).
func Readv(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return vectored(t, a, false, false, 0, 0)
}

// Writev implements writev(2).
func Writev(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return vectored(t, a, true, false, 0, 0)
}

// preadvOffset checks the offset of preadv and pwritev (EINVAL if
// negative).
func preadvOffset(a arch.SyscallArguments) (int64, error) {
	off := a[3].Int64()
	if off < 0 {
		return 0, unix.EINVAL
	}
	return off, nil
}

// Preadv implements preadv(2).
func Preadv(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	off, err := preadvOffset(a)
	if err != nil {
		return 0, err
	}
	return vectored(t, a, false, true, off, 0)
}

// Pwritev implements pwritev(2).
func Pwritev(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	off, err := preadvOffset(a)
	if err != nil {
		return 0, err
	}
	return vectored(t, a, true, true, off, 0)
}

// Preadv2 implements preadv2(2).
func Preadv2(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return vectored(t, a, false, true, a[3].Int64(), a[5].Uint())
}

// Pwritev2 implements pwritev2(2).
func Pwritev2(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return vectored(t, a, true, true, a[3].Int64(), a[5].Uint())
}

// Lseek implements lseek(2).
func Lseek(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	f, err := vfsIOFile(t, a[0].Int())
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	whence := a[2].Int()
	if whence < 0 || whence > unix.SEEK_HOLE {
		return 0, unix.EINVAL
	}
	off, err := f.Seek(t, a[1].Int64(), int(whence))
	return uintptr(off), err
}

// Sendfile implements sendfile(2): any readable file to any writable one
// through a Sentry buffer.
func Sendfile(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	outFD, inFD, offAddr, count := a[0].Int(), a[1].Int(), a[2].Pointer(), a[3].Uint64()
	in, err := vfsIOFile(t, inFD)
	if err != nil {
		return 0, err
	}
	defer in.DecRef()
	if !in.Readable() {
		return 0, unix.EBADF
	}
	o := rwOptions{}
	if offAddr != 0 {
		if in.Options().Stream {
			return 0, unix.ESPIPE
		}
		v, err := copyInUint64(t, offAddr)
		if err != nil {
			return 0, unix.EFAULT
		}
		if int64(v) < 0 {
			return 0, unix.EINVAL
		}
		o.pos, o.off = true, int64(v)
	}
	// rw_verify_area: a count negative as ssize_t.
	if int64(count) < 0 {
		return 0, unix.EINVAL
	}
	out, err := vfsIOFile(t, outFD)
	if err != nil {
		return 0, err
	}
	defer out.DecRef()
	if !out.Writable() {
		return 0, unix.EBADF
	}
	if out.Flags()&unix.O_APPEND != 0 {
		return 0, unix.EINVAL
	}
	if pipe.FromFile(out) == nil {
		// Linux's do_splice_direct: the input must be seekable (not a
		// socket or terminal; pipes are accepted, as since Linux 5.12)
		// and have splice reads (not a directory).
		if in.Options().Stream && pipe.FromFile(in) == nil {
			return 0, unix.EINVAL
		}
		if st, err := in.Stat(t); err == nil && st.IsDir() {
			return 0, unix.EINVAL
		}
	}
	count = min(count, maxRWCount)
	bp := rwBufs.Get().(*[]byte)
	defer rwBufs.Put(bp)
	buf := *bp
	var done uint64
	var ioErr error
	for done < count {
		n := min(uint64(len(buf)), count-done)
		var k int
		switch {
		case o.pos:
			k, err = in.PRead(t, buf[:n], o.off+int64(done))
		case done > 0:
			k, err = in.Read(t, buf[:n])
		default:
			k, err = fs.ReadBlocking(t, in, buf[:n])
		}
		if k == 0 {
			ioErr = err
			break
		}
		w, werr := fs.WriteBlocking(t, out, buf[:k])
		done += uint64(w)
		if werr == unix.EPIPE {
			t.SendSignal(kernel.NewSignalInfo(kernel.Signal(unix.SIGPIPE), kernel.SI_USER))
		}
		if w < k {
			if !o.pos && !in.Options().Stream {
				in.Seek(t, int64(w-k), unix.SEEK_CUR)
			}
			ioErr = werr
			break
		}
		if err != nil || uint64(k) < n {
			ioErr = err
			break
		}
	}
	if o.pos {
		if err := copyOutUint64(t, offAddr, uint64(o.off+int64(done))); err != nil {
			return 0, unix.EFAULT
		}
	}
	if done == 0 && ioErr != nil {
		return 0, vfsIOErr(ioErr)
	}
	return uintptr(done), nil
}

// copyOffset reads the optional offset argument of copy_file_range:
// nil when addr is 0 (the file's own offset moves).
func copyOffset(t *kernel.Task, addr uintptr) (*int64, error) {
	if addr == 0 {
		return nil, nil
	}
	v, err := copyInUint64(t, addr)
	if err != nil {
		return nil, unix.EFAULT
	}
	off := int64(v)
	return &off, nil
}

// CopyFileRange implements copy_file_range(2): between regular files of
// one file system, through a Sentry buffer; across file systems EXDEV
// (callers fall back to read and write, as with Linux's tmpfs).
func CopyFileRange(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	inFD, inOffAddr, outFD, outOffAddr, count, flags := a[0].Int(), a[1].Pointer(), a[2].Int(), a[3].Pointer(), a[4].Uint64(), a[5].Uint()
	in, err := vfsIOFile(t, inFD)
	if err != nil {
		return 0, err
	}
	defer in.DecRef()
	out, err := vfsIOFile(t, outFD)
	if err != nil {
		return 0, err
	}
	defer out.DecRef()
	inOff, err := copyOffset(t, inOffAddr)
	if err != nil {
		return 0, err
	}
	outOff, err := copyOffset(t, outOffAddr)
	if err != nil {
		return 0, err
	}
	if flags != 0 {
		return 0, unix.EINVAL
	}
	ist, err := in.Stat(t)
	if err != nil {
		return 0, err
	}
	ost, err := out.Stat(t)
	if err != nil {
		return 0, err
	}
	if ist.IsDir() || ost.IsDir() {
		return 0, unix.EISDIR
	}
	if !ist.IsRegular() || !ost.IsRegular() {
		return 0, unix.EINVAL
	}
	if !in.Readable() || !out.Writable() || out.Flags()&unix.O_APPEND != 0 {
		return 0, unix.EBADF
	}
	if in.Dentry().Filesystem() != out.Dentry().Filesystem() {
		return 0, unix.EXDEV
	}
	pin, pout := in.Offset(), out.Offset()
	if inOff != nil {
		pin = *inOff
	}
	if outOff != nil {
		pout = *outOff
	}
	if uint64(pin)+count < uint64(pin) || uint64(pout)+count < uint64(pout) {
		return 0, unix.EOVERFLOW
	}
	if pin < 0 || pout < 0 {
		return 0, unix.EINVAL
	}
	// Shorten the copy to the input's end.
	if pin >= ist.Size {
		count = 0
	} else {
		count = min(count, uint64(ist.Size-pin), maxRWCount)
	}
	if in.Dentry().Node() == out.Dentry().Node() && pout+int64(count) > pin && pout < pin+int64(count) {
		return 0, unix.EINVAL
	}
	if count == 0 {
		return 0, nil
	}
	if err := fs.RemovePrivs(t, out); err != nil {
		return 0, err
	}
	bp := rwBufs.Get().(*[]byte)
	defer rwBufs.Put(bp)
	buf := *bp
	var done uint64
	var ioErr error
	for done < count {
		n := min(uint64(len(buf)), count-done)
		k, rerr := in.PRead(t, buf[:n], pin+int64(done))
		if k == 0 {
			ioErr = rerr
			break
		}
		w, werr := out.PWrite(t, buf[:k], pout+int64(done))
		done += uint64(max(w, 0))
		if w < k {
			ioErr = werr
			break
		}
		if rerr != nil {
			ioErr = rerr
			break
		}
	}
	if done == 0 && ioErr != nil {
		return 0, vfsIOErr(ioErr)
	}
	// Move the offsets the caller did not give.
	if inOff == nil {
		in.Seek(t, pin+int64(done), unix.SEEK_SET)
	} else if err := copyOutUint64(t, inOffAddr, uint64(*inOff+int64(done))); err != nil {
		return 0, unix.EFAULT
	}
	if outOff == nil {
		out.Seek(t, pout+int64(done), unix.SEEK_SET)
	} else if err := copyOutUint64(t, outOffAddr, uint64(*outOff+int64(done))); err != nil {
		return 0, unix.EFAULT
	}
	return uintptr(done), nil
}

// Fadvise64 implements fadvise64(2): advice is checked and has no effect
// (file data lives in memory or behind the gofer's descriptor).
func Fadvise64(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	length, advice := a[2].Int64(), a[3].Int()
	f, err := vfsIOFile(t, a[0].Int())
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	st, err := f.Stat(t)
	if err != nil {
		return 0, err
	}
	if st.Type() == unix.S_IFIFO {
		return 0, unix.ESPIPE
	}
	if length < 0 || advice < unix.FADV_NORMAL || advice > unix.FADV_NOREUSE {
		return 0, unix.EINVAL
	}
	return 0, nil
}

// Readahead implements readahead(2): checked, then nothing to do.
func Readahead(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	f, err := vfsIOFile(t, a[0].Int())
	if err != nil {
		return 0, err
	}
	defer f.DecRef()
	if !f.Readable() {
		return 0, unix.EBADF
	}
	st, err := f.Stat(t)
	if err != nil {
		return 0, err
	}
	if !st.IsRegular() && st.Type() != unix.S_IFBLK {
		return 0, unix.EINVAL
	}
	return 0, nil
}
