// Package signalfd implements signalfd(2) files: reading one dequeues
// signals of its mask pending for the reading thread, as 128-byte
// signalfd_siginfo records, instead of them being delivered.
//
// A signalfd belongs to no task: like Linux's, it reads the pending
// signals of whoever reads it. Readiness (poll, epoll) has no caller to
// ask, so it follows the thread that last created, updated or read the
// file, and waits on that thread's process's signal queue
// (kernel.Task.SignalEvents), which the kernel notifies whenever a
// signal becomes pending there.
//
// Locks: File.mu guards the mask, the thread followed and the waiter
// registrations; it is never held while calling into the kernel's
// signal state (Kernel.mu).
package signalfd

import (
	"encoding/binary"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel"
	"github.com/moat-sandbox/moat/sentry/syserror"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

// Flags of signalfd4.
const (
	SFD_CLOEXEC  = unix.SFD_CLOEXEC
	SFD_NONBLOCK = unix.SFD_NONBLOCK
)

// RecordSize is sizeof(struct signalfd_siginfo).
const RecordSize = 128

// File is a signalfd.
type File struct {
	fs.FileDefaults

	mu     sync.Mutex
	mask   kernel.SignalSet
	target *kernel.Task
	// entries maps each registered waiter to the queue it is on: the
	// followed thread may change between register and unregister.
	entries map[*waiter.Entry]*waiter.Queue
}

// New returns a signalfd for mask (SIGKILL and SIGSTOP are dropped from
// it), followed by t. flags may hold SFD_NONBLOCK and SFD_CLOEXEC (the
// caller applies the last); others are EINVAL.
func New(t *kernel.Task, mask kernel.SignalSet, flags uint32) (*fs.FileDescription, error) {
	if flags&^uint32(SFD_CLOEXEC|SFD_NONBLOCK) != 0 {
		return nil, unix.EINVAL
	}
	f := &File{mask: mask &^ kernel.UnblockableSignals, target: t, entries: make(map[*waiter.Entry]*waiter.Queue)}
	return fs.NewAnonFile("signalfd", f, unix.O_RDWR|flags&unix.O_NONBLOCK, fs.FDOptions{ImplOffset: true}), nil
}

// FromFile returns the signalfd of fd, or nil if fd is not one.
func FromFile(fd *fs.FileDescription) *File {
	f, _ := fd.Impl().(*File)
	return f
}

// Mask returns the signals the file reads.
func (f *File) Mask() kernel.SignalSet {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mask
}

// SetMask replaces the mask (signalfd on an existing descriptor), called
// by t, and wakes waiters so they look again.
func (f *File) SetMask(t *kernel.Task, mask kernel.SignalSet) {
	f.mu.Lock()
	f.mask = mask &^ kernel.UnblockableSignals
	f.mu.Unlock()
	f.follow(t)
	t.SignalEvents().Notify(waiter.EventIn)
}

// follow makes t the thread whose pending signals readiness reports,
// moving registered waiters to its process's queue.
func (f *File) follow(t *kernel.Task) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.target == t {
		return
	}
	f.target = t
	q := t.SignalEvents()
	for e, old := range f.entries {
		if old != q {
			old.EventUnregister(e)
			q.EventRegister(e)
			f.entries[e] = q
		}
	}
}

// Read implements fs.FileImpl: as many signalfd_siginfo records as fit
// (EINVAL if not one), dequeued from the reading thread's pending
// signals; it would block if none of the mask is pending.
func (f *File) Read(ctx fs.Context, _ *fs.FileDescription, dst []byte, off int64) (int, error) {
	if off >= 0 {
		return 0, unix.ESPIPE
	}
	if len(dst) < RecordSize {
		return 0, unix.EINVAL
	}
	t, ok := ctx.(*kernel.Task)
	if !ok {
		return 0, unix.EINVAL
	}
	f.follow(t)
	mask := f.Mask()
	n := 0
	for n+RecordSize <= len(dst) {
		info := t.DequeueSignalIn(mask)
		if info == nil {
			break
		}
		Encode(dst[n:n+RecordSize], info)
		n += RecordSize
	}
	if n == 0 {
		return 0, syserror.ErrWouldBlock
	}
	return n, nil
}

// Readiness implements waiter.Waitable: readable while a signal of the
// mask is pending for the followed thread.
func (f *File) Readiness(mask waiter.EventMask) waiter.EventMask {
	f.mu.Lock()
	t, set := f.target, f.mask
	f.mu.Unlock()
	if t != nil && t.PendingIn(set) {
		return mask & waiter.EventIn // POLLIN alone, as signalfd_poll
	}
	return 0
}

// EventRegister implements waiter.Waitable.
func (f *File) EventRegister(e *waiter.Entry) {
	f.mu.Lock()
	defer f.mu.Unlock()
	q := f.target.SignalEvents()
	q.EventRegister(e)
	f.entries[e] = q
}

