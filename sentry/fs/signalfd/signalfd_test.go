package signalfd

import (
	"encoding/binary"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/syserror"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

func newTask(t *testing.T) (*kernel.Kernel, *kernel.Task) {
	t.Helper()
	k := kernel.NewTestKernel(nil)
	return k, k.NewTestTask(nil, nil, auth.NewRootCredentials())
}

func usr(s kernel.Signal) kernel.SignalSet { return kernel.SignalSetOf(s) }

func TestReadRecords(t *testing.T) {
	_, task := newTask(t)
	task.SetSignalMask(usr(kernel.SIGUSR1) | usr(kernel.Signal(kernel.SigRTMin)))
	fd, err := New(task, usr(kernel.SIGUSR1)|usr(kernel.Signal(kernel.SigRTMin))|usr(kernel.SIGKILL), SFD_NONBLOCK)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.DecRef()
	if m := FromFile(fd).Mask(); m&kernel.UnblockableSignals != 0 {
		t.Errorf("mask %#x keeps SIGKILL", m)
	}
	buf := make([]byte, 4*RecordSize)
	if _, err := fd.Read(task, buf[:RecordSize-1]); err != unix.EINVAL {
		t.Fatalf("short read = %v, want EINVAL", err)
	}
	if _, err := fd.Read(task, buf); err != syserror.ErrWouldBlock {
		t.Fatalf("empty read = %v, want would block", err)
	}
	e, ch := waiter.NewChannelEntry(waiter.EventIn)
	fd.EventRegister(e)
	defer fd.EventUnregister(e)

	info := kernel.NewSignalInfo(kernel.Signal(kernel.SigRTMin), kernel.SI_QUEUE)
	info.SetPIDUID(77, 1000)
	info.SetValue(31337)
	if err := task.SendSignal(info); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("no readiness event for a pending signal")
	}
	// Linux's signalfd_poll reports POLLIN alone, without POLLRDNORM.
	if r := fd.Readiness(waiter.EventIn | waiter.EventOut | waiter.EventRdNorm | waiter.EventWrNorm); r != waiter.EventIn {
		t.Fatalf("readiness %v, want EventIn", r)
	}
	task.SendSignal(kernel.NewSignalInfo(kernel.SIGUSR1, kernel.SI_USER))
	n, err := fd.Read(task, buf)
	if err != nil || n != 2*RecordSize {
		t.Fatalf("read = %d, %v; want two records", n, err)
	}
	le := binary.LittleEndian
	// Lowest signal first.
	if s := le.Uint32(buf[0:]); s != uint32(kernel.SIGUSR1) {
		t.Errorf("first record signo %d", s)
	}
	r := buf[RecordSize:]
	for _, c := range []struct {
		name string
		got  uint64
		want uint64
	}{
		{"ssi_signo", uint64(le.Uint32(r[0:])), uint64(kernel.Signal(kernel.SigRTMin))},
		{"ssi_code", uint64(le.Uint32(r[8:])), 0xffffffff},
		{"ssi_pid", uint64(le.Uint32(r[12:])), 77},
		{"ssi_uid", uint64(le.Uint32(r[16:])), 1000},
		{"ssi_int", uint64(le.Uint32(r[44:])), 31337},
		{"ssi_ptr", le.Uint64(r[48:]), 31337},
	} {
		if c.got&0xffffffff != c.want&0xffffffff {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	if fd.Readiness(waiter.EventIn) != 0 {
		t.Errorf("still readable after reading everything")
	}
}

func TestEncodeLayouts(t *testing.T) {
	le := binary.LittleEndian
	for _, tc := range []struct {
		name  string
		info  func() *kernel.SignalInfo
		check func(t *testing.T, b []byte)
	}{
		{"child exit", func() *kernel.SignalInfo {
			i := kernel.NewSignalInfo(kernel.SIGCHLD, kernel.CLD_EXITED)
			i.SetPIDUID(5, 6)
			i.SetStatus(3)
			i.SetTimes(7, 8)
			return i
		}, func(t *testing.T, b []byte) {
			if le.Uint32(b[12:]) != 5 || le.Uint32(b[16:]) != 6 || le.Uint32(b[40:]) != 3 || le.Uint64(b[56:]) != 7 || le.Uint64(b[64:]) != 8 {
				t.Errorf("record % x", b[:72])
			}
		}},
		{"timer", func() *kernel.SignalInfo {
			i := kernel.NewSignalInfo(kernel.SIGALRM, kernel.SI_TIMER)
			i.SetTimer(4, 2, 99)
			return i
		}, func(t *testing.T, b []byte) {
			if le.Uint32(b[24:]) != 4 || le.Uint32(b[32:]) != 2 || le.Uint32(b[44:]) != 99 || le.Uint64(b[48:]) != 99 || le.Uint32(b[12:]) != 0 {
				t.Errorf("record % x", b[:56])
			}
		}},
		{"fault", func() *kernel.SignalInfo {
			i := kernel.NewSignalInfo(kernel.SIGSEGV, 1)
			i.SetAddr(0xdead000)
			return i
		}, func(t *testing.T, b []byte) {
			if le.Uint64(b[72:]) != 0xdead000 || le.Uint32(b[12:]) != 0 {
				t.Errorf("record % x", b[:80])
			}
		}},
		{"kernel", func() *kernel.SignalInfo { return kernel.NewSignalInfo(kernel.SIGHUP, kernel.SI_KERNEL) },
			func(t *testing.T, b []byte) {
				if int32(le.Uint32(b[8:])) != kernel.SI_KERNEL {
					t.Errorf("code %d", int32(le.Uint32(b[8:])))
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := make([]byte, RecordSize)
			for i := range b {
				b[i] = 0xff
			}
			Encode(b, tc.info())
			if b[100] != 0 || b[127] != 0 {
				t.Errorf("padding not cleared")
			}
			tc.check(t, b)
		})
	}
}

func TestMaskUpdateFollowsCaller(t *testing.T) {
	k, parent := newTask(t)
	child := k.NewTestTask(parent, nil, auth.NewRootCredentials())
	both := usr(kernel.SIGUSR1) | usr(kernel.SIGUSR2)
	parent.SetSignalMask(both)
	child.SetSignalMask(both)
	fd, err := New(parent, usr(kernel.SIGUSR1), SFD_NONBLOCK)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.DecRef()
	e, ch := waiter.NewChannelEntry(waiter.EventIn)
	fd.EventRegister(e)
	defer fd.EventUnregister(e)
	parent.SendSignal(kernel.NewSignalInfo(kernel.SIGUSR2, kernel.SI_USER))
	if fd.Readiness(waiter.EventIn) != 0 {
		t.Fatal("readable for a signal outside the mask")
	}
	FromFile(fd).SetMask(parent, both)
	if fd.Readiness(waiter.EventIn) == 0 {
		t.Fatal("not readable after widening the mask")
	}
	// The child reads its own signals, not the parent's, and readiness
	// then follows it, waiters moving along.
	buf := make([]byte, RecordSize)
	if _, err := fd.Read(child, buf); err != syserror.ErrWouldBlock {
		t.Fatalf("child read = %v, want would block", err)
	}
	select {
	case <-ch:
	default:
	}
	child.SendSignal(kernel.NewSignalInfo(kernel.SIGUSR1, kernel.SI_USER))
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("waiter not moved to the child's queue")
	}
	if n, err := fd.Read(child, buf); n != RecordSize || err != nil {
		t.Fatalf("child read = %d, %v", n, err)
	}
	if parent.PendingSignals()&usr(kernel.SIGUSR2) == 0 {
		t.Fatal("the parent's signal was consumed by the child")
	}
}

var _ fs.FileImpl = (*File)(nil)

// FuzzEncode feeds Encode siginfos as rt_sigqueueinfo lets an application
// write them: any bytes, any code. The record must keep signo, errno and
// code and leave the padding zero.
func FuzzEncode(f *testing.F) {
	f.Add(make([]byte, 128))
	seed := make([]byte, 128)
	binary.LittleEndian.PutUint32(seed[0:], uint32(kernel.SIGCHLD))
	binary.LittleEndian.PutUint32(seed[8:], kernel.CLD_EXITED)
	f.Add(seed)
	f.Fuzz(func(t *testing.T, raw []byte) {
		var info kernel.SignalInfo
		copy(info.Raw[:], raw)
		b := make([]byte, RecordSize)
		Encode(b, &info)
		if string(b[:12]) != string(info.Raw[:12]) {
			t.Fatalf("header % x, want % x", b[:12], info.Raw[:12])
		}
		for i := 100; i < RecordSize; i++ {
			if b[i] != 0 {
				t.Fatalf("padding byte %d = %#x", i, b[i])
			}
		}
	})
}
