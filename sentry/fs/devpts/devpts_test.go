package devpts

import (
	"encoding/binary"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
	"github.com/moat-sandbox/moat/sentry/fs/synth"
	"github.com/moat-sandbox/moat/sentry/syserror"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

type sigRecorder struct {
	mu   sync.Mutex
	sigs []unix.Signal
	pgs  []int32
}

func (r *sigRecorder) SignalProcessGroup(pg int32, s unix.Signal) {
	r.mu.Lock()
	r.sigs = append(r.sigs, s)
	r.pgs = append(r.pgs, pg)
	r.mu.Unlock()
}

// jobCtx is a session leader (pid = pgid = sid) of a one-process
// session: a stand-in for the kernel's job control (which the kernel's own
// tests cover with real tasks). Its terminal's signals go to the devpts
// instance's Signaller.
type jobCtx struct {
	*fstest.Context
	id   int32
	ctty *Terminal
}

func (j *jobCtx) IsControllingTTY(t *Terminal) bool { return j.ctty == t }
func (j *jobCtx) SetControllingTTY(t *Terminal, steal, readable bool) error {
	if j.ctty == t {
		return nil
	}
	if j.ctty != nil || t.Session() != 0 {
		return unix.EPERM
	}
	t.SetControlling(j.id, j.id, nil)
	j.ctty = t
	return nil
}
func (j *jobCtx) AcquireTTYOnOpen(t *Terminal) {
	if j.ctty == nil && t.Session() == 0 {
		j.SetControllingTTY(t, false, true)
	}
}
func (j *jobCtx) ReleaseControllingTTY(t *Terminal) error {
	if j.ctty != t {
		return unix.ENOTTY
	}
	t.SetControlling(0, 0, nil)
	j.ctty = nil
	return nil
}
func (j *jobCtx) SetForegroundProcessGroup(t *Terminal, pg int32) error {
	if j.ctty != t {
		return unix.ENOTTY
	}
	if pg != j.id {
		return unix.EPERM
	}
	t.SetForeground(pg)
	return nil
}
func (j *jobCtx) CheckTTYAccess(*Terminal, unix.Signal) error { return nil }
func newJobCtx(id int32) *jobCtx                              { return &jobCtx{Context: fstest.NewContext(), id: id} }
func (j *jobCtx) mem(off uintptr) uintptr                     { return fstest.MemBase + off }
func (j *jobCtx) putInt(off uintptr, v int32) {
	j.CopyOutBytes(j.mem(off), binary.LittleEndian.AppendUint32(nil, uint32(v)))
}
func (j *jobCtx) getInt(off uintptr) int32 {
	var b [4]byte
	j.CopyInBytes(j.mem(off), b[:])
	return int32(binary.LittleEndian.Uint32(b[:]))
}

type env struct {
	root fs.VirtualDentry
	sigs *sigRecorder
}

func setup(t *testing.T) *env {
	t.Helper()
	rec := &sigRecorder{}
	pts, ptmx, _ := New(rec)
	root := synth.NewDir(0o755, map[string]fs.Node{"pts": pts, "ptmx": ptmx})
	ns := fs.NewMountNamespace(synth.NewFilesystem("devtmpfs", 1, root, false), fs.MountFlags{})
	return &env{root: ns.Root(), sigs: rec}
}

func (e *env) open(t *testing.T, ctx fs.Context, path string, flags uint32) (*fs.FileDescription, error) {
	t.Helper()
	return fs.Open(ctx, fs.Lookup{Root: e.root, Start: e.root, Path: path}, fs.OpenOptions{Flags: flags})
}

// pair opens an unlocked master and its slave.
func (e *env) pair(t *testing.T, ctx *jobCtx) (m, s *fs.FileDescription) {
	t.Helper()
	m = e.master(t, ctx)
	ctx.putInt(0, 0)
	if _, err := m.Ioctl(ctx, unix.TIOCSPTLCK, ctx.mem(0)); err != nil {
		t.Fatal(err)
	}
	m.Ioctl(ctx, unix.TIOCGPTN, ctx.mem(0))
	s, err := e.open(t, ctx, "/pts/"+itoa(ctx.getInt(0)), unix.O_RDWR|unix.O_NOCTTY)
	if err != nil {
		t.Fatal(err)
	}
	return m, s
}

// master opens /ptmx: a new, locked terminal's master.
func (e *env) master(t *testing.T, ctx *jobCtx) *fs.FileDescription {
	t.Helper()
	m, err := e.open(t, ctx, "/ptmx", unix.O_RDWR|unix.O_NOCTTY)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func itoa(i int32) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

func read(t *testing.T, ctx fs.Context, f *fs.FileDescription) string {
	t.Helper()
	buf := make([]byte, 256)
	n, err := f.Read(ctx, buf)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return string(buf[:n])
}

func TestLockAndNumber(t *testing.T) {
	e := setup(t)
	ctx := newJobCtx(1)
	m := e.master(t, ctx)
	defer m.DecRef()
	m.Ioctl(ctx, unix.TIOCGPTN, ctx.mem(0))
	n := ctx.getInt(0)
	if _, err := e.open(t, ctx, "/pts/"+itoa(n), unix.O_RDWR); err != unix.EIO {
		t.Fatalf("open of a locked slave = %v, want EIO", err)
	}
	m.Ioctl(ctx, unix.TIOCGPTLCK, ctx.mem(4))
	if ctx.getInt(4) != 1 {
		t.Fatal("TIOCGPTLCK: not locked")
	}
	m2, s := e.pair(t, ctx)
	defer m2.DecRef()
	defer s.DecRef()
	if m2.Impl().(*masterFile).t.index == n {
		t.Fatal("two terminals share an index")
	}
	if _, err := s.Ioctl(ctx, unix.TCGETS, ctx.mem(0)); err != nil {
		t.Fatalf("TCGETS on slave: %v", err)
	}
}

func TestCanonicalEchoAndOutput(t *testing.T) {
	e := setup(t)
	ctx := newJobCtx(1)
	m, s := e.pair(t, ctx)
	defer m.DecRef()
	defer s.DecRef()
	m.Write(ctx, []byte("ab"))
	if _, err := s.Read(ctx, make([]byte, 8)); err != syserror.ErrWouldBlock {
		t.Fatalf("partial line readable: %v", err)
	}
	m.Write(ctx, []byte("x\x7fc\n"))
	if got := read(t, ctx, s); got != "abc\n" {
		t.Fatalf("slave read %q", got)
	}
	if got := read(t, ctx, m); got != "abx\b \bc\r\n" {
		t.Fatalf("echo %q", got)
	}
	s.Write(ctx, []byte("out\n"))
	if got := read(t, ctx, m); got != "out\r\n" {
		t.Fatalf("output %q", got)
	}
	// Two lines: one read returns one line; ^D on an empty line is EOF.
	m.Write(ctx, []byte("l1\nl2\n\x04"))
	if got := read(t, ctx, s); got != "l1\n" {
		t.Fatalf("first line %q", got)
	}
	s.Ioctl(ctx, unix.TIOCINQ, ctx.mem(0))
	if ctx.getInt(0) != 3 {
		t.Fatalf("FIONREAD %d", ctx.getInt(0))
	}
	read(t, ctx, s)
	if got := read(t, ctx, s); got != "" {
		t.Fatalf("EOF read %q", got)
	}
}

func TestRawModeAndTermios(t *testing.T) {
	e := setup(t)
	ctx := newJobCtx(1)
	m, s := e.pair(t, ctx)
	defer m.DecRef()
	defer s.DecRef()
	s.Ioctl(ctx, unix.TCGETS, ctx.mem(0))
	b := make([]byte, termiosSize)
	ctx.CopyInBytes(ctx.mem(0), b)
	tm := unmarshalTermios(b)
	if tm.Lflag&unix.ICANON == 0 || tm.Lflag&unix.ECHO == 0 || tm.Cflag&unix.CSIZE != unix.CS8 {
		t.Fatalf("default termios %+v", tm)
	}
	tm.Lflag &^= unix.ICANON | unix.ECHO | unix.ISIG
	ctx.CopyOutBytes(ctx.mem(0), tm.marshal())
	if _, err := s.Ioctl(ctx, unix.TCSETS, ctx.mem(0)); err != nil {
		t.Fatal(err)
	}
	m.Write(ctx, []byte("q\x03"))
	if got := read(t, ctx, s); got != "q\x03" {
		t.Fatalf("raw read %q", got)
	}
	if len(e.sigs.sigs) != 0 {
		t.Fatalf("signals in raw mode: %v", e.sigs.sigs)
	}
	if _, err := m.Read(ctx, make([]byte, 8)); err != syserror.ErrWouldBlock {
		t.Fatalf("echo without ECHO: %v", err)
	}
}

func TestControllingTerminalSignalsAndWinsize(t *testing.T) {
	e := setup(t)
	ctx := newJobCtx(7)
	m, s := e.pair(t, ctx)
	defer m.DecRef()
	defer s.DecRef()
	if _, err := s.Ioctl(ctx, unix.TIOCGPGRP, ctx.mem(0)); err != unix.ENOTTY {
		t.Fatalf("TIOCGPGRP before TIOCSCTTY = %v", err)
	}
	if _, err := s.Ioctl(ctx, unix.TIOCSCTTY, 0); err != nil {
		t.Fatal(err)
	}
	s.Ioctl(ctx, unix.TIOCGPGRP, ctx.mem(0))
	s.Ioctl(ctx, unix.TIOCGSID, ctx.mem(4))
	if ctx.getInt(0) != 7 || ctx.getInt(4) != 7 {
		t.Fatalf("pgrp %d sid %d", ctx.getInt(0), ctx.getInt(4))
	}
	other := newJobCtx(9)
	if _, err := s.Ioctl(other, unix.TIOCSCTTY, 0); err != unix.EPERM {
		t.Fatalf("stealing the terminal = %v, want EPERM", err)
	}
	m.Write(ctx, []byte("\x03"))
	if got := read(t, ctx, m); got != "^C" {
		t.Fatalf("echo of ^C %q", got)
	}
	ctx.CopyOutBytes(ctx.mem(0), []byte{40, 0, 132, 0, 0, 0, 0, 0})
	m.Ioctl(ctx, unix.TIOCSWINSZ, ctx.mem(0))
	s.Ioctl(ctx, unix.TIOCGWINSZ, ctx.mem(8))
	var ws [8]byte
	ctx.CopyInBytes(ctx.mem(8), ws[:])
	if ws[0] != 40 || ws[2] != 132 {
		t.Fatalf("winsize %v", ws)
	}
	e.sigs.mu.Lock()
	got := e.sigs.sigs
	e.sigs.mu.Unlock()
	if len(got) != 2 || got[0] != unix.SIGINT || got[1] != unix.SIGWINCH || e.sigs.pgs[0] != 7 {
		t.Fatalf("signals %v to %v", got, e.sigs.pgs)
	}
}

func TestHangupAndBlocking(t *testing.T) {
	e := setup(t)
	ctx := newJobCtx(1)
	m, s := e.pair(t, ctx)
	defer s.DecRef()
	go func() {
		time.Sleep(20 * time.Millisecond)
		m.Write(ctx, []byte("late\n"))
	}()
	buf := make([]byte, 16)
	if n, err := fs.ReadBlocking(ctx, s, buf); err != nil || string(buf[:n]) != "late\n" {
		t.Fatalf("blocking read %q %v", buf[:n], err)
	}
	m.DecRef()
	if n, err := s.Read(ctx, buf); n != 0 || err != nil {
		t.Fatalf("read after hang-up = %d, %v; want end of file", n, err)
	}
	if _, err := s.Write(ctx, buf); err != unix.EIO {
		t.Fatalf("write after hang-up = %v, want EIO", err)
	}
	if _, err := s.Ioctl(ctx, unix.TCGETS, ctx.mem(0)); err != unix.EIO {
		t.Fatalf("TCGETS after hang-up = %v, want EIO", err)
	}
	if _, err := s.Ioctl(ctx, unix.TIOCSPGRP, ctx.mem(0)); err != unix.ENOTTY {
		t.Fatalf("TIOCSPGRP after hang-up = %v, want ENOTTY", err)
	}
	want := waiter.EventIn | waiter.EventOut | waiter.EventErr | waiter.EventHUp
	if r := s.Readiness(waiter.EventIn | waiter.EventOut); r != want {
		t.Fatalf("readiness after hang-up %#x, want %#x", r, want)
	}
	if _, err := e.open(t, ctx, "/pts/0", unix.O_RDWR); err != unix.ENOENT {
		t.Fatalf("open of a released terminal = %v", err)
	}
}

func TestTimedRawRead(t *testing.T) {
	e := setup(t)
	ctx := newJobCtx(1)
	m, s := e.pair(t, ctx)
	defer m.DecRef()
	defer s.DecRef()
	tty := TerminalOf(s)
	tm := tty.getTermios()
	tm.Lflag &^= unix.ICANON | unix.ECHO
	tm.CC[unix.VMIN], tm.CC[unix.VTIME] = 0, 1 // 0.1 s
	tty.setTermios(tm)
	start := time.Now()
	n, err := fs.ReadBlocking(ctx, s, make([]byte, 8))
	if n != 0 || err != nil || time.Since(start) < 80*time.Millisecond {
		t.Fatalf("timed read = %d, %v after %v; want 0 after VTIME", n, err, time.Since(start))
	}
	// A second read waits afresh.
	start = time.Now()
	if n, err := fs.ReadBlocking(ctx, s, make([]byte, 8)); n != 0 || err != nil || time.Since(start) < 80*time.Millisecond {
		t.Fatalf("second timed read = %d, %v after %v", n, err, time.Since(start))
	}
	m.Write(ctx, []byte("x"))
	if n, err := fs.ReadBlocking(ctx, s, make([]byte, 8)); n != 1 || err != nil {
		t.Fatalf("read with input = %d, %v", n, err)
	}
}

// TestSentryUse drives a terminal as runsc/boot's console does: unlocked
// and resized without ioctls.
func TestSentryUse(t *testing.T) {
	e := setup(t)
	ctx := newJobCtx(3)
	m := e.master(t, ctx)
	defer m.DecRef()
	term := MasterTerminal(m)
	path := "/pts/" + itoa(term.Index())
	if _, err := e.open(t, ctx, path, unix.O_RDWR|unix.O_NOCTTY); err != unix.EIO {
		t.Fatalf("open of a locked slave = %v, want EIO", err)
	}
	term.Unlock()
	s, err := e.open(t, ctx, path, unix.O_RDWR|unix.O_NOCTTY)
	if err != nil {
		t.Fatal(err)
	}
	defer s.DecRef()
	if TerminalOf(s) != term {
		t.Fatal("the slave opened is not the master's terminal")
	}
	if _, err := s.Ioctl(ctx, unix.TIOCSCTTY, 0); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		ws   unix.Winsize
		sigs int
	}{
		{"change", unix.Winsize{Row: 50, Col: 100}, 1},
		{"same size again", unix.Winsize{Row: 50, Col: 100}, 1},
		{"another change", unix.Winsize{Row: 24, Col: 80}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			term.SetWindowSize(tc.ws)
			if got := term.WindowSize(); got != tc.ws {
				t.Fatalf("WindowSize = %+v, want %+v", got, tc.ws)
			}
			s.Ioctl(ctx, unix.TIOCGWINSZ, ctx.mem(0))
			var b [4]byte
			ctx.CopyInBytes(ctx.mem(0), b[:])
			if b[0] != byte(tc.ws.Row) || b[2] != byte(tc.ws.Col) {
				t.Fatalf("TIOCGWINSZ %v, want %+v", b, tc.ws)
			}
			e.sigs.mu.Lock()
			n := len(e.sigs.sigs)
			e.sigs.mu.Unlock()
			if n != tc.sigs {
				t.Fatalf("%d SIGWINCH sent, want %d", n, tc.sigs)
			}
		})
	}
}

