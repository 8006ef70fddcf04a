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
// runsc exec --tty) a pseudo-terminal of the Sentry's own devpts, the one
// mounted at the container's /dev/pts, as its stdio and controlling
// terminal, and relays bytes between the terminal's master and the host
// terminal runsc was given (the console socket's pty, or the caller's own
// terminal). The Sentry's line discipline then does what Linux's would:
// echo, line editing, ^C to the foreground process group, job control
// and window sizes, and ttyname(3) finds /dev/pts/N. The host terminal is
// put in raw mode (no echo, no signals, no output processing) so that it
// only carries bytes, and gets its modes back when the console closes.
//
// The host kernel signals a change of the host terminal's window size
// only to the foreground group of the session it controls: the sandbox
// for the root container's console socket, which Load forwards as
// Console.SyncWindowSize, and nobody for the terminal of an exec'd
// process. So every console also looks at the host's window size every
// winsizePoll.

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
	// master is the terminal's master end; in and out are the host
	// terminal's input and output as host files (non-blocking, watched
	// by the host notifier); ctlFD is a duplicate of the input
	// descriptor for its modes and window size.
	master  *fs.FileDescription
	in, out *fs.FileDescription
	ctlFD   int
	// saved are the host terminal's modes before raw mode (nil: it is
	// not a terminal).
	saved *unix.Termios

	stop     chan struct{}
	stopOnce sync.Once
	outDone  chan struct{} // closed when the output relay has ended
	inDone   chan struct{} // closed when the input relay has ended

	wsMu   sync.Mutex
	lastWS unix.Winsize
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
	owned := []int{inFD, outFD}
	defer func() {
		for _, fd := range owned {
			if fd >= 0 {
				unix.Close(fd)
			}
		}
	}()
	ctx := kernel.Background()
	open := func(p string) (*fs.FileDescription, error) {
		return fs.Open(ctx, fs.Lookup{Root: root, Start: root, Path: p}, fs.OpenOptions{Flags: unix.O_RDWR | unix.O_NOCTTY})
	}
	master, err := open(ptsDir + "/ptmx")
	if err != nil {
		return nil, nil, fmt.Errorf("console: opening %s/ptmx: %w", ptsDir, err)
	}
	term := devpts.MasterTerminal(master)
	if term == nil {
		master.DecRef()
		return nil, nil, fmt.Errorf("console: %s/ptmx is not a pseudo-terminal master", ptsDir)
	}
	term.Unlock()
	name := ptsDir + "/" + strconv.Itoa(int(term.Index()))
	slave, err = open(name)
	if err == nil && devpts.TerminalOf(slave) != term {
		slave.DecRef()
		err = errors.New("another terminal is there")
	}
	if err != nil {
		master.DecRef()
		return nil, nil, fmt.Errorf("console: opening %s: %w", name, err)
	}
	c = &Console{log: log, term: term, master: master, ctlFD: -1, stop: make(chan struct{}), outDone: make(chan struct{}), inDone: make(chan struct{})}
	defer func() {
		if err != nil {
			slave.DecRef()
			c.release()
		}
	}()
	if c.ctlFD, err = unix.Dup(inFD); err != nil {
		return nil, nil, fmt.Errorf("console: dup: %w", err)
	}
	if t, terr := unix.IoctlGetTermios(c.ctlFD, unix.TCGETS); terr == nil {
		raw := *t
		makeRaw(&raw)
		if err := unix.IoctlSetTermios(c.ctlFD, unix.TCSETS, &raw); err != nil {
			return nil, nil, fmt.Errorf("console: raw mode of the host terminal: %w", err)
		}
		c.saved = t
	}
	if c.in, err = host.NewFile(inFD, host.Options{}); err != nil {
		return nil, nil, fmt.Errorf("console: host input: %w", err)
	}
	owned[0] = -1
	if c.out, err = host.NewFile(outFD, host.Options{}); err != nil {
		return nil, nil, fmt.Errorf("console: host output: %w", err)
	}
	owned[1] = -1
	c.SyncWindowSize()
	go c.relayIn()
	go c.relayOut()
	go c.pollWindowSize()
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
	ws, err := unix.IoctlGetWinsize(c.ctlFD, unix.TIOCGWINSZ)
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

