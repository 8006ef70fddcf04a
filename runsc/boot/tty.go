package boot

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/devpts"
	"github.com/moat-sandbox/moat/sentry/fs/host"
	"github.com/moat-sandbox/moat/sentry/kernel"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/syserror"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

// This file gives a process that asks for a terminal (process.terminal,
// runsc exec --tty, runsc do at a terminal) a pseudo-terminal of the
// Sentry's own devpts, the one mounted at the container's /dev/pts, as its
// stdio and controlling terminal, and relays bytes between that terminal
// and the host terminal runsc was given (the console socket's pty, or the
// caller's own terminal). The Sentry's line discipline then does what
// Linux's would: echo, line editing, ^C to the foreground process group,
// job control and window sizes, and ttyname(3) finds /dev/pts/N. The host
// terminal is put in raw mode (no echo, no signals, no output processing)
// so that it only carries bytes, and gets its modes back when the console
// closes.
//
// Output goes to the host in the writing task's goroutine (the
// terminal's output sink: one host write per application write, as a
// host descriptor of its own would cost); only what a full host terminal
// refuses waits for relayOut. Input is read by relayIn, which polls the
// host descriptor. Neither is watched by the host notifier's epoll: a
// pty wakes its epoll waiters on every write, which would wake the
// notifier and a relay goroutine per application write.
//
// The host kernel signals a change of the host terminal's window size
// only to the foreground group of the session it controls: the sandbox
// for the root container's console socket or runsc run's terminal, which
// Load forwards as Console.SyncWindowSize, and nobody for the terminal of
// an exec'd process. So relayIn also compares the host's window size with
// the terminal's every winsizePoll.

// winsizePoll is how often a console compares the host terminal's window
// size with its own.
const winsizePoll = 250 * time.Millisecond

// flushTimeout bounds how long the end of a process waits for its
// terminal's output to reach the host.
const flushTimeout = 2 * time.Second

// Console is a Sentry pseudo-terminal relayed to a host terminal.
type Console struct {
	log  *slog.Logger
	term *devpts.Terminal
	// master is the terminal's master end (the console's alone); inFD
	// and outFD are the host terminal's input and output, non-blocking.
	// Modes and window size are those of inFD.
	master      *fs.FileDescription
	inFD, outFD int
	savedFlags  [2]int
	// saved are the host terminal's modes before raw mode (nil: it is
	// not a terminal).
	saved *unix.Termios

	// stopFD is an eventfd made readable to stop the relays.
	stopFD   int
	stop     chan struct{}
	stopOnce sync.Once
	outDone  chan struct{} // closed when the output relay has ended
	inDone   chan struct{} // closed when the input relay has ended

	wsMu   sync.Mutex
	lastWS unix.Winsize

	failOnce sync.Once
}

// ptsDir is where a console looks for the container's devpts: the
// instance mounted at /dev/pts (a spec's devpts mount, or /dev's own),
// through its ptmx.
const ptsDir = "/dev/pts"

