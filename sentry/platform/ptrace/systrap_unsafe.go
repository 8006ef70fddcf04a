package ptrace

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/platform"
)

// commPage is the head of a worker's region, as systrap_stub_amd64.go's
// comm* offsets lay it out. The application can write it at any time.
type commPage struct {
	state         uint32
	sentryWaiting uint32
	workerWaiting uint32
	signo         uint32
	info          uint64
	uc            uint64
	fsFlag        uint32
	_             uint32
	fsBase        uint64
	initErrno     uint32
	spin          uint32
	gsBase        uint64
	ssSp          uint64 // the stack_t sigaltstack takes
	ssFlags       int32
	_             int32
	ssSize        uint64
}

func init() {
	var c commPage
	if unsafe.Offsetof(c.info) != commInfo || unsafe.Offsetof(c.fsBase) != commFSBase ||
		unsafe.Offsetof(c.spin) != commSpin || unsafe.Offsetof(c.gsBase) != commGSBase || unsafe.Offsetof(c.ssSp) != commAltstack {
		panic("systrap: commPage does not match the stub's offsets")
	}
}

func (s *systrap) comm(r int) *commPage {
	return (*commPage)(unsafe.Pointer(&s.mem[r*regionSize]))
}

// slot returns slot r's bytes in the Sentry's mapping.
func (s *systrap) slot(r int) []byte {
	return s.mem[r*regionSize : (r+1)*regionSize : (r+1)*regionSize]
}

// resetRegion prepares slot r for a new worker. The whole slot is
// cleared, the alternate stack too: the first frame of a new worker lies
// 128 bytes lower than later ones, so a region another process used would
// otherwise show it the end of that process's last signal frame (the top
// of its xsave area: AVX-512 registers).
func (s *systrap) resetRegion(r int) {
	clear(s.slot(r))
	c := s.comm(r)
	c.ssSp = uint64(regionAddr(r) + altstackOff)
	c.ssSize = regionSize - altstackOff
	atomic.StoreUint32(&c.state, stateRunning)
}

// setNoSpin sets the handler's commNoSpin byte of system call nr.
func (c *commPage) setNoSpin(nr int, on bool) {
	var v byte
	if on {
		v = 1
	}
	(*[noSpinCalls]byte)(unsafe.Add(unsafe.Pointer(c), commNoSpin))[nr] = v
}

func (c *commPage) loadState() uint32         { return atomic.LoadUint32(&c.state) }
func (c *commPage) swapState(v uint32) uint32 { return atomic.SwapUint32(&c.state, v) }
func (c *commPage) loadSigno() int32          { return int32(atomic.LoadUint32(&c.signo)) }
func (c *commPage) initErr() int32            { return int32(atomic.LoadUint32(&c.initErrno)) }
func (c *commPage) workerSleeps() bool        { return atomic.LoadUint32(&c.workerWaiting) != 0 }

// wake wakes whoever waits on the state word.
func (c *commPage) wake() {
	unix.RawSyscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(&c.state)), futexWake, 1, 0, 0, 0)
}

// wait waits until the state is no longer old, or timeout (if not 0)
// passed, and returns it; it spins spin times first.
func (c *commPage) wait(old uint32, spin int, timeout time.Duration) uint32 {
	for i := 0; i < spin; i++ {
		if st := atomic.LoadUint32(&c.state); st != old {
			return st
		}
		spinPause()
	}
	var deadline time.Time
	if timeout != 0 {
		deadline = time.Now().Add(timeout)
	}
	for {
		atomic.SwapUint32(&c.sentryWaiting, 1)
		if st := atomic.LoadUint32(&c.state); st != old {
			atomic.StoreUint32(&c.sentryWaiting, 0)
			return st
		}
		var tsp uintptr
		var ts unix.Timespec
		if timeout != 0 {
			left := time.Until(deadline)
			if left <= 0 {
				atomic.StoreUint32(&c.sentryWaiting, 0)
				return atomic.LoadUint32(&c.state)
			}
			ts = unix.NsecToTimespec(int64(left))
			tsp = uintptr(unsafe.Pointer(&ts))
		}
		unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(&c.state)), futexWait, uintptr(old), tsp, 0, 0)
	}
}

