package devpts

import (
	"encoding/binary"
	"sort"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/synth"
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
// sessions (the kernel's Task), for TIOCSCTTY, TIOCNOTTY, TIOCGPGRP,
// TIOCSPGRP and TIOCGSID.
type JobControl interface {
	ThreadGroupID() int32
	ProcessGroupID() int32
	SessionID() int32
	// ControllingTerminal returns the caller's session's terminal.
	ControllingTerminal() (*Terminal, bool)
	// SetControllingTerminal binds (t non-nil) or unbinds the caller's
	// session's terminal.
	SetControllingTerminal(t *Terminal)
	// ProcessGroupInSession reports whether pgid is a process group of
	// the caller's session.
	ProcessGroupInSession(pgid int32) bool
}

// Devpts is an instance of the pseudo-terminal file system.
type Devpts struct {
	sig Signaller

	mu    sync.Mutex
	terms map[int32]*Terminal
	next  int32
}

// New returns the devpts directory node (to place at /dev/pts) and the
// ptmx device node (for /dev/ptmx). sig receives terminal signals (nil:
// none are sent).
func New(sig Signaller) (pts fs.Node, ptmx fs.Node, dp *Devpts) {
	dp = &Devpts{sig: sig, terms: make(map[int32]*Terminal)}
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
	ptsPtmx := &synth.Device{Attr: synth.Attr{Mode: 0}, Rdev: PtmxDev, OpenFile: dp.openMaster}
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

// openMaster allocates a new terminal (open of /dev/ptmx).
func (dp *Devpts) openMaster(_ fs.Context, vd fs.VirtualDentry, flags uint32) (*fs.FileDescription, error) {
	dp.mu.Lock()
	idx := int32(0)
	for ; ; idx++ {
		if _, used := dp.terms[idx]; !used {
			break
		}
	}
	t := &Terminal{index: idx, dp: dp, termios: defaultTermios(), locked: true, masters: 1, ino: fs.NewIno()}
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
	return &slaveNode{Attr: synth.Attr{Mode: 0o620}, t: t}
}

// Stat implements fs.Node.
func (n *slaveNode) Stat(fs.Context) (fs.Stat, error) {
	return fs.Stat{Mode: unix.S_IFCHR | 0o620, Nlink: 1, Ino: n.t.ino, Rdev: unix.Mkdev(slaveMajor, uint32(n.t.index)), Blksize: 1024}, nil
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
	t.slaves++
	t.opened = true
	t.mu.Unlock()
	fd := fs.NewFileDescription(&slaveFile{t: t}, vd, flags, fs.FDOptions{Stream: true})
	if flags&unix.O_NOCTTY == 0 {
		// A session leader without a terminal acquires this one.
		if jc, ok := ctx.(JobControl); ok && jc.SessionID() == jc.ThreadGroupID() {
			if _, has := jc.ControllingTerminal(); !has && t.Session() == 0 {
				t.SetControlling(jc.SessionID(), jc.ProcessGroupID())
				jc.SetControllingTerminal(t)
			}
		}
	}
	return fd, nil
}

// OpenSlave opens the slave of t (for the kernel's /dev/tty).
func (t *Terminal) OpenSlave(ctx fs.Context, flags uint32) (*fs.FileDescription, error) {
	return t.slaveNode().Open(ctx, fs.VirtualDentry{Dentry: fs.NewAnonDentry(nil, "/dev/pts/"+strconv.Itoa(int(t.index)), t.slaveNode())}, flags|unix.O_NOCTTY)
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

// commonIoctl serves the requests both ends answer.
func (t *Terminal) commonIoctl(ctx fs.Context, cmd uint32, arg uintptr) (uintptr, error, bool) {
	switch cmd {
	case unix.TCGETS:
		tm := t.getTermios()
		if _, err := ctx.CopyOutBytes(arg, tm.marshal()); err != nil {
			return 0, unix.EFAULT, true
		}
		return 0, nil, true
	case unix.TCSETS, unix.TCSETSW, unix.TCSETSF:
		b := make([]byte, termiosSize)
		if _, err := ctx.CopyInBytes(arg, b); err != nil {
			return 0, unix.EFAULT, true
		}
		t.setTermios(unmarshalTermios(b))
		return 0, nil, true
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
		r, err := t.jobIoctl(ctx, cmd, arg)
		return r, err, true
	}
	return 0, nil, false
}

// jobIoctl serves the job-control requests.
func (t *Terminal) jobIoctl(ctx fs.Context, cmd uint32, arg uintptr) (uintptr, error) {
	jc, ok := ctx.(JobControl)
	if !ok {
		return 0, unix.ENOTTY
	}
	mine := func() bool {
		ct, ok := jc.ControllingTerminal()
		return ok && ct == t
	}
	switch cmd {
	case unix.TIOCSCTTY:
		if mine() {
			return 0, nil
		}
		if jc.SessionID() != jc.ThreadGroupID() {
			return 0, unix.EPERM
		}
		if _, has := jc.ControllingTerminal(); has {
			return 0, unix.EPERM
		}
		if s := t.Session(); s != 0 && !(arg == 1 && ctx.Credentials().HasCapability(unix.CAP_SYS_ADMIN)) {
			return 0, unix.EPERM
		}
		t.SetControlling(jc.SessionID(), jc.ProcessGroupID())
		jc.SetControllingTerminal(t)
		return 0, nil
	case unix.TIOCNOTTY:
		if !mine() {
			return 0, unix.ENOTTY
		}
		jc.SetControllingTerminal(nil)
		if jc.SessionID() == jc.ThreadGroupID() {
			t.signal(unix.SIGHUP)
			t.signal(unix.SIGCONT)
			t.SetControlling(0, 0)
		}
		return 0, nil
	}
	if !mine() {
		return 0, unix.ENOTTY
	}
	switch cmd {
	case unix.TIOCGPGRP:
		return 0, copyOutInt(ctx, arg, t.ForegroundPgrp())
	case unix.TIOCGSID:
		return 0, copyOutInt(ctx, arg, t.Session())
	default: // TIOCSPGRP
		pg, err := copyInInt(ctx, arg)
		if err != nil {
			return 0, err
		}
		if pg < 0 {
			return 0, unix.EINVAL
		}
		if !jc.ProcessGroupInSession(pg) {
			return 0, unix.EPERM
		}
		t.mu.Lock()
		t.pgrp = pg
		t.mu.Unlock()
		return 0, nil
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

func (f *masterFile) Ioctl(ctx fs.Context, _ *fs.FileDescription, cmd uint32, arg uintptr) (uintptr, error) {
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
	if r, err, ok := t.commonIoctl(ctx, cmd, arg); ok {
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

func (f *masterFile) Release() {
	t := f.t
	t.mu.Lock()
	t.masters--
	gone := t.masters == 0
	t.mu.Unlock()
	if gone {
		t.signal(unix.SIGHUP)
		t.dp.release(t)
		t.slaveQ.Notify(waiter.EventIn | waiter.EventHUp)
	}
}

// slaveFile is an open /dev/pts/N.
type slaveFile struct {
	fs.FileDefaults
	t *Terminal
}

func (f *slaveFile) Read(_ fs.Context, _ *fs.FileDescription, dst []byte, _ int64) (int, error) {
	return f.t.slaveRead(dst)
}

func (f *slaveFile) Write(_ fs.Context, _ *fs.FileDescription, src []byte, _ int64) (int, error) {
	return f.t.slaveWrite(src)
}

func (f *slaveFile) Ioctl(ctx fs.Context, _ *fs.FileDescription, cmd uint32, arg uintptr) (uintptr, error) {
	if cmd == unix.TIOCINQ {
		return 0, copyOutInt(ctx, arg, int32(f.t.inq()))
	}
	if r, err, ok := f.t.commonIoctl(ctx, cmd, arg); ok {
		return r, err
	}
	return 0, unix.ENOTTY
}

func (f *slaveFile) Readiness(mask waiter.EventMask) waiter.EventMask {
	t := f.t
	t.mu.Lock()
	defer t.mu.Unlock()
	var r waiter.EventMask
	if t.slaveReadable() {
		r |= waiter.EventIn | waiter.EventRdNorm
	}
	if t.masters == 0 {
		r |= waiter.EventIn | waiter.EventHUp
	}
	if len(t.out) < queueMax {
		r |= waiter.EventOut | waiter.EventWrNorm
	}
	return r & (mask | waiter.EventHUp)
}

func (f *slaveFile) EventRegister(e *waiter.Entry)   { f.t.slaveQ.EventRegister(e) }
func (f *slaveFile) EventUnregister(e *waiter.Entry) { f.t.slaveQ.EventUnregister(e) }

func (f *slaveFile) Release() {
	t := f.t
	t.mu.Lock()
	t.slaves--
	t.mu.Unlock()
	t.masterQ.Notify(waiter.EventIn | waiter.EventHUp)
}