// TestOutputSink: with a sink, output (writes and echoes) goes to it as
// it is made, in order; what it refuses stays queued until FlushOutput;
// nil gives the output back to the master.
func TestOutputSink(t *testing.T) {
	e := setup(t)
	ctx := newJobCtx(4)
	m, s := e.pair(t, ctx)
	defer m.DecRef()
	defer s.DecRef()
	term := MasterTerminal(m)
	var got []byte
	room := 1 << 20
	term.SetOutputSink(func(b []byte) int {
		n := min(room, len(b))
		got = append(got, b[:n]...)
		room -= n
		return n
	})
	steps := []struct {
		name   string
		do     func()
		room   int // what the sink takes next
		want   string
		queued bool // output left for the master
	}{
		{"write", func() { s.Write(ctx, []byte("a\n")) }, 1 << 20, "a\r\n", false},
		{"echo", func() { m.Write(ctx, []byte("x")) }, 1 << 20, "a\r\nx", false},
		{"refused", func() { s.Write(ctx, []byte("bcd")) }, 1, "a\r\nxb", true},
		{"flushed", func() { term.FlushOutput() }, 1 << 20, "a\r\nxbcd", false},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			room = st.room
			st.do()
			if string(got) != st.want {
				t.Fatalf("sink has %q, want %q", got, st.want)
			}
			if q := m.Readiness(waiter.EventIn)&waiter.EventIn != 0; q != st.queued {
				t.Fatalf("output queued for the master: %v, want %v", q, st.queued)
			}
		})
	}
	term.SetOutputSink(nil)
	s.Write(ctx, []byte("z"))
	if out := read(t, ctx, m); out != "z" {
		t.Fatalf("master read %q after the sink went, want z", out)
	}
}
