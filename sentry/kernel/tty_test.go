package kernel

import (
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/dev"
	"github.com/moat-sandbox/moat/sentry/fs/devpts"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/platform"
	"github.com/moat-sandbox/moat/sentry/syserror"
)

// idleContext is the platform context of a task that never runs: an
// interrupt (a signal it does not block) has nothing to stop.
type idleContext struct{ platform.Context }

func (idleContext) Interrupt() {}

// newTTYTask adds a process (a child of parent, or a new session leader).
func newTTYTask(k *Kernel, parent *Task) *Task {
	t := k.NewTestTask(parent, nil, auth.NewRootCredentials())
	t.pctx = idleContext{}
	return t
}

// ttyEnv is a kernel with a session leader, a child in its session, and
// a pseudo-terminal whose master is opened by a context outside the
// kernel (as a terminal emulator would be).
type ttyEnv struct {
	t      *testing.T
	k      *Kernel
	leader *Task
	master *fs.FileDescription
	tty    *devpts.Terminal
	root   fs.VirtualDentry
}

func newTTYEnv(t *testing.T) *ttyEnv {
	t.Helper()
	k := NewTestKernel(nil)
	leader := newTTYTask(k, nil)
	devFS, _, _ := dev.NewWithOptions(dev.Options{})
	root := fs.NewMountNamespace(devFS, fs.MountFlags{}).Root()
	ctx := fstest.NewContext()
	m, err := fs.Open(ctx, fs.Lookup{Root: root, Start: root, Path: "/ptmx"}, fs.OpenOptions{Flags: unix.O_RDWR | unix.O_NOCTTY})
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint32(ctx.Mem, 0)
	if _, err := m.Ioctl(ctx, unix.TIOCSPTLCK, fstest.MemBase); err != nil {
		t.Fatal(err)
	}
	return &ttyEnv{t: t, k: k, leader: leader, master: m, tty: devpts.TerminalOf(m), root: root}
}

// blocked makes the group's signals queue instead of being dropped (the
// first process is the namespace's init).
func blockAll(ts ...*Task) {
	for _, t := range ts {
		t.SetSignalMask(^SignalSet(0))
	}
}

func pendingHas(t *Task, s Signal) bool { return t.PendingSignals()&SignalSetOf(s) != 0 }

