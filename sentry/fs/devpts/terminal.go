// Package devpts implements pseudo-terminals: /dev/ptmx hands out master
// ends, /dev/pts/N are the slave ends, and a line discipline between them
// does what Linux's n_tty does for the common modes: canonical input with
// erase, kill and end-of-file, echo (with ECHOCTL), ICRNL/INLCR/IGNCR,
// OPOST/ONLCR/OCRNL output, ISIG signals to the foreground process group,
// window sizes, and hang-up when either side goes away. Non-canonical
// reads honour VMIN and VTIME, but for the inter-byte timer (see
// slaveRead).
//
// Sessions and process groups belong to the kernel. Its tasks, as
// Contexts, implement JobControl: the terminal asks them to bind or
// release it (TIOCSCTTY, TIOCNOTTY, opening without O_NOCTTY), to change
// its foreground group (TIOCSPGRP) and to vet background reads, TOSTOP
// writes and mode changes (SIGTTIN, SIGTTOU). A terminal bound to a
// session records the session, its foreground process group and the
// kernel's Controller, through which its signals (^C, ^Z, ^\, SIGWINCH)
// and the master's hang-up go.
//
// Locks: Terminal.sinkMu (held while output goes to an output sink, see
// SetOutputSink) comes before Terminal.mu. Terminal.mu guards the
// terminal's state and queues; waiters are notified after it is released. The kernel calls SetControlling and
// SetForeground with its own lock held, so the terminal never calls the
// kernel (JobControl, Controller) with Terminal.mu held. Devpts.mu guards
// the table of terminals and is never held with a Terminal.mu.
package devpts

import (
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/syserror"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

// queueMax bounds each direction's queue.
const queueMax = 64 << 10

// Signaller delivers the signals a terminal raises (^C, ^Z, window size
// changes) to a process group.
type Signaller interface {
	SignalProcessGroup(pgid int32, sig unix.Signal)
}

// Terminal is one pseudo-terminal pair.
type Terminal struct {
	index int32
	ino   uint64
	dp    *Devpts
	// uid and gid own the slave node.
	uid auth.KUID
	gid auth.KGID

	masterQ waiter.Queue // readers of the master: output from the slave
	slaveQ  waiter.Queue // readers of the slave: input from the master

	mu      sync.Mutex
	termios Termios
	winsize unix.Winsize
	locked  bool
	// excl is TIOCEXCL on the slave (opening it again needs
	// CAP_SYS_ADMIN); masterExcl on the master, which has no effect.
	excl, masterExcl bool
	masters          int // open master descriptions
	// stopped: the slave's output is stopped, by ^S with IXON or by
	// TCOOFF (tcoStopped, which only TCOON undoes).
	stopped, tcoStopped bool
	// lnext: the next input character is literal (after ^V).
	lnext  bool
	slaves int // open slave descriptions
	opened bool

	// Input, as the slave reads it: ready holds bytes readable now;
	// lineEnds marks where each complete canonical line ends in ready.
	ready    []byte
	lineEnds []int
	// line is the canonical line being edited.
	line []byte
	// out is output to the master: slave writes and echoes.
	out []byte

	// The session the terminal controls, its foreground process group
	// (0: none) and the kernel side that binds them (nil: none).
	sid, pgrp int32
	ctl       Controller

	// sink, when set (under mu), takes output as it is written
	// (SetOutputSink); sinkMu orders its calls and sinkBuf is what it
	// is given.
	sinkMu  sync.Mutex
	sink    func([]byte) int
	sinkBuf []byte
}

// Index returns N of /dev/pts/N.
func (t *Terminal) Index() int32 { return t.index }

// Session returns the session the terminal controls (0 if none).
func (t *Terminal) Session() int32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sid
}

// ForegroundPgrp returns the foreground process group (0 if none).
func (t *Terminal) ForegroundPgrp() int32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.pgrp
}

// SetControlling binds the terminal to session sid with foreground group
// pgrp, c delivering its signals (TIOCSCTTY), or unbinds it (sid 0). The
// kernel calls it while holding its own lock, which is why the terminal
// never calls c with t.mu held.
func (t *Terminal) SetControlling(sid, pgrp int32, c Controller) {
	t.mu.Lock()
	t.sid, t.pgrp, t.ctl = sid, pgrp, c
	t.mu.Unlock()
}

// SetForeground sets the foreground process group (TIOCSPGRP, checked by
// the kernel).
func (t *Terminal) SetForeground(pgrp int32) {
	t.mu.Lock()
	t.pgrp = pgrp
	t.mu.Unlock()
}