func spinPause()

// sigcontext is struct sigcontext (amd64): uc_mcontext.
type sigcontext struct {
	R8, R9, R10, R11, R12, R13, R14, R15 uint64
	Rdi, Rsi, Rbp, Rbx, Rdx, Rax, Rcx    uint64
	Rsp, Rip, Eflags                     uint64
	Cs, Gs, Fs, Ss                       uint16
	Err, Trapno, Oldmask, Cr2            uint64
	Fpstate                              uint64
	Reserved                             [8]uint64
}

// ucontext is struct ucontext (amd64), as the kernel writes it.
type ucontext struct {
	Flags    uint64
	Link     uint64
	SsSp     uint64
	SsFlags  int32
	_        int32
	SsSize   uint64
	Mcontext sigcontext
	Sigmask  uint64
}

const (
	ucontextSize = unsafe.Sizeof(ucontext{})
	siginfoSize  = 128
	fxsaveSize   = 512
	xsaveHdrEnd  = 576
	fpMagic1     = 0x46505853 // FP_XSTATE_MAGIC1
)

// inSlot says whether [off, off+n) lies in a slot's alternate stack.
func inSlot(off, n uintptr) bool {
	return off >= altstackOff && off <= regionSize && n <= regionSize-off
}

// trapFrame reads and checks where the worker's last trap put its frame.
func (w *worker) trapFrame(s *systrap) error {
	base := regionAddr(w.region)
	slot := s.slot(w.region)
	uc := uintptr(atomic.LoadUint64(&w.comm.uc)) - base
	info := uintptr(atomic.LoadUint64(&w.comm.info)) - base
	if !inSlot(uc, ucontextSize) || uc%8 != 0 || !inSlot(info, siginfoSize) || info%8 != 0 {
		return fmt.Errorf("systrap worker %d: signal frame outside its region", w.tid)
	}
	u := (*ucontext)(unsafe.Pointer(&slot[uc]))
	fp := uintptr(u.Mcontext.Fpstate) - base
	if !inSlot(fp, fxsaveSize) || fp%64 != 0 {
		return fmt.Errorf("systrap worker %d: FP state outside its region", w.tid)
	}
	f := frameRef{uc: uc, info: info, fp: fp, fpSize: fxsaveSize, fpMask: 3}
	sw := slot[fp+464 : fp+512]
	if binary.LittleEndian.Uint32(sw) == fpMagic1 {
		size := uintptr(binary.LittleEndian.Uint32(sw[16:]))
		if size >= xsaveHdrEnd && inSlot(fp, size) {
			f.fpSize = size
			f.fpMask = binary.LittleEndian.Uint64(sw[8:])
		}
	}
	w.frame = f
	return nil
}

// getRegs copies the registers of the worker's frame into regs, and
// returns the signal's information.
func (w *worker) getRegs(s *systrap, regs *arch.Registers) *platform.SignalInfo {
	slot := s.slot(w.region)
	mc := (*ucontext)(unsafe.Pointer(&slot[w.frame.uc])).Mcontext
	regs.R8, regs.R9, regs.R10, regs.R11 = mc.R8, mc.R9, mc.R10, mc.R11
	regs.R12, regs.R13, regs.R14, regs.R15 = mc.R12, mc.R13, mc.R14, mc.R15
	regs.Rdi, regs.Rsi, regs.Rbp, regs.Rbx = mc.Rdi, mc.Rsi, mc.Rbp, mc.Rbx
	regs.Rdx, regs.Rax, regs.Rcx, regs.Rsp = mc.Rdx, mc.Rax, mc.Rcx, mc.Rsp
	regs.Rip, regs.Eflags = mc.Rip, mc.Eflags
	regs.Cs, regs.Ss = 0x33, 0x2b
	info := &w.info
	copy(info.Raw[:], slot[w.frame.info:w.frame.info+siginfoSize])
	info.Signo = int32(atomic.LoadUint32(&w.comm.signo))
	info.Errno = int32(binary.LittleEndian.Uint32(info.Raw[4:]))
	info.Code = int32(binary.LittleEndian.Uint32(info.Raw[8:]))
	info.Addr = binary.LittleEndian.Uint64(info.Raw[16:])
	return info
}