// NewConsole opens a new pseudo-terminal of the devpts at root's /dev/pts
// and starts relaying it to the host descriptors inFD and outFD (which
// it takes over: they are closed with the console, or on error). It
// returns the console and the slave end, opened read-write without
// becoming anyone's controlling terminal; the caller gives the slave to
// the process as its stdio and binds it with SetControllingTTY.
func NewConsole(root fs.VirtualDentry, inFD, outFD int, log *slog.Logger) (c *Console, slave *fs.FileDescription, err error) {
	c = &Console{log: log, inFD: inFD, outFD: outFD, stopFD: -1, stop: make(chan struct{}), outDone: make(chan struct{}), inDone: make(chan struct{})}
	c.savedFlags = [2]int{-1, -1}
	defer func() {
		if err != nil {
			if slave != nil {
				slave.DecRef()
			}
			c.release()
		}
	}()
	ctx := kernel.Background()
	open := func(p string) (*fs.FileDescription, error) {
		return fs.Open(ctx, fs.Lookup{Root: root, Start: root, Path: p}, fs.OpenOptions{Flags: unix.O_RDWR | unix.O_NOCTTY})
	}
	if c.master, err = open(ptsDir + "/ptmx"); err != nil {
		return nil, nil, fmt.Errorf("console: opening %s/ptmx: %w", ptsDir, err)
	}
	if c.term = devpts.MasterTerminal(c.master); c.term == nil {
		return nil, nil, fmt.Errorf("console: %s/ptmx is not a pseudo-terminal master", ptsDir)
	}
	c.term.Unlock()
	name := ptsDir + "/" + strconv.Itoa(int(c.term.Index()))
	slave, err = open(name)
	if err == nil && devpts.TerminalOf(slave) != c.term {
		err = errors.New("another terminal is there")
	}
	if err != nil {
		return nil, nil, fmt.Errorf("console: opening %s: %w", name, err)
	}
	if c.stopFD, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
		return nil, nil, fmt.Errorf("console: eventfd: %w", err)
	}
	for i, fd := range []int{inFD, outFD} {
		fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
		if err != nil {
			return nil, nil, fmt.Errorf("console: F_GETFL: %w", err)
		}
		c.savedFlags[i] = fl
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl|unix.O_NONBLOCK); err != nil {
			return nil, nil, fmt.Errorf("console: F_SETFL: %w", err)
		}
	}
	if t, terr := unix.IoctlGetTermios(inFD, unix.TCGETS); terr == nil {
		raw := *t
		makeRaw(&raw)
		if err := unix.IoctlSetTermios(inFD, unix.TCSETS, &raw); err != nil {
			return nil, nil, fmt.Errorf("console: raw mode of the host terminal: %w", err)
		}
		c.saved = t
	}
	c.SyncWindowSize()
	c.term.SetOutputSink(c.writeHost)
	go c.relayIn()
	go c.relayOut()
	return c, slave, nil
}

// makeRaw is cfmakeraw(3).
func makeRaw(t *unix.Termios) {
	t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	t.Oflag &^= unix.OPOST
	t.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	t.Cflag &^= unix.CSIZE | unix.PARENB
	t.Cflag |= unix.CS8
	t.Cc[unix.VMIN] = 1
	t.Cc[unix.VTIME] = 0
}

// Terminal returns the Sentry terminal.
func (c *Console) Terminal() *devpts.Terminal { return c.term }

// SyncWindowSize gives the Sentry terminal the host terminal's window
// size; a change sends SIGWINCH to its foreground process group.
func (c *Console) SyncWindowSize() {
	ws, err := unix.IoctlGetWinsize(c.inFD, unix.TIOCGWINSZ)
	if err != nil {
		return
	}
	c.wsMu.Lock()
	defer c.wsMu.Unlock()
	if *ws == c.lastWS {
		return
	}
	c.lastWS = *ws
	c.term.SetWindowSize(*ws)
}

// pollHost waits up to timeout for events on fd or a stop; it reports
// fd's events (0 on a timeout) and whether the console is stopping.
func (c *Console) pollHost(fd int, events int16, timeout time.Duration) (int16, bool) {
	pfds := []unix.PollFd{{Fd: int32(fd), Events: events}, {Fd: int32(c.stopFD), Events: unix.POLLIN}}
	for {
		_, err := unix.Poll(pfds, int(timeout/time.Millisecond))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			c.log.Debug("console: poll", "err", err)
			return unix.POLLERR, true
		}
		return pfds[0].Revents, pfds[1].Revents != 0
	}
}

