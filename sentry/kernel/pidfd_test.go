package kernel

import (
	"errors"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/mm"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

func TestOpenPIDFD(t *testing.T) {
	k, mf := newNSTestKernel(t)
	init := k.NewTestTask(nil, mm.New(fakePlatform{}, mf), auth.NewRootCredentials())
	child := k.NewTestTask(init, mm.New(fakePlatform{}, mf), auth.NewRootCredentials())
	for _, tc := range []struct {
		name  string
		pid   int32
		flags uint32
		want  error
	}{
		{"self", 1, 0, nil},
		{"child nonblock", int32(child.tid), PIDFD_NONBLOCK, nil},
		{"thread flag", 1, PIDFD_THREAD, nil},
		{"zero pid", 0, 0, unix.EINVAL},
		{"negative pid", -1, 0, unix.EINVAL},
		{"unknown flag", 1, 1, unix.EINVAL},
		{"cloexec is no flag", 1, unix.O_CLOEXEC, unix.EINVAL},
		{"missing", 4000, 0, unix.ESRCH},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := init.OpenPIDFD(tc.pid, tc.flags)
			if !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) {
				t.Fatalf("OpenPIDFD(%d, %#x) = %v, want %v", tc.pid, tc.flags, err, tc.want)
			}
			if err != nil {
				return
			}
			defer f.DecRef()
			p := PIDFDOf(f)
			if p == nil {
				t.Fatal("not a pidfd")
			}
			if got := f.Flags() & unix.O_NONBLOCK; got != tc.flags&PIDFD_NONBLOCK {
				t.Errorf("O_NONBLOCK %#x", got)
			}
			if p.Thread() != (tc.flags&PIDFD_THREAD != 0) {
				t.Errorf("Thread() = %v", p.Thread())
			}
			want := "Pid:\t" + itoa(tc.pid) + "\nNSpid:\t" + itoa(tc.pid) + "\n"
			if got := p.FDInfo(); got != want {
				t.Errorf("FDInfo = %q, want %q", got, want)
			}
		})
	}
}

func itoa(v int32) string {
	var b [12]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			return string(b[i:])
		}
	}
}