// putRegs writes regs into the worker's frame, for its sigreturn.
func (w *worker) putRegs(s *systrap, regs *arch.Registers) error {
	base := regionAddr(w.region)
	slot := s.slot(w.region)
	u := (*ucontext)(unsafe.Pointer(&slot[w.frame.uc]))
	mc := &u.Mcontext
	mc.R8, mc.R9, mc.R10, mc.R11 = regs.R8, regs.R9, regs.R10, regs.R11
	mc.R12, mc.R13, mc.R14, mc.R15 = regs.R12, regs.R13, regs.R14, regs.R15
	mc.Rdi, mc.Rsi, mc.Rbp, mc.Rbx = regs.Rdi, regs.Rsi, regs.Rbp, regs.Rbx
	mc.Rdx, mc.Rax, mc.Rcx, mc.Rsp = regs.Rdx, regs.Rax, regs.Rcx, regs.Rsp
	mc.Rip, mc.Eflags = regs.Rip, regs.Eflags
	mc.Cs, mc.Ss = 0x33, 0x2b
	mc.Fpstate = uint64(base + w.frame.fp)
	u.SsSp, u.SsFlags, u.SsSize = uint64(base+altstackOff), 0, regionSize-altstackOff
	u.Sigmask = 0
	var flag uint32
	if regs.Fs_base != w.fsBase {
		w.comm.fsBase = regs.Fs_base
		w.fsBase = regs.Fs_base
		flag |= 1
	}
	if regs.Gs_base != w.gsBase {
		w.comm.gsBase = regs.Gs_base
		w.gsBase = regs.Gs_base
		flag |= 2
	}
	if flag != 0 {
		atomic.StoreUint32(&w.comm.fsFlag, flag)
	}
	return nil
}

// fpState returns a copy of the frame's FP state (xsave layout).
func (w *worker) fpState(s *systrap) []byte {
	slot := s.slot(w.region)
	out := make([]byte, w.frame.fpSize)
	copy(out, slot[w.frame.fp:w.frame.fp+w.frame.fpSize])
	return out
}

// setFPState replaces the frame's FP state with state, keeping the frame's
// own software-reserved bytes (which say what the frame holds) and
// clearing what would make the host refuse it.
func (w *worker) setFPState(s *systrap, state []byte) {
	slot := s.slot(w.region)
	dst := slot[w.frame.fp : w.frame.fp+w.frame.fpSize]
	mask := binary.LittleEndian.Uint32(dst[28:])
	if mask == 0 {
		mask = 0xffbf
	}
	copy(dst[:464], state)
	if len(state) > 512 {
		copy(dst[512:], state[512:])
	}
	binary.LittleEndian.PutUint32(dst[24:], binary.LittleEndian.Uint32(dst[24:])&mask)
	binary.LittleEndian.PutUint32(dst[28:], mask)
	if len(dst) >= xsaveHdrEnd {
		bv := binary.LittleEndian.Uint64(dst[512:]) & w.frame.fpMask
		if len(state) <= 512 {
			bv = 3 // x87 and SSE as given, the rest in its initial state
		}
		binary.LittleEndian.PutUint64(dst[512:], bv)
		clear(dst[520:xsaveHdrEnd])
	}
}

// systrapAvailable checks that the host kernel has SECCOMP_RET_TRAP.
func systrapAvailable() error {
	const getActionAvail = 2 // SECCOMP_GET_ACTION_AVAIL
	action := uint32(seccompRetTrap)
	_, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, getActionAvail, 0, uintptr(unsafe.Pointer(&action)))
	if errno != 0 {
		return errno
	}
	return nil
}