// EventUnregister implements waiter.Waitable.
func (f *File) EventUnregister(e *waiter.Entry) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if q, ok := f.entries[e]; ok {
		q.EventUnregister(e)
		delete(f.entries, e)
	}
}

// siginfo layouts (Linux's siginfo_layout).
const (
	silKill = iota
	silTimer
	silPoll
	silFault
	silChld
	silRT
	silSys
)

// codeLayouts are the signals with codes of their own: how many, and the
// layout they use (Linux's sig_sicodes).
var codeLayouts = map[kernel.Signal]struct {
	max    int32
	layout int
}{
	kernel.SIGILL:  {11, silFault},
	kernel.SIGFPE:  {15, silFault},
	kernel.SIGSEGV: {10, silFault},
	kernel.SIGBUS:  {5, silFault},
	kernel.SIGTRAP: {6, silFault},
	kernel.SIGCHLD: {6, silChld},
	kernel.SIGIO:   {6, silPoll},
	kernel.SIGSYS:  {2, silSys},
}

// layout returns which union member of siginfo signo and code use.
func layout(signo kernel.Signal, code int32) int {
	if code > kernel.SI_USER && code < kernel.SI_KERNEL {
		// Kernel codes: per signal, up to the number it defines.
		if l, ok := codeLayouts[signo]; ok && code <= l.max {
			return l.layout
		}
		if code <= 6 { // NSIGPOLL
			return silPoll
		}
		return silKill
	}
	switch {
	case code == kernel.SI_TIMER:
		return silTimer
	case code == -5: // SI_SIGIO
		return silPoll
	case code < 0:
		return silRT
	}
	return silKill
}

// Encode writes info as a struct signalfd_siginfo in b (RecordSize bytes),
// with the fields Linux's signalfd_copyinfo fills for its layout.
func Encode(b []byte, info *kernel.SignalInfo) {
	clear(b[:RecordSize])
	r := info.Raw[:]
	le := binary.LittleEndian
	copy(b[0:12], r[0:12]) // ssi_signo, ssi_errno, ssi_code
	switch layout(info.Signo(), info.Code()) {
	case silKill:
		copy(b[12:20], r[16:24]) // ssi_pid, ssi_uid
	case silTimer:
		le.PutUint32(b[24:], le.Uint32(r[16:])) // ssi_tid
		le.PutUint32(b[32:], le.Uint32(r[20:])) // ssi_overrun
		le.PutUint64(b[48:], le.Uint64(r[24:])) // ssi_ptr
		le.PutUint32(b[44:], le.Uint32(r[24:])) // ssi_int
	case silPoll:
		le.PutUint32(b[28:], uint32(le.Uint64(r[16:]))) // ssi_band
		le.PutUint32(b[20:], le.Uint32(r[24:]))         // ssi_fd
	case silFault:
		le.PutUint64(b[72:], le.Uint64(r[16:])) // ssi_addr
		if info.Signo() == kernel.SIGBUS && (info.Code() == 4 || info.Code() == 5) {
			le.PutUint16(b[80:], le.Uint16(r[24:])) // ssi_addr_lsb (BUS_MCEERR_*)
		}
	case silChld:
		copy(b[12:20], r[16:24])                // ssi_pid, ssi_uid
		le.PutUint32(b[40:], le.Uint32(r[24:])) // ssi_status
		le.PutUint64(b[56:], le.Uint64(r[32:])) // ssi_utime
		le.PutUint64(b[64:], le.Uint64(r[40:])) // ssi_stime
	case silRT:
		copy(b[12:20], r[16:24])                // ssi_pid, ssi_uid
		le.PutUint64(b[48:], le.Uint64(r[24:])) // ssi_ptr
		le.PutUint32(b[44:], le.Uint32(r[24:])) // ssi_int
	case silSys:
		le.PutUint64(b[88:], le.Uint64(r[16:])) // ssi_call_addr
		le.PutUint32(b[84:], le.Uint32(r[24:])) // ssi_syscall
		le.PutUint32(b[96:], le.Uint32(r[28:])) // ssi_arch
	}
}

// The file has no offset, but as on Linux (noop_llseek) lseek succeeds
// and reports 0, while pread and pwrite fail with ESPIPE: the description
// keeps the offset itself (ImplOffset), so plain reads and writes come
// with offset -1 and positioned ones with their offset.

// Seek implements fs.FileImpl: always 0.
func (f *File) Seek(fs.Context, *fs.FileDescription, int64, int64, int) (int64, error) {
	return 0, nil
}

// Write implements fs.FileImpl: EINVAL (ESPIPE for pwrite).
func (f *File) Write(_ fs.Context, _ *fs.FileDescription, _ []byte, off int64) (int, error) {
	if off >= 0 {
		return 0, unix.ESPIPE
	}
	return 0, unix.EINVAL
}