// signaller returns who delivers the terminal's signals: the controller
// of its session, else the devpts instance's.
// Preconditions: t.mu is locked.
func (t *Terminal) signaller() Signaller {
	if t.ctl != nil {
		return t.ctl
	}
	if t.dp.sig != nil {
		return t.dp.sig
	}
	return nil
}

// signal sends sig to the foreground process group.
func (t *Terminal) signal(sig unix.Signal) {
	t.mu.Lock()
	pg, s := t.pgrp, t.signaller()
	t.mu.Unlock()
	if pg > 0 && s != nil {
		s.SignalProcessGroup(pg, sig)
	}
}

// hangup is the master going away: the controller unbinds the session
// (its leader gets SIGHUP and SIGCONT); a terminal without one sends
// SIGHUP to its foreground group, if any.
func (t *Terminal) hangup() {
	t.mu.Lock()
	c := t.ctl
	t.mu.Unlock()
	if c != nil {
		c.Hangup(t)
		return
	}
	t.signal(unix.SIGHUP)
}

// Preconditions: t.mu is locked.
func (t *Terminal) hasLF(flag uint32) bool { return t.termios.Lflag&flag != 0 }

// output appends b to the master's queue with output processing.
// Preconditions: t.mu is locked.
func (t *Terminal) output(b []byte) {
	if t.termios.Oflag&unix.OPOST == 0 {
		t.out = append(t.out, b...)
		return
	}
	for _, c := range b {
		switch {
		case c == '\n' && t.termios.Oflag&unix.ONLCR != 0:
			t.out = append(t.out, '\r', '\n')
		case c == '\r' && t.termios.Oflag&unix.OCRNL != 0:
			t.out = append(t.out, '\n')
		default:
			t.out = append(t.out, c)
		}
	}
}

// echo echoes c as n_tty does.
// Preconditions: t.mu is locked.
func (t *Terminal) echo(c byte) {
	if !t.hasLF(unix.ECHO) {
		if c == '\n' && t.hasLF(unix.ECHONL) && t.hasLF(unix.ICANON) {
			t.output([]byte{'\n'})
		}
		return
	}
	if t.hasLF(unix.ECHOCTL) && (c < 0x20 || c == 0x7f) && c != '\t' && c != '\n' {
		t.output([]byte{'^', c ^ 0x40})
		return
	}
	t.output([]byte{c})
}

// rubout echoes the erasure of c from the screen (with ECHO): "\b \b",
// twice for a control character ECHOCTL showed as ^X, not at all for one
// shown raw. Tabs are taken as one column.
// Preconditions: t.mu is locked.
func (t *Terminal) rubout(c byte) {
	if !t.hasLF(unix.ECHO) {
		return
	}
	ctl := (c < 0x20 || c == 0x7f) && c != '\t'
	if ctl && !t.hasLF(unix.ECHOCTL) {
		return
	}
	t.output([]byte("\b \b"))
	if ctl {
		t.output([]byte("\b \b"))
	}
}

// pushLine completes the canonical line.
// Preconditions: t.mu is locked.
func (t *Terminal) pushLine() {
	t.ready = append(t.ready, t.line...)
	t.lineEnds = append(t.lineEnds, len(t.ready))
	t.line = t.line[:0]
}