// relayIn copies the host terminal's input to the master, and keeps the
// window size in step, until the host terminal hangs up or the console
// stops.
func (c *Console) relayIn() {
	defer close(c.inDone)
	we, wch := waiter.NewChannelEntry(waiter.EventOut)
	c.master.EventRegister(we)
	defer c.master.EventUnregister(we)
	buf := make([]byte, 4096)
	synced := time.Now()
	for {
		rev, stop := c.pollHost(c.inFD, unix.POLLIN, winsizePoll)
		if stop {
			return
		}
		// The size is checked every winsizePoll even while input
		// keeps coming: a host SIGWINCH may not reach the sandbox (an
		// exec'd terminal gets none), and typing must not starve the
		// check.
		if now := time.Now(); rev == 0 || now.Sub(synced) >= winsizePoll {
			c.SyncWindowSize()
			synced = now
		}
		if rev == 0 {
			continue
		}
		n, err := unix.Read(c.inFD, buf)
		if err == unix.EAGAIN || err == unix.EINTR {
			continue
		}
		if n <= 0 {
			c.log.Debug("console: host terminal input ended", "err", err)
			return
		}
		if !c.writeMaster(buf[:n], wch) {
			return
		}
	}
}

// writeMaster types b into the terminal, waiting on wch (the master's
// EventOut) while its input queue is full. It reports false when the
// console stopped.
func (c *Console) writeMaster(b []byte, wch <-chan struct{}) bool {
	ctx := kernel.Background()
	for len(b) > 0 {
		n, err := c.master.Write(ctx, b)
		b = b[n:]
		if errors.Is(err, syserror.ErrWouldBlock) {
			select {
			case <-wch:
			case <-c.stop:
				return false
			}
			continue
		}
		if err != nil {
			c.log.Debug("console: typing into the terminal", "err", err)
			return false
		}
	}
	return true
}

// writeHost is the terminal's output sink (see the file comment). A full
// host terminal takes what it can (the rest stays queued for relayOut); a
// failed one takes everything, discarded, so that the application does
// not hang on a terminal nobody can read.
func (c *Console) writeHost(b []byte) int {
	total := 0
	for total < len(b) {
		n, err := unix.Write(c.outFD, b[total:])
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			return total
		}
		if err != nil || n <= 0 {
			c.failOnce.Do(func() { c.log.Debug("console: writing to the host terminal", "err", err) })
			return len(b)
		}
		total += n
	}
	return total
}

// relayOut writes what the output sink left queued once the host
// terminal can take it, until every slave has closed and all output is
// written, or the console stops.
func (c *Console) relayOut() {
	defer close(c.outDone)
	e, ch := waiter.NewChannelEntry(waiter.EventIn | waiter.EventHUp)
	c.master.EventRegister(e)
	defer c.master.EventUnregister(e)
	for {
		c.term.FlushOutput()
		r := c.master.Readiness(waiter.EventIn | waiter.EventHUp)
		switch {
		case r&waiter.EventIn != 0:
			// Output is queued: the host terminal was full.
			if _, stop := c.pollHost(c.outFD, unix.POLLOUT, winsizePoll); stop {
				return
			}
		case r&waiter.EventHUp != 0:
			return // every slave closed, all output written
		default:
			select {
			case <-ch:
			case <-c.stop:
				return
			}
		}
	}
}

// Close waits up to flushTimeout for the output relay to end (it ends
// once every slave is closed and the output is written), then closes the
// console (closeNow).
func (c *Console) Close() {
	select {
	case <-c.outDone:
	case <-time.After(flushTimeout):
		c.log.Debug("console: output not flushed in time")
	}
	c.closeNow()
}

// closeNow stops the relays, gives the host terminal its modes back and
// closes the master, which hangs up the terminal for any process still
// holding it.
func (c *Console) closeNow() {
	c.stopOnce.Do(func() {
		close(c.stop)
		var one [8]byte
		one[0] = 1
		unix.Write(c.stopFD, one[:])
	})
	<-c.outDone
	<-c.inDone
	c.term.SetOutputSink(nil)
	c.release()
}

// release restores the host terminal and closes everything the console
// holds; the relays must have ended (or never started).
func (c *Console) release() {
	if c.saved != nil {
		unix.IoctlSetTermios(c.inFD, unix.TCSETS, c.saved)
	}
	for i, fd := range []int{c.inFD, c.outFD} {
		if c.savedFlags[i] >= 0 {
			unix.FcntlInt(uintptr(fd), unix.F_SETFL, c.savedFlags[i])
		}
		unix.Close(fd)
	}
	if c.stopFD >= 0 {
		unix.Close(c.stopFD)
	}
	if c.master != nil {
		c.master.DecRef()
	}
}

