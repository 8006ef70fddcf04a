package devpts

import (
	"encoding/binary"
	"sort"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/synth"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/syserror"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

// Device numbers.
var (
	// PtmxDev is /dev/ptmx.
	PtmxDev = unix.Mkdev(5, 2)
	// slaveMajor is the major number of /dev/pts/N.
	slaveMajor uint32 = 136
)

// JobControl is implemented by the Contexts of tasks that belong to
// sessions (the kernel's Task). The kernel decides which terminal controls
// which process and enforces the job-control rules; the terminal records
// the session it controls and its foreground process group
// (Terminal.SetControlling), which its line discipline signals.
type JobControl interface {
	// IsControllingTTY reports whether t is the caller's controlling
	// terminal.
	IsControllingTTY(t *Terminal) bool
	// SetControllingTTY implements TIOCSCTTY: t becomes the controlling
	// terminal of the caller's session, which it must lead without one
	// (EPERM); a terminal controlling another session is EPERM unless
	// steal is set and the caller has CAP_SYS_ADMIN; a description not
	// open for reading needs CAP_SYS_ADMIN too.
	SetControllingTTY(t *Terminal, steal, readable bool) error
	// AcquireTTYOnOpen is called when t is opened for reading without
	// O_NOCTTY: a session leader without a controlling terminal
	// acquires t if it controls no session.
	AcquireTTYOnOpen(t *Terminal)
	// ReleaseControllingTTY implements TIOCNOTTY: ENOTTY unless t is the
	// caller's controlling terminal; the caller loses it, and if it
	// leads the session the whole session does, its foreground group
	// getting SIGHUP and SIGCONT.
	ReleaseControllingTTY(t *Terminal) error
	// SetForegroundProcessGroup implements TIOCSPGRP once the job
	// control check passed: ENOTTY unless t controls the caller's
	// session, ESRCH for no such group in the caller's PID namespace
	// (pgid is its number there), EPERM for one of another session.
	SetForegroundProcessGroup(t *Terminal, pgid int32) error
	// CheckTTYAccess is Linux's tty_check_change for the caller's use of
	// t: nil unless t is its controlling terminal and it is not in the
	// foreground process group. Then, with sig (SIGTTIN for reads,
	// SIGTTOU for output and changes) blocked or ignored: nil for
	// SIGTTOU, EIO for SIGTTIN; from an orphaned process group: EIO;
	// otherwise sig goes to the caller's process group and the call
	// returns ERESTARTSYS, to be redone once the group is continued.
	CheckTTYAccess(t *Terminal, sig unix.Signal) error
}

// JobIDs is implemented by callers that live in a PID namespace: a
// terminal keeps its foreground group and session as the kernel's root
// ids, and TIOCGPGRP and TIOCGSID report them as the caller's namespace
// numbers them.
type JobIDs interface {
	// TTYID returns the id, in the caller's PID namespace, of the
	// process group or session with root id id: 0 when it is not
	// visible there.
	TTYID(id int32) int32
}

// callerID returns the id as the caller of ctx sees it (see JobIDs).
func callerID(ctx fs.Context, id int32) int32 {
	if j, ok := ctx.(JobIDs); ok && id != 0 {
		return j.TTYID(id)
	}
	return id
}

// Controller is the kernel side of a terminal that controls a session,
// given to SetControlling: it delivers the terminal's signals and its
// hang-up.
type Controller interface {
	Signaller
	// Hangup is called when the master side closes: every process of
	// the session loses the terminal, and the session leader gets
	// SIGHUP and SIGCONT.
	Hangup(t *Terminal)
}

// Devpts is an instance of the pseudo-terminal file system.
type Devpts struct {
	sig  Signaller
	opts Options

	mu    sync.Mutex
	terms map[int32]*Terminal
	next  int32
}

// New returns the devpts directory node (to place at /dev/pts) and the
// ptmx device node (for /dev/ptmx). sig receives terminal signals (nil:
// none are sent).
func New(sig Signaller) (pts fs.Node, ptmx fs.Node, dp *Devpts) {
	return newDevpts(sig, DefaultOptions())
}

func newDevpts(sig Signaller, o Options) (pts fs.Node, ptmx fs.Node, dp *Devpts) {
	dp = &Devpts{sig: sig, opts: o, terms: make(map[int32]*Terminal)}
	ptmxNode := &synth.Device{Attr: synth.Attr{Mode: 0o666}, Rdev: PtmxDev, OpenFile: dp.openMaster}
	dir := &synth.DynamicDir{Attr: synth.Attr{Mode: 0o755}}
	dir.Names = func(fs.Context) []string {
		dp.mu.Lock()
		ids := make([]int, 0, len(dp.terms))
		for i := range dp.terms {
			ids = append(ids, int(i))
		}
		dp.mu.Unlock()
		sort.Ints(ids)
		names := []string{"ptmx"}
		for _, i := range ids {
			names = append(names, strconv.Itoa(i))
		}
		return names
	}
	ptsPtmx := &synth.Device{Attr: synth.Attr{Mode: o.PtmxMode}, Rdev: PtmxDev, OpenFile: dp.openMaster}
	dir.Get = func(_ fs.Context, name string) (fs.Node, error) {
		if name == "ptmx" {
			return ptsPtmx, nil
		}
		i, err := strconv.ParseInt(name, 10, 32)
		if err != nil || strconv.Itoa(int(i)) != name {
			return nil, unix.ENOENT
		}
		dp.mu.Lock()
		t, ok := dp.terms[int32(i)]
		dp.mu.Unlock()
		if !ok {
			return nil, unix.ENOENT
		}
		return t.slaveNode(), nil
	}
	return dir, ptmxNode, dp
}

// openMaster allocates a new terminal (open of /dev/ptmx), owned by the
// mount's uid= and gid=, or else by the opener's filesystem user and
// group.
func (dp *Devpts) openMaster(ctx fs.Context, vd fs.VirtualDentry, flags uint32) (*fs.FileDescription, error) {
	var uid auth.KUID
	var gid auth.KGID
	if c := ctx.Credentials(); c != nil {
		uid, gid = c.FilesystemUID, c.FilesystemGID
	}
	if dp.opts.SetUID {
		uid = auth.KUID(dp.opts.UID)
	}
	if dp.opts.SetGID {
		gid = auth.KGID(dp.opts.GID)
	}
	dp.mu.Lock()
	idx := int32(0)
	for ; ; idx++ {
		if _, used := dp.terms[idx]; !used {
			break
		}
	}
	t := &Terminal{index: idx, dp: dp, termios: defaultTermios(), locked: true, masters: 1, ino: fs.NewIno(), uid: uid, gid: gid}
	dp.terms[idx] = t
	dp.mu.Unlock()
	return fs.NewFileDescription(&masterFile{t: t}, vd, flags, fs.FDOptions{Stream: true}), nil
}

func (dp *Devpts) release(t *Terminal) {
	dp.mu.Lock()
	if dp.terms[t.index] == t {
		delete(dp.terms, t.index)
	}
	dp.mu.Unlock()
}

// slaveNode is the node of /dev/pts/N.
type slaveNode struct {
	synth.Attr
	t *Terminal
}

func (t *Terminal) slaveNode() *slaveNode {
	return &slaveNode{Attr: synth.Attr{Mode: t.dp.opts.Mode}, t: t}
}

// Stat implements fs.Node.
func (n *slaveNode) Stat(fs.Context) (fs.Stat, error) {
	return fs.Stat{Mode: unix.S_IFCHR | n.t.dp.opts.Mode, Nlink: 1, Ino: n.t.ino, UID: n.t.uid, GID: n.t.gid, Rdev: unix.Mkdev(slaveMajor, uint32(n.t.index)), Blksize: 1024}, nil
}

// Open implements fs.OpenNode: EIO while locked or once the master is
// gone.
func (n *slaveNode) Open(ctx fs.Context, vd fs.VirtualDentry, flags uint32) (*fs.FileDescription, error) {
	t := n.t
	t.mu.Lock()
	if t.locked || t.masters == 0 {
		t.mu.Unlock()
		return nil, unix.EIO
	}
	if t.excl && !ctx.Credentials().HasCapability(unix.CAP_SYS_ADMIN) {
		t.mu.Unlock()
		return nil, unix.EBUSY
	}
	t.slaves++
	t.opened = true
	t.mu.Unlock()
	fd := fs.NewFileDescription(&slaveFile{t: t}, vd, flags, fs.FDOptions{Stream: true})
	if flags&unix.O_NOCTTY == 0 && fd.Readable() {
		if jc, ok := ctx.(JobControl); ok {
			jc.AcquireTTYOnOpen(t)
		}
	}
	return fd, nil
}

// OpenSlave opens the slave of t as the file at vd, the path it was
// reached by (the kernel's /dev/tty: fstat and /proc/self/fd show
// /dev/tty, as on Linux). It never acquires a controlling terminal.
func (t *Terminal) OpenSlave(ctx fs.Context, vd fs.VirtualDentry, flags uint32) (*fs.FileDescription, error) {
	return t.slaveNode().Open(ctx, vd, flags|unix.O_NOCTTY)
}

func copyOutInt(ctx fs.Context, addr uintptr, v int32) error {
	if _, err := ctx.CopyOutBytes(addr, binary.LittleEndian.AppendUint32(nil, uint32(v))); err != nil {
		return unix.EFAULT
	}
	return nil
}

func copyInInt(ctx fs.Context, addr uintptr) (int32, error) {
	var b [4]byte
	if _, err := ctx.CopyInBytes(addr, b[:]); err != nil {
		return 0, unix.EFAULT
	}
	return int32(binary.LittleEndian.Uint32(b[:])), nil
}

// commonIoctl serves the requests both ends answer; master tells which
// end fd is.
func (t *Terminal) commonIoctl(ctx fs.Context, fd *fs.FileDescription, master bool, cmd uint32, arg uintptr) (uintptr, error, bool) {
	switch cmd {
	case unix.TCGETS:
		tm := t.getTermios()
		if _, err := ctx.CopyOutBytes(arg, tm.marshal()); err != nil {
			return 0, unix.EFAULT, true
		}
		return 0, nil, true
	case unix.TCSETS, unix.TCSETSW, unix.TCSETSF:
		if err := t.checkAccess(ctx, unix.SIGTTOU); err != nil {
			return 0, err, true
		}
		b := make([]byte, termiosSize)
		if _, err := ctx.CopyInBytes(arg, b); err != nil {
			return 0, unix.EFAULT, true
		}
		if cmd == unix.TCSETSF {
			t.flushInput()
		}
		t.setTermios(unmarshalTermios(b))
		return 0, nil, true
	case unix.TCFLSH, unix.TCSBRK, unix.TCSBRKP, unix.TCXONC:
		// Linux checks the end the request came on, and a master is
		// never a controlling terminal.
		if !master {
			if err := t.checkAccess(ctx, unix.SIGTTOU); err != nil {
				return 0, err, true
			}
		}
		switch cmd {
		case unix.TCFLSH:
			// Output is delivered to the other end at once, so only
			// each end's own input is there to flush: the slave's
			// input, or for the master the slave's output.
			if arg > unix.TCIOFLUSH {
				return 0, unix.EINVAL, true
			}
			if arg == unix.TCIFLUSH || arg == unix.TCIOFLUSH {
				if master {
					t.flushOutput()
				} else {
					t.flushInput()
				}
			}
		case unix.TCXONC:
			// TCOOFF and TCOON stop and start the slave's output;
			// a pseudo-terminal's input has no device to stop.
			if arg > unix.TCION {
				return 0, unix.EINVAL, true
			}
			if !master && (arg == unix.TCOOFF || arg == unix.TCOON) {
				t.setFlow(arg == unix.TCOOFF)
			}
		}
		// TCSBRK and TCSBRKP (tcdrain, tcsendbreak): output is
		// already delivered and a pseudo-terminal has no line to
		// break.
		return 0, nil, true
	case unix.TIOCOUTQ:
		return 0, copyOutInt(ctx, arg, 0), true
	case unix.TIOCGETD:
		return 0, copyOutInt(ctx, arg, 0), true // N_TTY
	case unix.TIOCSETD:
		d, err := copyInInt(ctx, arg)
		if err != nil {
			return 0, err, true
		}
		if d != 0 {
			return 0, unix.EINVAL, true
		}
		return 0, nil, true
	case unix.TIOCEXCL, unix.TIOCNXCL:
		t.mu.Lock()
		if master {
			t.masterExcl = cmd == unix.TIOCEXCL
		} else {
			t.excl = cmd == unix.TIOCEXCL
		}
		t.mu.Unlock()
		return 0, nil, true
	case unix.TIOCGEXCL:
		t.mu.Lock()
		e := t.excl
		if master {
			e = t.masterExcl
		}
		t.mu.Unlock()
		v := int32(0)
		if e {
			v = 1
		}
		return 0, copyOutInt(ctx, arg, v), true
	case unix.TIOCGWINSZ:
		ws := t.getWinsize()
		b := make([]byte, 8)
		binary.LittleEndian.PutUint16(b[0:], ws.Row)
		binary.LittleEndian.PutUint16(b[2:], ws.Col)
		binary.LittleEndian.PutUint16(b[4:], ws.Xpixel)
		binary.LittleEndian.PutUint16(b[6:], ws.Ypixel)
		if _, err := ctx.CopyOutBytes(arg, b); err != nil {
			return 0, unix.EFAULT, true
		}
		return 0, nil, true
	case unix.TIOCSWINSZ:
		b := make([]byte, 8)
		if _, err := ctx.CopyInBytes(arg, b); err != nil {
			return 0, unix.EFAULT, true
		}
		t.setWinsize(unix.Winsize{Row: binary.LittleEndian.Uint16(b[0:]), Col: binary.LittleEndian.Uint16(b[2:]),
			Xpixel: binary.LittleEndian.Uint16(b[4:]), Ypixel: binary.LittleEndian.Uint16(b[6:])})
		return 0, nil, true
	case unix.TIOCGPGRP, unix.TIOCSPGRP, unix.TIOCGSID, unix.TIOCSCTTY, unix.TIOCNOTTY:
		r, err := t.jobIoctl(ctx, fd, master, cmd, arg)
		return r, err, true
	}
	return 0, nil, false
}

// checkAccess is the job-control check of the caller's use of t (see
// JobControl.CheckTTYAccess); callers without sessions pass.
func (t *Terminal) checkAccess(ctx fs.Context, sig unix.Signal) error {
	if jc, ok := ctx.(JobControl); ok {
		return jc.CheckTTYAccess(t, sig)
	}
	return nil
}

// jobIoctl serves the job-control requests. As on Linux, on the master
// end TIOCSCTTY binds the slave, TIOCGPGRP and TIOCGSID work for any
// caller, and TIOCSPGRP and TIOCNOTTY are ENOTTY (a master controls
// nothing).
func (t *Terminal) jobIoctl(ctx fs.Context, fd *fs.FileDescription, master bool, cmd uint32, arg uintptr) (uintptr, error) {
	jc, ok := ctx.(JobControl)
	if !ok {
		return 0, unix.ENOTTY
	}
	switch cmd {
	case unix.TIOCSCTTY:
		return 0, jc.SetControllingTTY(t, arg == 1, fd.Readable())
	case unix.TIOCNOTTY:
		if master {
			return 0, unix.ENOTTY
		}
		return 0, jc.ReleaseControllingTTY(t)
	case unix.TIOCGPGRP:
		if !master && !jc.IsControllingTTY(t) {
			return 0, unix.ENOTTY
		}
		return 0, copyOutInt(ctx, arg, callerID(ctx, t.ForegroundPgrp()))
	case unix.TIOCGSID:
		if !master && !jc.IsControllingTTY(t) {
			return 0, unix.ENOTTY
		}
		sid := t.Session()
		if sid == 0 {
			return 0, unix.ENOTTY
		}
		return 0, copyOutInt(ctx, arg, callerID(ctx, sid))
	default: // TIOCSPGRP
		if err := jc.CheckTTYAccess(t, unix.SIGTTOU); err != nil {
			if err == unix.EIO {
				return 0, unix.ENOTTY
			}
			return 0, err
		}
		pg, err := copyInInt(ctx, arg)
		if err != nil {
			return 0, err
		}
		if pg < 0 {
			return 0, unix.EINVAL
		}
		if master {
			// A master is never a controlling terminal.
			return 0, unix.ENOTTY
		}
		return 0, jc.SetForegroundProcessGroup(t, pg)
	}
}

// masterFile is an open /dev/ptmx.
type masterFile struct {
	fs.FileDefaults
	t *Terminal
}

func (f *masterFile) Read(_ fs.Context, _ *fs.FileDescription, dst []byte, _ int64) (int, error) {
	return f.t.masterRead(dst)
}

func (f *masterFile) Write(_ fs.Context, _ *fs.FileDescription, src []byte, _ int64) (int, error) {
	return f.t.masterWrite(src)
}

func (f *masterFile) Ioctl(ctx fs.Context, fd *fs.FileDescription, cmd uint32, arg uintptr) (uintptr, error) {
	t := f.t
	switch cmd {
	case unix.TIOCGPTN:
		return 0, copyOutInt(ctx, arg, t.index)
	case unix.TIOCSPTLCK:
		v, err := copyInInt(ctx, arg)
		if err != nil {
			return 0, err
		}
		t.mu.Lock()
		t.locked = v != 0
		t.mu.Unlock()
		return 0, nil
	case unix.TIOCGPTLCK:
		t.mu.Lock()
		l := t.locked
		t.mu.Unlock()
		v := int32(0)
		if l {
			v = 1
		}
		return 0, copyOutInt(ctx, arg, v)
	case unix.TIOCINQ:
		t.mu.Lock()
		n := len(t.out)
		t.mu.Unlock()
		return 0, copyOutInt(ctx, arg, int32(n))
	}
	if r, err, ok := t.commonIoctl(ctx, fd, true, cmd, arg); ok {
		return r, err
	}
	return 0, unix.ENOTTY
}

func (f *masterFile) Readiness(mask waiter.EventMask) waiter.EventMask {
	t := f.t
	t.mu.Lock()
	defer t.mu.Unlock()
	var r waiter.EventMask
	if len(t.out) > 0 {
		r |= waiter.EventIn | waiter.EventRdNorm
	}
	if t.opened && t.slaves == 0 {
		r |= waiter.EventHUp
	}
	if len(t.ready)+len(t.line) < queueMax {
		r |= waiter.EventOut | waiter.EventWrNorm
	}
	return r & (mask | waiter.EventHUp)
}

func (f *masterFile) EventRegister(e *waiter.Entry)   { f.t.masterQ.EventRegister(e) }
func (f *masterFile) EventUnregister(e *waiter.Entry) { f.t.masterQ.EventUnregister(e) }

// AsyncEvents implements fs.AsyncFile: O_ASYNC signals when output
// arrives.
func (f *masterFile) AsyncEvents(*fs.FileDescription) waiter.EventMask { return waiter.EventIn }

func (f *masterFile) Release() {
	t := f.t
	t.mu.Lock()
	t.masters--
	gone := t.masters == 0
	t.mu.Unlock()
	if gone {
		t.hangup()
		t.dp.release(t)
		t.slaveQ.Notify(waiter.EventIn | waiter.EventHUp)
	}
}

// slaveFile is an open /dev/pts/N.
type slaveFile struct {
	fs.FileDefaults
	t *Terminal

	// mu guards deadline, the end of the VTIME wait of a timed read in
	// progress on this description (zero: none).
	mu       sync.Mutex
	deadline time.Time
}

// staleTimedRead is how long past its deadline a VTIME wait is taken for
// the leftover of an interrupted read, and started again.
const staleTimedRead = time.Second

// timedRead handles a read with VMIN 0 and VTIME d that found no input:
// the first call starts the wait (a timer wakes the reader at the end),
// and a call once it is over returns end of file.
func (f *slaveFile) timedRead(d time.Duration) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	if !f.deadline.IsZero() && !now.Before(f.deadline) && now.Sub(f.deadline) < staleTimedRead {
		f.deadline = time.Time{}
		return 0, nil
	}
	if f.deadline.IsZero() || now.Sub(f.deadline) >= staleTimedRead {
		f.deadline = now.Add(d)
		time.AfterFunc(d, func() { f.t.slaveQ.Notify(waiter.EventIn) })
	}
	return 0, syserror.ErrWouldBlock
}