// input runs bytes written to the master through the line discipline and
// returns the signals to raise.
// Preconditions: t.mu is locked.
func (t *Terminal) input(b []byte) []unix.Signal {
	var sigs []unix.Signal
	cc := &t.termios.CC
	for _, c := range b {
		if t.termios.Iflag&unix.ISTRIP != 0 {
			c &= 0x7f
		}
		if t.lnext {
			// The character after ^V is taken literally.
			t.lnext = false
			t.line = append(t.line, c)
			t.echo(c)
			continue
		}
		switch {
		case c == '\r' && t.termios.Iflag&unix.IGNCR != 0:
			continue
		case c == '\r' && t.termios.Iflag&unix.ICRNL != 0:
			c = '\n'
		case c == '\n' && t.termios.Iflag&unix.INLCR != 0:
			c = '\r'
		}
		if t.termios.Iflag&unix.IXON != 0 {
			// Flow control: ^S stops the slave's output and ^Q
			// starts it (any key with IXANY); neither is input.
			if t.stopped && !t.tcoStopped && t.termios.Iflag&unix.IXANY != 0 {
				t.stopped = false
			}
			switch {
			case c == cc[unix.VSTART] && c != 0:
				t.stopped = false
				continue
			case c == cc[unix.VSTOP] && c != 0:
				t.stopped = true
				continue
			}
		}
		if t.hasLF(unix.ISIG) && c != 0 {
			sig := unix.Signal(0)
			switch c {
			case cc[unix.VINTR]:
				sig = unix.SIGINT
			case cc[unix.VQUIT]:
				sig = unix.SIGQUIT
			case cc[unix.VSUSP]:
				sig = unix.SIGTSTP
			}
			if sig != 0 {
				t.echo(c)
				if !t.hasLF(unix.NOFLSH) {
					t.line = t.line[:0]
				}
				sigs = append(sigs, sig)
				continue
			}
		}
		if !t.hasLF(unix.ICANON) {
			t.ready = append(t.ready, c)
			t.echo(c)
			continue
		}
		iexten := t.hasLF(unix.IEXTEN)
		switch {
		case iexten && c == cc[unix.VWERASE] && c != 0:
			// Word erase: trailing blanks, then the word before.
			seen := false
			for len(t.line) > 0 {
				l := t.line[len(t.line)-1]
				word := l == '_' || l >= '0' && l <= '9' || l >= 'a' && l <= 'z' || l >= 'A' && l <= 'Z'
				if !word && seen {
					break
				}
				seen = seen || word
				t.line = t.line[:len(t.line)-1]
				t.rubout(l)
			}
		case iexten && c == cc[unix.VLNEXT] && c != 0:
			t.lnext = true
			if t.hasLF(unix.ECHO) && t.hasLF(unix.ECHOCTL) {
				t.output([]byte("^\b"))
			}
		case c == cc[unix.VERASE] && c != 0:
			if len(t.line) > 0 {
				l := t.line[len(t.line)-1]
				t.line = t.line[:len(t.line)-1]
				if t.termios.Iflag&unix.IUTF8 != 0 {
					// The whole UTF-8 character goes: its
					// continuation bytes and its lead byte.
					for l&0xc0 == 0x80 && len(t.line) > 0 {
						l = t.line[len(t.line)-1]
						t.line = t.line[:len(t.line)-1]
					}
				}
				if t.hasLF(unix.ECHOE) {
					t.rubout(l)
				} else {
					t.echo(c)
				}
			}
		case c == cc[unix.VKILL] && c != 0:
			if t.hasLF(unix.ECHO) && !(t.hasLF(unix.ECHOK) && t.hasLF(unix.ECHOKE) && t.hasLF(unix.ECHOE)) {
				// Show the kill character, then a new line with
				// ECHOK.
				t.echo(c)
				if t.hasLF(unix.ECHOK) {
					t.output([]byte{'\n'})
				}
				t.line = t.line[:0]
				break
			}
			for len(t.line) > 0 {
				l := t.line[len(t.line)-1]
				t.line = t.line[:len(t.line)-1]
				t.rubout(l)
			}
		case c == cc[unix.VEOF] && c != 0:
			t.pushLine()
		case c == '\n' || (c == cc[unix.VEOL] && c != 0) || (c == cc[unix.VEOL2] && c != 0):
			t.line = append(t.line, c)
			t.echo(c)
			t.pushLine()
		default:
			t.line = append(t.line, c)
			t.echo(c)
		}
	}
	return sigs
}

// slaveReadable reports whether poll finds the slave readable: a complete
// line in canonical mode; otherwise VMIN bytes when VTIME is 0 and VMIN
// is not, else one byte (Linux's input_available_p for poll).
// Preconditions: t.mu is locked.
func (t *Terminal) slaveReadable() bool {
	if t.hasLF(unix.ICANON) {
		return len(t.lineEnds) > 0
	}
	need := 1
	if vmin, vtime := int(t.termios.CC[unix.VMIN]), t.termios.CC[unix.VTIME]; vmin > 0 && vtime == 0 {
		need = vmin
	}
	return len(t.ready) >= need
}

// timedRead is slaveRead's answer to a read with VMIN 0 and VTIME that
// finds nothing: the reader waits that long for input, then reads 0.
type timedRead time.Duration

func (timedRead) Error() string { return "timed terminal read" }