func TestPIDFDReadinessFollowsExit(t *testing.T) {
	k, mf := newNSTestKernel(t)
	init := k.NewTestTask(nil, mm.New(fakePlatform{}, mf), auth.NewRootCredentials())
	child := k.NewTestTask(init, mm.New(fakePlatform{}, mf), auth.NewRootCredentials())
	f, err := init.OpenPIDFD(int32(child.tid), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.DecRef()
	p := PIDFDOf(f)
	e, ch := waiter.NewChannelEntry(waiter.EventIn)
	p.EventRegister(e)
	defer p.EventUnregister(e)
	all := waiter.EventIn | waiter.EventRdNorm | waiter.EventOut
	if got := p.Readiness(all); got != 0 {
		t.Fatalf("live process: readiness %#x", got)
	}
	k.mu.Lock()
	child.exitState = taskDead
	delete(child.tg.tasks, child)
	child.tg.exited = true
	k.mu.Unlock()
	child.tg.notifyPIDFDs()
	select {
	case <-ch:
	default:
		t.Fatal("exit did not wake the pidfd's waiter")
	}
	if got := p.Readiness(all); got != waiter.EventIn|waiter.EventRdNorm {
		t.Fatalf("zombie: readiness %#x", got)
	}
	// Signals to a zombie succeed (and are dropped).
	if err := init.PIDFDSendSignal(p, SIGTERM, nil, 0); err != nil {
		t.Fatalf("signal to zombie: %v", err)
	}
	hup, hupCh := waiter.NewChannelEntry(waiter.EventHUp)
	p.EventRegister(hup)
	defer p.EventUnregister(hup)
	k.mu.Lock()
	k.reapLocked(child.tg)
	k.mu.Unlock()
	select {
	case <-hupCh:
	case <-time.After(5 * time.Second):
		t.Fatal("reaping did not wake a POLLHUP waiter")
	}
	if got := p.Readiness(waiter.EventIn); got != waiter.EventIn|waiter.EventHUp {
		t.Fatalf("reaped: readiness %#x", got)
	}
	if got := p.FDInfo(); got != "Pid:\t-1\nNSpid:\t-1\n" {
		t.Errorf("reaped: FDInfo %q", got)
	}
	if err := init.PIDFDSendSignal(p, SIGTERM, nil, 0); err != unix.ESRCH {
		t.Errorf("signal to reaped: %v, want ESRCH", err)
	}
	// ESRCH comes before a bad signal's EINVAL, as on Linux.
	if err := init.PIDFDSendSignal(p, 65, nil, 0); err != unix.ESRCH {
		t.Errorf("bad signal to reaped: %v, want ESRCH", err)
	}
	if _, err := init.PIDFDGetFD(p, 0); err != unix.ESRCH {
		t.Errorf("getfd of reaped: %v, want ESRCH", err)
	}
}

func TestPIDFDSendSignalChecks(t *testing.T) {
	k, mf := newNSTestKernel(t)
	init := k.NewTestTask(nil, mm.New(fakePlatform{}, mf), auth.NewRootCredentials())
	child := k.NewTestTask(init, mm.New(fakePlatform{}, mf), auth.NewRootCredentials())
	user := auth.NewRootCredentials()
	user.RealUID, user.EffectiveUID, user.SavedUID = 1000, 1000, 1000
	user.EffectiveCaps = 0
	other := k.NewTestTask(init, mm.New(fakePlatform{}, mf), user)
	// Test tasks never run: SIGUSR1 stays pending, blocked.
	child.sigMask = SignalSetOf(SIGUSR1)
	open := func(tk *Task, flags uint32) *PIDFD {
		t.Helper()
		f, err := init.OpenPIDFD(int32(tk.tid), flags)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(f.DecRef)
		return PIDFDOf(f)
	}
	forged := func(s Signal, code int32) *SignalInfo { return NewSignalInfo(s, code) }
	for _, tc := range []struct {
		name   string
		sender *Task
		target *PIDFD
		sig    Signal
		info   *SignalInfo
		flags  uint32
		want   error
	}{
		{"probe", init, open(child, 0), 0, nil, 0, nil},
		{"unknown flag", init, open(child, 0), 0, nil, 8, unix.EINVAL},
		{"two scopes", init, open(child, 0), 0, nil, PIDFD_SIGNAL_THREAD | PIDFD_SIGNAL_THREAD_GROUP, unix.EINVAL},
		{"bad signal", init, open(child, 0), 65, nil, 0, unix.EINVAL},
		{"signo mismatch", init, open(child, 0), SIGUSR1, forged(SIGUSR2, SI_QUEUE), 0, unix.EINVAL},
		{"queue code to other", init, open(child, 0), SIGUSR1, forged(SIGUSR1, SI_QUEUE), 0, nil},
		{"forged code to other", init, open(child, 0), SIGUSR1, forged(SIGUSR1, 5), 0, unix.EPERM},
		{"tkill code to other", init, open(child, 0), SIGUSR1, forged(SIGUSR1, SI_TKILL), 0, unix.EPERM},
		{"no group of that id", init, open(child, 0), 0, nil, PIDFD_SIGNAL_PROCESS_GROUP, unix.ESRCH},
		{"thread scope", init, open(child, 0), 0, nil, PIDFD_SIGNAL_THREAD, nil},
		{"other user", other, open(child, 0), SIGKILL, nil, 0, unix.EPERM},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.sender.PIDFDSendSignal(tc.target, tc.sig, tc.info, tc.flags); err != tc.want {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := other.PIDFDGetFD(open(child, 0), 0); err != unix.EPERM {
		t.Errorf("getfd across users: %v, want EPERM", err)
	}
	if !strings.HasPrefix(open(other, 0).FDInfo(), "Pid:\t") {
		t.Error("fdinfo")
	}
}