// A slave whose master closed is hung up, as Linux's hung_up_tty_fops:
// reads see end of file, writes and ioctls fail with EIO (TIOCSPGRP with
// ENOTTY), and poll reports everything.

// hungUp reports whether the master side is gone.
func (t *Terminal) hungUp() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.masters == 0
}

// Read reads input; a background process of the terminal's session gets
// SIGTTIN instead (checked again after every wait, as the wait loop
// calls Read again).
func (f *slaveFile) Read(ctx fs.Context, fd *fs.FileDescription, dst []byte, _ int64) (int, error) {
	if f.t.hungUp() {
		return 0, nil
	}
	if err := f.t.checkAccess(ctx, unix.SIGTTIN); err != nil {
		return 0, err
	}
	n, err := f.t.slaveRead(dst, fd.NonBlocking())
	if d, ok := err.(timedRead); ok {
		return f.timedRead(time.Duration(d))
	}
	f.mu.Lock()
	f.deadline = time.Time{}
	f.mu.Unlock()
	return n, err
}

// Write writes output; with TOSTOP a background process of the
// terminal's session gets SIGTTOU instead.
func (f *slaveFile) Write(ctx fs.Context, _ *fs.FileDescription, src []byte, _ int64) (int, error) {
	if f.t.getTermios().Lflag&unix.TOSTOP != 0 {
		if err := f.t.checkAccess(ctx, unix.SIGTTOU); err != nil {
			return 0, err
		}
	}
	return f.t.slaveWrite(src)
}