// slaveRead reads input. In non-canonical mode a read waits for VMIN
// bytes (or as many as dst holds); with VMIN 0 it returns at once, with
// 0 if there is nothing, or with VTIME set asks the caller to wait that
// long first (timedRead). With both VMIN and VTIME it returns what the
// first bytes bring (the inter-byte timer is not kept). A non-blocking
// read takes what there is, as Linux's.
func (t *Terminal) slaveRead(dst []byte, nonBlocking bool) (int, error) {
	t.mu.Lock()
	ready := false
	if t.hasLF(unix.ICANON) {
		ready = len(t.lineEnds) > 0
	} else {
		vmin, vtime := int(t.termios.CC[unix.VMIN]), t.termios.CC[unix.VTIME]
		switch {
		case vmin == 0 && vtime == 0:
			ready = true
		case vmin == 0:
			// A timed read: the caller waits VTIME for a byte
			// (EAGAIN if it may not wait).
			if len(t.ready) == 0 && len(dst) > 0 {
				t.mu.Unlock()
				if nonBlocking {
					return 0, syserror.ErrWouldBlock
				}
				return 0, timedRead(time.Duration(vtime) * 100 * time.Millisecond)
			}
			ready = true
		case vtime == 0:
			ready = len(t.ready) >= min(vmin, len(dst))
		default:
			ready = len(t.ready) > 0
		}
		ready = ready || len(dst) == 0 || nonBlocking && len(t.ready) > 0
	}
	if !ready {
		hung := t.masters == 0
		t.mu.Unlock()
		if hung {
			return 0, unix.EIO
		}
		return 0, syserror.ErrWouldBlock
	}
	var n int
	if t.hasLF(unix.ICANON) {
		// One line at most; an empty line is an end-of-file mark.
		first := t.lineEnds[0]
		n = copy(dst, t.ready[:first])
		for i := range t.lineEnds {
			t.lineEnds[i] -= n
		}
		if n == first {
			t.lineEnds = t.lineEnds[1:]
		}
	} else {
		n = copy(dst, t.ready)
	}
	t.ready = append(t.ready[:0], t.ready[n:]...)
	t.mu.Unlock()
	t.masterQ.Notify(waiter.EventOut)
	return n, nil
}

// slaveWrite writes output.
func (t *Terminal) slaveWrite(src []byte) (int, error) {
	t.mu.Lock()
	if t.masters == 0 {
		t.mu.Unlock()
		return 0, unix.EIO
	}
	room := queueMax - len(t.out)
	if room <= 0 || t.stopped {
		t.mu.Unlock()
		return 0, syserror.ErrWouldBlock
	}
	n := min(room, len(src))
	t.output(src[:n])
	sink := t.sink != nil
	t.mu.Unlock()
	if !sink || t.flushPending() {
		t.masterQ.Notify(waiter.EventIn | waiter.EventRdNorm)
	}
	return n, nil
}

// masterRead reads output.
func (t *Terminal) masterRead(dst []byte) (int, error) {
	t.mu.Lock()
	if len(t.out) == 0 {
		hung := t.opened && t.slaves == 0
		t.mu.Unlock()
		if hung {
			return 0, unix.EIO
		}
		return 0, syserror.ErrWouldBlock
	}
	n := copy(dst, t.out)
	t.out = append(t.out[:0], t.out[n:]...)
	t.mu.Unlock()
	t.slaveQ.Notify(waiter.EventOut)
	return n, nil
}

// masterWrite writes input.
func (t *Terminal) masterWrite(src []byte) (int, error) {
	t.mu.Lock()
	room := queueMax - len(t.ready) - len(t.line)
	if room <= 0 {
		t.mu.Unlock()
		return 0, syserror.ErrWouldBlock
	}
	n := min(room, len(src))
	echoed := len(t.out)
	wasStopped := t.stopped
	sigs := t.input(src[:n])
	echoed = len(t.out) - echoed
	started := wasStopped && !t.stopped
	sink := t.sink != nil
	t.mu.Unlock()
	if sink && echoed > 0 && !t.flushPending() {
		echoed = 0 // all written: no reader of the master to wake
	}
	t.slaveQ.Notify(waiter.EventIn | waiter.EventRdNorm)
	if started {
		t.slaveQ.Notify(waiter.EventOut | waiter.EventWrNorm)
	}
	if echoed > 0 {
		t.masterQ.Notify(waiter.EventIn | waiter.EventRdNorm)
	}
	for _, s := range sigs {
		t.signal(s)
	}
	return n, nil
}

// inq is FIONREAD on the slave: bytes of complete lines (canonical) or
// all input.
func (t *Terminal) inq() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.hasLF(unix.ICANON) {
		if len(t.lineEnds) == 0 {
			return 0
		}
		return t.lineEnds[len(t.lineEnds)-1]
	}
	return len(t.ready)
}

// setFlow implements TCXONC's TCOOFF (stop) and TCOON (start) of the
// slave's output.
func (t *Terminal) setFlow(stop bool) {
	t.mu.Lock()
	t.stopped, t.tcoStopped = stop, stop
	t.mu.Unlock()
	if !stop {
		t.slaveQ.Notify(waiter.EventOut | waiter.EventWrNorm)
	}
}

