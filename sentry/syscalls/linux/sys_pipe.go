package linux

import (
	"encoding/binary"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/pipe"
	"github.com/moat-sandbox/moat/sentry/kernel"
	"github.com/moat-sandbox/moat/sentry/syserror"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

func pipe2(t *kernel.Task, addr uintptr, flags uint32) (uintptr, error) {
	if flags&^uint32(unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_DIRECT|oNotificationPipe) != 0 {
		return 0, unix.EINVAL
	}
	if flags&oNotificationPipe != 0 {
		return 0, unix.ENOPKG
	}
	r, w := pipe.NewPair(t, flags)
	defer r.DecRef()
	defer w.DecRef()
	fds, err := t.FDTable().NewFDs(0, []*fs.FileDescription{r, w}, fs.FDFlags{CloseOnExec: flags&unix.O_CLOEXEC != 0}, vfsNoFile(t))
	if err != nil {
		return 0, err
	}
	var b [8]byte
	binary.LittleEndian.PutUint32(b[0:], uint32(fds[0]))
	binary.LittleEndian.PutUint32(b[4:], uint32(fds[1]))
	if _, err := t.CopyOutBytes(addr, b[:]); err != nil {
		t.FDTable().Remove(fds[0])
		t.FDTable().Remove(fds[1])
		return 0, unix.EFAULT
	}
	return 0, nil
}

// Pipe implements pipe(2).
func Pipe(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return pipe2(t, a[0].Pointer(), 0)
}

// Pipe2 implements pipe2(2).
func Pipe2(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return pipe2(t, a[0].Pointer(), a[1].Uint())
}

// oNotificationPipe is O_NOTIFICATION_PIPE (O_EXCL), for watch queues.
const oNotificationPipe = unix.O_EXCL

// Flags of splice(2), vmsplice(2) and tee(2).
const (
	spliceFNonblock = 2
	spliceFAll      = 1 | 2 | 4 | 8 // MOVE, NONBLOCK, MORE, GIFT
)

// waitFile blocks until f reports an event in mask (or an error or
// hang-up), or the task is interrupted.
func waitFile(t *kernel.Task, f *fs.FileDescription, mask waiter.EventMask) error {
	_, err := fs.Poll(t, []fs.PollItem{{File: f, Events: mask}}, time.Time{}, false)
	return err
}

// transferPipes is splice and tee between two pipes.
func transferPipes(t *kernel.Task, in, out *fs.FileDescription, n int, nonblock, tee bool) (uintptr, error) {
	src, dst := pipe.FromFile(in), pipe.FromFile(out)
	if src == dst {
		return 0, unix.EINVAL
	}
	for {
		k, srcBlocked, err := pipe.Transfer(dst, src, n, tee)
		if err == unix.EPIPE {
			t.SendSignal(kernel.NewSignalInfo(kernel.Signal(unix.SIGPIPE), kernel.SI_USER))
		}
		if err != syserror.ErrWouldBlock {
			return uintptr(k), err
		}
		if nonblock || (srcBlocked && in.NonBlocking()) || (!srcBlocked && out.NonBlocking()) {
			return 0, syserror.ErrWouldBlock
		}
		w, mask := out, waiter.EventOut
		if srcBlocked {
			w, mask = in, waiter.EventIn
		}
		if err := waitFile(t, w, mask); err != nil {
			return 0, vfsIOErr(err)
		}
	}
}

// copyInOffset reads a loff_t argument.
func copyInOffset(t *kernel.Task, addr uintptr) (int64, error) {
	v, err := copyInUint64(t, addr)
	if err != nil {
		return 0, unix.EFAULT
	}
	return int64(v), nil
}

// Splice implements splice(2).
func Splice(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	inFD, inOffAddr, outFD, outOffAddr, n, flags := a[0].Int(), a[1].Pointer(), a[2].Int(), a[3].Pointer(), a[4].Uint64(), a[5].Uint()
	if flags&^spliceFAll != 0 {
		return 0, unix.EINVAL
	}
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
	if !in.Readable() || !out.Writable() {
		return 0, unix.EBADF
	}
	inPipe, outPipe := pipe.FromFile(in) != nil, pipe.FromFile(out) != nil
	if !inPipe && !outPipe {
		return 0, unix.EINVAL
	}
	if (inPipe && inOffAddr != 0) || (outPipe && outOffAddr != 0) {
		return 0, unix.ESPIPE
	}
	if out.Flags()&unix.O_APPEND != 0 {
		return 0, unix.EINVAL
	}
	if n == 0 {
		return 0, nil
	}
	n = min(n, maxRWCount)
	nonblock := flags&spliceFNonblock != 0
	if inPipe && outPipe {
		return transferPipes(t, in, out, int(n), nonblock, false)
	}
	// One side is a file: move one buffer's worth through the Sentry.
	o := rwOptions{noWait: nonblock}
	offAddr, f := inOffAddr, in
	if outPipe {
		// File to pipe: read no more than the pipe can take now.
		for pipe.FromFile(out).Room() == 0 {
			if nonblock || out.NonBlocking() {
				return 0, syserror.ErrWouldBlock
			}
			if err := waitFile(t, out, waiter.EventOut); err != nil {
				return 0, vfsIOErr(err)
			}
		}
		n = min(n, uint64(pipe.FromFile(out).Room()))
	} else {
		offAddr, f = outOffAddr, out
	}
	if offAddr != 0 {
		// A file without positioned I/O (a socket): EINVAL, as do_splice
		// says for a missing FMODE_PREAD/FMODE_PWRITE (pipes said ESPIPE
		// above).
		if f.Options().Stream {
			return 0, unix.EINVAL
		}
		off, err := copyInOffset(t, offAddr)
		if err != nil {
			return 0, err
		}
		if off < 0 {
			return 0, unix.EINVAL
		}
		o.pos, o.off = true, off
	}
	moved, err := spliceThrough(t, in, out, int(min(n, rwChunk)), outPipe, o)
	if err != nil {
		return 0, err
	}
	if offAddr != 0 {
		if err := copyOutUint64(t, offAddr, uint64(o.off+int64(moved))); err != nil {
			return 0, unix.EFAULT
		}
	}
	return uintptr(moved), nil
}

// spliceThrough moves up to n bytes from in to out through a Sentry
// buffer; o (position, non-blocking) applies to the side that is not a
// pipe (the reading side if toPipe).
func spliceThrough(t *kernel.Task, in, out *fs.FileDescription, n int, toPipe bool, o rwOptions) (int, error) {
	buf := make([]byte, n)
	var k int
	var err error
	switch {
	case toPipe && o.pos:
		k, err = in.PRead(t, buf, o.off)
	case o.noWait:
		k, err = in.Read(t, buf)
	default:
		k, err = fs.ReadBlocking(t, in, buf)
	}
	if err != nil || k == 0 {
		return 0, vfsIOErr(err)
	}
	var w int
	switch {
	case !toPipe && o.pos:
		w, err = out.PWrite(t, buf[:k], o.off)
	case o.noWait:
		w, err = out.Write(t, buf[:k])
	default:
		w, err = fs.WriteBlocking(t, out, buf[:k])
	}
	if err == unix.EPIPE {
		t.SendSignal(kernel.NewSignalInfo(kernel.Signal(unix.SIGPIPE), kernel.SI_USER))
	}
	if w < k && toPipe && !o.pos && !in.Options().Stream {
		// Give back what the pipe did not take.
		in.Seek(t, int64(w-k), unix.SEEK_CUR)
	}
	if w == 0 && err != nil {
		return 0, vfsIOErr(err)
	}
	return w, nil
}

// Tee implements tee(2).
func Tee(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	inFD, outFD, n, flags := a[0].Int(), a[1].Int(), a[2].Uint64(), a[3].Uint()
	if flags&^spliceFAll != 0 {
		return 0, unix.EINVAL
	}
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
	if !in.Readable() || !out.Writable() {
		return 0, unix.EBADF
	}
	if pipe.FromFile(in) == nil || pipe.FromFile(out) == nil {
		return 0, unix.EINVAL
	}
	if n == 0 {
		return 0, nil
	}
	return transferPipes(t, in, out, int(min(n, maxRWCount)), flags&spliceFNonblock != 0, true)
}