func (f *slaveFile) Ioctl(ctx fs.Context, fd *fs.FileDescription, cmd uint32, arg uintptr) (uintptr, error) {
	if f.t.hungUp() {
		if cmd == unix.TIOCSPGRP {
			return 0, unix.ENOTTY
		}
		return 0, unix.EIO
	}
	switch cmd {
	case unix.TIOCINQ:
		return 0, copyOutInt(ctx, arg, int32(f.t.inq()))
	case tiocgptpeer:
		// The master's request (served by the ioctl syscall, which
		// makes the descriptor); on a slave Linux says EIO.
		return 0, unix.EIO
	}
	if r, err, ok := f.t.commonIoctl(ctx, fd, false, cmd, arg); ok {
		return r, err
	}
	return 0, unix.ENOTTY
}

func (f *slaveFile) Readiness(mask waiter.EventMask) waiter.EventMask {
	t := f.t
	t.mu.Lock()
	defer t.mu.Unlock()
	const everything = waiter.EventIn | waiter.EventOut | waiter.EventErr | waiter.EventHUp | waiter.EventRdNorm | waiter.EventWrNorm
	if t.masters == 0 {
		return everything & (mask | waiter.EventErr | waiter.EventHUp)
	}
	var r waiter.EventMask
	if t.slaveReadable() {
		r |= waiter.EventIn | waiter.EventRdNorm
	}
	if len(t.out) < queueMax && !t.stopped {
		r |= waiter.EventOut | waiter.EventWrNorm
	}
	return r & (mask | waiter.EventHUp)
}