// flushInput discards the slave's input (TCFLSH TCIFLUSH, TCSETSF).
func (t *Terminal) flushInput() {
	t.mu.Lock()
	t.ready, t.lineEnds, t.line = t.ready[:0], t.lineEnds[:0], t.line[:0]
	t.mu.Unlock()
	t.masterQ.Notify(waiter.EventOut)
}

// flushOutput discards the slave's output not yet read by the master
// (TCFLSH TCIFLUSH on the master).
func (t *Terminal) flushOutput() {
	t.mu.Lock()
	t.out = t.out[:0]
	t.mu.Unlock()
	t.slaveQ.Notify(waiter.EventOut)
}

// setTermios installs new modes; leaving canonical mode makes the line
// being edited readable.
func (t *Terminal) setTermios(n Termios) {
	t.mu.Lock()
	wasCanon := t.hasLF(unix.ICANON)
	t.termios = n
	if wasCanon && !t.hasLF(unix.ICANON) {
		t.ready = append(t.ready, t.line...)
		t.line = t.line[:0]
		t.lineEnds = t.lineEnds[:0]
	} else if !wasCanon && t.hasLF(unix.ICANON) && len(t.ready) > 0 {
		t.lineEnds = append(t.lineEnds[:0], len(t.ready))
	}
	t.mu.Unlock()
	t.slaveQ.Notify(waiter.EventIn)
}

// setWinsize sets the window size, signalling SIGWINCH on a change.
func (t *Terminal) setWinsize(ws unix.Winsize) {
	t.mu.Lock()
	changed := t.winsize != ws
	t.winsize = ws
	t.mu.Unlock()
	if changed {
		t.signal(unix.SIGWINCH)
	}
}

func (t *Terminal) getWinsize() unix.Winsize {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.winsize
}

func (t *Terminal) getTermios() Termios {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.termios
}

// The Sentry's own users of a terminal (runsc/boot's console, which
// relays a terminal's master to a host terminal) call these instead of
// the ioctls, which need an application's memory.

// Unlock unlocks the slave, as TIOCSPTLCK with 0 (unlockpt(3)).
func (t *Terminal) Unlock() {
	t.mu.Lock()
	t.locked = false
	t.mu.Unlock()
}

// WindowSize returns the window size (TIOCGWINSZ).
func (t *Terminal) WindowSize() unix.Winsize { return t.getWinsize() }

// SetWindowSize sets the window size as TIOCSWINSZ does: a change sends
// SIGWINCH to the foreground process group.
func (t *Terminal) SetWindowSize(ws unix.Winsize) { t.setWinsize(ws) }

// SetOutputSink makes f take the terminal's output (what the slave writes
// and echoes, after output processing) as it is written, in the writer's
// goroutine, instead of leaving it for a reader of the master: the
// Sentry's console writes it to a host terminal without a handoff to
// another goroutine. f must not block and returns how much it took; what
// it does not take stays queued (blocking writers when full) until
// FlushOutput, which the owner calls when f can take more. Nothing else
// may read the master while a sink is set. Called with nil it reverts to
// the master's queue.
func (t *Terminal) SetOutputSink(f func([]byte) int) {
	t.sinkMu.Lock()
	t.mu.Lock()
	t.sink = f
	t.mu.Unlock()
	t.sinkMu.Unlock()
	if f != nil {
		t.FlushOutput()
	}
}

// flushPending flushes the output to the sink and reports whether some
// is left queued.
func (t *Terminal) flushPending() bool {
	t.FlushOutput()
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.out) > 0
}

// FlushOutput gives the queued output to the output sink until it is
// empty or the sink takes no more.
func (t *Terminal) FlushOutput() {
	t.sinkMu.Lock()
	defer t.sinkMu.Unlock()
	for {
		t.mu.Lock()
		if t.sink == nil || len(t.out) == 0 {
			t.mu.Unlock()
			return
		}
		f := t.sink
		t.sinkBuf = append(t.sinkBuf[:0], t.out...)
		t.mu.Unlock()
		n := f(t.sinkBuf)
		if n <= 0 {
			return
		}
		// Only FlushOutput, under sinkMu, takes from out while a sink
		// is set: its first n bytes are still those given.
		t.mu.Lock()
		t.out = append(t.out[:0], t.out[n:]...)
		t.mu.Unlock()
		t.slaveQ.Notify(waiter.EventOut | waiter.EventWrNorm)
		if n < len(t.sinkBuf) {
			return
		}
	}
}