func TestControllingTTYAcquireAndRules(t *testing.T) {
	e := newTTYEnv(t)
	defer e.master.DecRef()
	child := newTTYTask(e.k, e.leader)
	if _, err := child.OpenControllingTTY(fs.VirtualDentry{}, unix.O_RDWR); err != unix.ENXIO {
		t.Fatalf("/dev/tty without a terminal = %v, want ENXIO", err)
	}
	if err := child.SetControllingTTY(e.tty, false, true); err != unix.EPERM {
		t.Fatalf("TIOCSCTTY by a non-leader = %v, want EPERM", err)
	}
	if err := e.leader.SetControllingTTY(e.tty, false, false); err != nil {
		// Root has CAP_SYS_ADMIN, so a write-only description is enough.
		t.Fatalf("TIOCSCTTY = %v", err)
	}
	if e.tty.Session() != int32(e.leader.tg.id) || e.tty.ForegroundPgrp() != int32(e.leader.tg.id) {
		t.Fatalf("terminal session %d pgrp %d", e.tty.Session(), e.tty.ForegroundPgrp())
	}
	if err := e.leader.SetControllingTTY(e.tty, false, true); err != nil {
		t.Fatalf("TIOCSCTTY again = %v, want success", err)
	}
	// A child forked now inherits it; /dev/tty opens the slave.
	c2 := newTTYTask(e.k, e.leader)
	if !c2.IsControllingTTY(e.tty) {
		t.Fatal("child did not inherit the controlling terminal")
	}
	f, err := c2.OpenControllingTTY(e.root, unix.O_RDWR)
	if err != nil {
		t.Fatalf("/dev/tty: %v", err)
	}
	if devpts.TerminalOf(f) != e.tty {
		t.Fatal("/dev/tty opened another terminal")
	}
	f.DecRef()
	// setsid drops it.
	if _, err := c2.tg.SetSID(); err != nil {
		t.Fatal(err)
	}
	if c2.ControllingTTY() != nil {
		t.Fatal("setsid kept the controlling terminal")
	}
	// Another session's leader cannot take it, even on open, without
	// stealing (CAP_SYS_ADMIN).
	c2.AcquireTTYOnOpen(e.tty)
	if c2.ControllingTTY() != nil {
		t.Fatal("acquired a terminal that controls another session")
	}
	if err := c2.SetControllingTTY(e.tty, false, true); err != unix.EPERM {
		t.Fatalf("TIOCSCTTY of a bound terminal = %v, want EPERM", err)
	}
	user := auth.NewRootCredentials()
	user.EffectiveCaps = 0
	c2.SetCredentials(user)
	if err := c2.SetControllingTTY(e.tty, true, true); err != unix.EPERM {
		t.Fatalf("steal without CAP_SYS_ADMIN = %v, want EPERM", err)
	}
	c2.SetCredentials(auth.NewRootCredentials())
	if err := c2.SetControllingTTY(e.tty, true, true); err != nil {
		t.Fatalf("steal = %v", err)
	}
	if e.leader.ControllingTTY() != nil || child.ControllingTTY() != nil {
		t.Fatal("the old session kept the stolen terminal")
	}
	if e.tty.Session() != int32(c2.tg.id) {
		t.Fatalf("terminal session %d, want %d", e.tty.Session(), c2.tg.id)
	}
	// TIOCNOTTY by the leader: its foreground group gets SIGHUP and
	// SIGCONT, and the terminal is free.
	blockAll(c2)
	if err := e.leader.ReleaseControllingTTY(e.tty); err != unix.ENOTTY {
		t.Fatalf("TIOCNOTTY of another's terminal = %v, want ENOTTY", err)
	}
	if err := c2.ReleaseControllingTTY(e.tty); err != nil {
		t.Fatal(err)
	}
	if !pendingHas(c2, SIGHUP) || e.tty.Session() != 0 {
		t.Fatalf("after TIOCNOTTY: SIGHUP pending %v, session %d", pendingHas(c2, SIGHUP), e.tty.Session())
	}
}

func TestForegroundAndBackgroundAccess(t *testing.T) {
	e := newTTYEnv(t)
	defer e.master.DecRef()
	if err := e.leader.SetControllingTTY(e.tty, false, true); err != nil {
		t.Fatal(err)
	}
	child := newTTYTask(e.k, e.leader)
	blockAll(e.leader)
	// The child moves to its own process group: the background.
	if err := child.tg.SetPGID(child.tg, 0); err != nil {
		t.Fatal(err)
	}
	if err := child.CheckTTYAccess(e.tty, unix.SIGTTIN); err != syserror.ERESTARTSYS {
		t.Fatalf("background read = %v, want ERESTARTSYS", err)
	}
	child.SetSignalMask(SignalSetOf(SIGTTIN) | SignalSetOf(SIGTTOU))
	if !pendingHas(child, SIGTTIN) {
		t.Fatal("no SIGTTIN for a background read")
	}
	if err := child.CheckTTYAccess(e.tty, unix.SIGTTIN); err != unix.EIO {
		t.Fatalf("background read with SIGTTIN blocked = %v, want EIO", err)
	}
	if err := child.CheckTTYAccess(e.tty, unix.SIGTTOU); err != nil {
		t.Fatalf("background write with SIGTTOU blocked = %v, want success", err)
	}
	// TIOCSPGRP rules.
	if err := child.SetForegroundProcessGroup(e.tty, 12345); err != unix.ESRCH {
		t.Fatalf("TIOCSPGRP of no group = %v, want ESRCH", err)
	}
	other := newTTYTask(e.k, nil)
	if err := child.SetForegroundProcessGroup(e.tty, int32(other.tg.id)); err != unix.EPERM {
		t.Fatalf("TIOCSPGRP of another session's group = %v, want EPERM", err)
	}
	if err := other.SetForegroundProcessGroup(e.tty, int32(other.tg.id)); err != unix.ENOTTY {
		t.Fatalf("TIOCSPGRP on another's terminal = %v, want ENOTTY", err)
	}
	if err := child.SetForegroundProcessGroup(e.tty, int32(child.tg.id)); err != nil {
		t.Fatal(err)
	}
	if e.tty.ForegroundPgrp() != int32(child.tg.id) {
		t.Fatal("foreground not set")
	}
	// Now the leader is in the background, and its group is orphaned
	// (no parent outside it in the session): EIO, no signal.
	e.leader.SetSignalMask(0)
	if err := e.leader.CheckTTYAccess(e.tty, unix.SIGTTIN); err != unix.EIO {
		t.Fatalf("orphaned background read = %v, want EIO", err)
	}
	// The terminal's ^C and ^Z go to the foreground group only.
	blockAll(e.leader, child)
	ctx := fstest.NewContext()
	if _, err := e.master.Write(ctx, []byte("\x03\x1a")); err != nil {
		t.Fatal(err)
	}
	if !pendingHas(child, SIGINT) || !pendingHas(child, SIGTSTP) || pendingHas(e.leader, SIGINT) {
		t.Fatalf("terminal signals: child %#x leader %#x", child.PendingSignals(), e.leader.PendingSignals())
	}
}