func (f *slaveFile) EventRegister(e *waiter.Entry)   { f.t.slaveQ.EventRegister(e) }
func (f *slaveFile) EventUnregister(e *waiter.Entry) { f.t.slaveQ.EventUnregister(e) }

// AsyncEvents implements fs.AsyncFile: O_ASYNC signals when input
// arrives.
func (f *slaveFile) AsyncEvents(*fs.FileDescription) waiter.EventMask { return waiter.EventIn }

func (f *slaveFile) Release() {
	t := f.t
	t.mu.Lock()
	t.slaves--
	t.mu.Unlock()
	t.masterQ.Notify(waiter.EventIn | waiter.EventHUp)
}

// TerminalOf returns the terminal of a master or slave description, or
// nil if fd is neither.
func TerminalOf(fd *fs.FileDescription) *Terminal {
	switch f := fd.Impl().(type) {
	case *masterFile:
		return f.t
	case *slaveFile:
		return f.t
	}
	return nil
}

// tiocgptpeer is TIOCGPTPEER, _IO('T', 0x41).
const tiocgptpeer = 0x5441

// MasterTerminal returns the terminal of a master description (/dev/ptmx),
// or nil if fd is not one.
func MasterTerminal(fd *fs.FileDescription) *Terminal {
	if f, ok := fd.Impl().(*masterFile); ok {
		return f.t
	}
	return nil
}

// SlavePath returns the path of t's slave relative to the directory of
// the ptmx its master was opened at: "pts/N" beside /dev/ptmx, "N" beside
// /dev/pts/ptmx.
func (t *Terminal) SlavePath(master *fs.FileDescription) string {
	n := strconv.Itoa(int(t.index))
	if d := master.Dentry(); d != nil {
		if p := d.Parent(); p != nil && p.Name() == "pts" {
			return n
		}
	}
	return "pts/" + n
}