func (c *Console) pollWindowSize() {
	tick := time.NewTicker(winsizePoll)
	defer tick.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-tick.C:
			c.SyncWindowSize()
		}
	}
}

// wait blocks until e's channel fires or the console stops; it reports
// false for a stop.
func (c *Console) wait(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	case <-c.stop:
		return false
	}
}

// relayIn copies the host terminal's input to the master until the host
// terminal hangs up or the console stops.
func (c *Console) relayIn() {
	defer close(c.inDone)
	ctx := kernel.Background()
	e, ch := waiter.NewChannelEntry(waiter.EventIn | waiter.EventHUp | waiter.EventErr)
	c.in.EventRegister(e)
	defer c.in.EventUnregister(e)
	we, wch := waiter.NewChannelEntry(waiter.EventOut)
	c.master.EventRegister(we)
	defer c.master.EventUnregister(we)
	buf := make([]byte, 4096)
	for {
		n, err := c.in.Read(ctx, buf)
		if errors.Is(err, syserror.ErrWouldBlock) {
			if !c.wait(ch) {
				return
			}
			continue
		}
		if n == 0 || err != nil {
			c.log.Debug("console: host terminal input ended", "err", err)
			return
		}
		if !c.writeAll(c.master, buf[:n], wch) {
			return
		}
	}
}

// relayOut copies the terminal's output to the host until every slave
// has closed (the master reads EIO) or the console stops.
func (c *Console) relayOut() {
	defer close(c.outDone)
	ctx := kernel.Background()
	e, ch := waiter.NewChannelEntry(waiter.EventIn | waiter.EventHUp)
	c.master.EventRegister(e)
	defer c.master.EventUnregister(e)
	we, wch := waiter.NewChannelEntry(waiter.EventOut)
	c.out.EventRegister(we)
	defer c.out.EventUnregister(we)
	buf := make([]byte, 4096)
	for {
		n, err := c.master.Read(ctx, buf)
		if errors.Is(err, syserror.ErrWouldBlock) {
			if !c.wait(ch) {
				return
			}
			continue
		}
		if n == 0 || err != nil {
			return
		}
		if !c.writeAll(c.out, buf[:n], wch) {
			return
		}
	}
}

// writeAll writes b to f, waiting on wch (f's EventOut) when it is full.
// It reports false when the write failed or the console stopped.
func (c *Console) writeAll(f *fs.FileDescription, b []byte, wch <-chan struct{}) bool {
	ctx := kernel.Background()
	for len(b) > 0 {
		n, err := f.Write(ctx, b)
		b = b[n:]
		if errors.Is(err, syserror.ErrWouldBlock) {
			if !c.wait(wch) {
				return false
			}
			continue
		}
		if err != nil {
			c.log.Debug("console: write failed", "err", err)
			return false
		}
	}
	return true
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

// closeNow stops the relay, gives the host terminal its modes back and
// closes the master, which hangs up the terminal for any process still
// holding it.
func (c *Console) closeNow() {
	c.stopOnce.Do(func() { close(c.stop) })
	<-c.outDone
	<-c.inDone
	c.release()
}

// release restores the host terminal and closes everything the console
// holds; the relays must have ended (or never started).
func (c *Console) release() {
	if c.saved != nil {
		unix.IoctlSetTermios(c.ctlFD, unix.TCSETS, c.saved)
	}
	if c.ctlFD >= 0 {
		unix.Close(c.ctlFD)
	}
	for _, f := range []*fs.FileDescription{c.in, c.out, c.master} {
		if f != nil {
			f.DecRef()
		}
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