func TestSessionLeaderExitAndHangup(t *testing.T) {
	e := newTTYEnv(t)
	if err := e.leader.SetControllingTTY(e.tty, false, true); err != nil {
		t.Fatal(err)
	}
	child := newTTYTask(e.k, e.leader)
	blockAll(e.leader, child)
	// Hang-up of the master: the leader gets SIGHUP and SIGCONT, every
	// process loses the terminal.
	e.master.DecRef()
	if !pendingHas(e.leader, SIGHUP) || pendingHas(child, SIGHUP) {
		t.Fatalf("hang-up signals: leader %#x child %#x", e.leader.PendingSignals(), child.PendingSignals())
	}
	if e.leader.ControllingTTY() != nil || child.ControllingTTY() != nil || e.tty.Session() != 0 {
		t.Fatal("terminal still bound after hang-up")
	}

	// The leader's exit hangs up its terminal: SIGHUP to the foreground
	// group (without SIGCONT), and the session loses it.
	e2 := newTTYEnv(t)
	defer e2.master.DecRef()
	if err := e2.leader.SetControllingTTY(e2.tty, false, true); err != nil {
		t.Fatal(err)
	}
	c := newTTYTask(e2.k, e2.leader)
	blockAll(c)
	e2.k.mu.Lock()
	e2.k.sessionLeaderExitLocked(e2.leader.tg)
	e2.k.mu.Unlock()
	if !pendingHas(c, SIGHUP) || pendingHas(c, SIGCONT) {
		t.Fatalf("exit signals to the foreground group %#x", c.PendingSignals())
	}
	if c.ControllingTTY() != nil || e2.tty.Session() != 0 {
		t.Fatal("terminal still bound after the leader exited")
	}
}

func TestLeaderExitSignalsBackgroundJobInForeground(t *testing.T) {
	e := newTTYEnv(t)
	defer e.master.DecRef()
	if err := e.leader.SetControllingTTY(e.tty, false, true); err != nil {
		t.Fatal(err)
	}
	job := newTTYTask(e.k, e.leader)
	blockAll(job)
	if err := job.tg.SetPGID(job.tg, 0); err != nil {
		t.Fatal(err)
	}
	if err := e.leader.SetForegroundProcessGroup(e.tty, int32(job.tg.id)); err != nil {
		t.Fatal(err)
	}
	e.k.mu.Lock()
	e.k.processExitLocked(e.leader.tg, ExitedWith(0))
	e.k.mu.Unlock()
	if !pendingHas(job, SIGHUP) {
		t.Fatalf("job pending %#x, want SIGHUP", job.PendingSignals())
	}
}

func TestSetPGIDToOwnGroupKeepsIt(t *testing.T) {
	k := NewTestKernel(nil)
	leader := newTTYTask(k, nil)
	c := newTTYTask(k, leader)
	for i := 0; i < 2; i++ {
		if err := c.tg.SetPGID(c.tg, 0); err != nil {
			t.Fatal(err)
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if pg := k.processGroups[c.tg.id]; pg == nil || pg != c.tg.pg {
		t.Fatal("setpgid to the current group dropped it from the table")
	}
}