// stdioFiles returns the three stdio descriptions of a new process from
// the host descriptors stdio (taken over: closed on error or with the
// files): with terminal, a Console's slave for all three (the caller
// binds it as the process's controlling terminal and closes the console
// when the process is done); otherwise host files of each, sharing one
// host.TTY, owned by uid and gid.
func stdioFiles(root fs.VirtualDentry, stdio []int, terminal bool, uid auth.KUID, gid auth.KGID, log *slog.Logger) (files [3]*fs.FileDescription, con *Console, err error) {
	if len(stdio) != 3 {
		for _, fd := range stdio {
			unix.Close(fd)
		}
		return files, nil, fmt.Errorf("need 3 stdio descriptors, got %d", len(stdio))
	}
	if terminal {
		// The console reads stdin and writes stdout; stderr, on a
		// terminal the same, is not used (as runc's console).
		unix.Close(stdio[2])
		con, slave, err := NewConsole(root, stdio[0], stdio[1], log)
		if err != nil {
			return files, nil, err
		}
		slave.IncRef()
		slave.IncRef()
		return [3]*fs.FileDescription{slave, slave, slave}, con, nil
	}
	tty := &host.TTY{}
	for i, fd := range stdio {
		f, err := host.NewFile(fd, host.Options{TTY: tty, UID: uid, GID: gid})
		if err != nil {
			for _, fd := range stdio[i+1:] {
				unix.Close(fd)
			}
			for _, f := range files[:i] {
				f.DecRef()
			}
			unix.Close(fd)
			return [3]*fs.FileDescription{}, nil, err
		}
		files[i] = f
	}
	return files, nil, nil
}

// installStdio makes files (stdioFiles') descriptors 0, 1 and 2 of fdt
// and drops the references they came with, all of them on error too.
func installStdio(fdt *fs.FDTable, files [3]*fs.FileDescription) error {
	var err error
	for i, f := range files {
		if err == nil {
			err = fdt.NewFDAt(int32(i), f, fs.FDFlags{}, 1024)
		}
		f.DecRef()
	}
	return err
}

// consoleTable holds the consoles of processes exec started until they
// have exited and their output has been flushed.
type consoleTable struct {
	mu sync.Mutex
	m  map[*kernel.ExternalProcess]chan struct{}
}

// watch closes con once p has exited.
func (t *consoleTable) watch(p *kernel.ExternalProcess, con *Console) {
	done := make(chan struct{})
	t.mu.Lock()
	if t.m == nil {
		t.m = make(map[*kernel.ExternalProcess]chan struct{})
	}
	t.m[p] = done
	t.mu.Unlock()
	go func() {
		<-p.Done()
		con.Close()
		close(done)
		t.mu.Lock()
		delete(t.m, p)
		t.mu.Unlock()
	}()
}

// done returns a channel closed once p has exited and, if it has a
// console, that console's output has reached the host.
func (t *consoleTable) done(p *kernel.ExternalProcess) <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	if ch := t.m[p]; ch != nil {
		return ch
	}
	return p.Done()
}

// onForegroundTerminal reports whether stdin and stdout are one terminal
// (the same device) and the caller's process group is its foreground: a
// command run at a shell's prompt, not one whose output is redirected.
func onForegroundTerminal(stdio [3]int) bool {
	var in, out unix.Stat_t
	if unix.Fstat(stdio[0], &in) != nil || unix.Fstat(stdio[1], &out) != nil {
		return false
	}
	if in.Mode&unix.S_IFMT != unix.S_IFCHR || in.Rdev != out.Rdev {
		return false
	}
	if _, err := unix.IoctlGetTermios(stdio[0], unix.TCGETS); err != nil {
		return false
	}
	fg, err := unix.IoctlGetInt(stdio[0], unix.TIOCGPGRP)
	return err == nil && fg == unix.Getpgrp()
}
