package ptrace

// The systrap mode (NewSystrap, runsc --platform=systrap) keeps the stub
// processes, their master threads and everything about address spaces, and
// runs application threads differently: each context has a worker thread in
// the stub process that is never traced. The worker installs, for itself
// only, a seccomp filter that turns every system call made outside the stub
// page into SIGSYS (SECCOMP_RET_TRAP), and a handler, on an alternate
// signal stack, for SIGSYS, the fault signals and the interrupt signal. The
// handler reports the signal in the worker's region and waits; the Sentry
// reads and writes the application's registers straight in the signal
// frame, then lets the handler return (rt_sigreturn), which resumes the
// application with them. A system call costs a signal delivery, two
// handoffs through shared memory and a sigreturn, and no ptrace stop.
//
// Regions: a memfd of the platform's (not the memory file: the platform
// owns no allocator of it) is cut into regionSize slots; a worker's slot is
// mapped MAP_SHARED in its stub process at regionBase + slot*regionSize
// (above arch.MaxUserAddress, below the stub page) by the master, and the
// Sentry maps the whole file once. A slot is the comm page (commPage) then
// the alternate signal stack, where the kernel puts the signal frame with
// the FP state. A slot is used again only once no thread can reach it:
// after the master unmapped it from a living stub, or once the stub process
// was reaped.
//
// Handoff: one state word (commState) per worker. The worker's handler
// sets stateTrapped and wakes the Sentry if it said it sleeps
// (commSentryWaiting); the Sentry sets stateRunning and wakes the worker
// if it sleeps (commWorkerWaiting). Each side spins a while, then marks
// itself sleeping, looks at the state again, and FUTEX_WAITs on it (a full
// barrier on each side between storing one word and loading the other, so
// no wake-up is lost). The worker is cloned with CLONE_CHILD_CLEARTID on
// the state word: when it dies for any reason the kernel stores 0
// (stateDead) and wakes the Sentry.
//
// Trust: application code can jump anywhere in the stub and write its
// region at any time (from another thread), so the filter allows only the
// handler's own system calls at their own instruction, and the Sentry reads
// the region once per trap, checks that the pointers the handler stored
// point into the slot, and rewrites the fields of the frame that the kernel
// checks (segments, the alternate stack, the FP state pointer). A hostile
// application can at worst break or kill its own stub process.
//
// Faults are fixed through a traced helper thread a context makes in its
// address space at its helperAfter-th fault (the earlier ones go through
// the master), so that MapFile for a fault costs what it does in ptrace
// mode.

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/platform"
)

const (
	// regionSize is a worker's slot: the comm page and the alternate
	// signal stack. The handler finds its slot by rounding rsp down to
	// it, so it is a power of two and slots are aligned to it.
	regionSize = 0x10000
	// altstackOff is where the alternate stack starts in a slot.
	altstackOff = 0x1000
	// regionBase is the stub address of slot 0.
	regionBase = arch.MaxUserAddress
	// maxRegions bounds the platform's slots, hence its live contexts.
	maxRegions = 8192
)

// Spin bounds, in PAUSE instructions (about 30 ns each here), before a
// side futex-waits. A handoff by spinning costs about a microsecond when
// the two sides run on different CPUs, one by futex several (two context
// switches); but spinning only pays when a CPU is free for each side, and
// on a busy machine it burns the time the other side needs. So each worker
// measures (worker.adapt): it runs a window of spinWindow handoffs
// sleeping at once (spinShort), following the Sentry thread's CPU as
// ptrace's threads do (worker.follow), then a window spinning (spinLong),
// kept off the Sentry thread's CPU (worker.avoid), cut short once it has
// taken longer than the first; it keeps the faster for the next spinRun
// handoffs, twice as many each time the same mode wins again (up to
// spinRunMax), then measures again. A new worker starts with the choice
// the last measurement made (worker.seed). Besides, the handler never
// spins on a system call the Sentry found to block (commNoSpin).
var (
	spinLong   = 500
	spinShort  = 50
	spinWindow = 64
	spinRun    = 2048
	spinRunMax = 1 << 16
	// spinFixed, if set, turns adapt off: "spin" or "sleep" (tests).
	spinFixed = ""
)

// systrap is the platform's systrap state: the regions file and its slots.
type systrap struct {
	fd  int
	mem []byte // the whole file, mapped in the Sentry
	// cpus are the CPUs the Sentry may run on, for worker.avoid.
	cpus unix.CPUSet

	mu    sync.Mutex
	freed []int
	next  int

	// mode is how the last worker to measure chose to wait (modeSpin,
	// modeSleep; modeSleep before any did): a new worker starts with it
	// rather than measuring first (worker.seed).
	mode atomic.Int32
}

// Values of systrap.mode.
const (
	modeSpin  = 1
	modeSleep = 2
)

// noSpinAfter is how long the Sentry may take over a system call before
// the call counts as one that blocks: about spinLong PAUSEs.
var noSpinAfter = 15 * time.Microsecond

// NewSystrap creates the platform in systrap mode. Like New, it must be
// called before the Sentry's seccomp filter is installed.
func NewSystrap(memfd int) (*Platform, error) {
	if err := systrapAvailable(); err != nil {
		return nil, fmt.Errorf("the systrap platform needs seccomp's SECCOMP_RET_TRAP: %w", err)
	}
	fd, err := unix.MemfdCreate("moat-systrap", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("creating the systrap regions file: %w", err)
	}
	// The stubs keep it open (buildStub); move it out of the way of the
	// low descriptors, as a hint, not a need.
	if err := unix.Ftruncate(fd, maxRegions*regionSize); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("sizing the systrap regions file: %w", err)
	}
	mem, err := unix.Mmap(fd, 0, maxRegions*regionSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("mapping the systrap regions file: %w", err)
	}
	sys := &systrap{fd: fd, mem: mem}
	// Until a worker has measured, workers sleep and follow their
	// Sentry thread, as ptrace's threads do: a short-lived process
	// never gains from spinning, and spinning where the other CPU is
	// busy costs it a migration and a wait for that CPU at every
	// handoff.
	sys.mode.Store(modeSleep)
	if err := unix.SchedGetaffinity(0, &sys.cpus); err != nil {
		unix.Munmap(mem)
		unix.Close(fd)
		return nil, fmt.Errorf("reading the Sentry's CPUs: %w", err)
	}
	p, err := newPlatform(memfd, sys)
	if err != nil {
		unix.Munmap(mem)
		unix.Close(fd)
		return nil, err
	}
	return p, nil
}

// alloc returns a free slot.
func (s *systrap) alloc() (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.freed); n > 0 {
		r := s.freed[n-1]
		s.freed = s.freed[:n-1]
		return r, nil
	}
	if s.next == maxRegions {
		return 0, fmt.Errorf("systrap: all %d thread regions in use", maxRegions)
	}
	s.next++
	return s.next - 1, nil
}

// free returns slot r, which no thread can reach any more.
func (s *systrap) free(r int) {
	s.mu.Lock()
	s.freed = append(s.freed, r)
	s.mu.Unlock()
}

// regionAddr is slot r's address in a stub process.
func regionAddr(r int) uintptr { return regionBase + uintptr(r)*regionSize }

// worker is a context's untraced thread in a stub process.
type worker struct {
	as     *addressSpace
	region int
	tid    int32
	comm   *commPage
	// cpu is the CPU the worker is bound to (follow), -2-c when it is
	// kept off CPU c (avoid), or -1.
	cpu int32
	// spinning says the worker spins long, off the Sentry thread's CPU;
	// the rest is the state of adapt.
	spinning   bool
	phase      int
	handoffs   int
	run        int
	phaseStart time.Time
	sleepCost  time.Duration
	chose      bool // the last measurement's choice
	// fsBase and gsBase are the segment bases the worker has
	// (arch_prctl in the handler).
	fsBase, gsBase uint64
	// frame is the last trap's signal frame, checked (trapFrame).
	frame frameRef
	// info is the last trap's signal information.
	info platform.SignalInfo
	// fresh is set until a context first takes the worker (seed).
	fresh bool
	// lastNr is the system call of the last trap, or -1; trapAt is when
	// the trap reached the Sentry, so that the next Switch knows how long
	// serving it took (learn).
	lastNr int32
	trapAt time.Time
	// blocks counts, per system call number, how it was served lately:
	// up for slow (it blocked), down for fast; the handler sleeps at once
	// on those above 0 (commNoSpin).
	blocks [noSpinCalls]int8
}

// frameRef locates a signal frame in a slot, by offsets checked to lie in
// it.
type frameRef struct {
	uc     uintptr // ucontext
	info   uintptr // siginfo
	fp     uintptr // xsave area, or 0
	fpSize uintptr
	fpMask uint64 // the frame's xfeatures
}

// maxIdle bounds the idle workers an address space keeps.
const maxIdle = 4

// newWorker returns an idle worker of as if it has one, else makes one.
func (s *systrap) newWorker(as *addressSpace) (*worker, error) {
	as.mu.Lock()
	var w *worker
	if n := len(as.idle); n > 0 {
		w = as.idle[n-1]
		as.idle = as.idle[:n-1]
	}
	as.mu.Unlock()
	if w != nil {
		// The bases it last set may have been changed since by its
		// previous thread (a jump to the handler's arch_prctl site):
		// the next Switch sets them again.
		w.fsBase, w.gsBase = ^uint64(0), ^uint64(0)
		return w, nil
	}
	return s.makeWorker(as)
}

// park keeps w, which no context uses, for the next context of its
// address space: a thread of the same application, whose registers and FP
// state the kernel sets before it runs. It returns false if w should go.
func (w *worker) park() bool {
	as := w.as
	as.mu.Lock()
	defer as.mu.Unlock()
	if as.dead || len(as.idle) >= maxIdle || w.comm.loadState() != stateTrapped {
		return false
	}
	as.idle = append(as.idle, w)
	return true
}

// makeWorker creates a worker in as and waits for its first trap.
func (s *systrap) makeWorker(as *addressSpace) (*worker, error) {
	r, err := s.alloc()
	if err != nil {
		return nil, err
	}
	w := &worker{as: as, region: r, comm: s.comm(r), fsBase: ^uint64(0), gsBase: ^uint64(0), cpu: -1, fresh: true, lastNr: -1}
	s.resetRegion(r)
	w.startPhase(phaseProbeSleep, spinFixed != "sleep")
	w.phaseStart = time.Time{} // from the first handoff (adapt)
	va := regionAddr(r)
	const flags = unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND |
		unix.CLONE_THREAD | unix.CLONE_SYSVSEM | unix.CLONE_CHILD_CLEARTID
	var tid uintptr
	ok := as.masterDo(func() {
		// The injection is a handoff between the master's OS thread
		// and the stub's: on one CPU it costs no wake-up of another.
		as.masterThr.follow()
		var mapped bool
		tid, mapped, err = as.masterThr.newWorker(flags, va, uintptr(s.fd), uintptr(r)*regionSize)
		if err == nil && !mapped {
			err = fmt.Errorf("stub mmap of a systrap region at %#x: %v", va, unix.Errno(-int64(tid)))
		} else if err == nil && int64(tid) < 0 {
			err = fmt.Errorf("clone of a systrap worker: %w", unix.Errno(-int64(tid)))
		}
	})
	if !ok {
		err = errors.New("address space released")
	}
	if err != nil {
		// The region may be mapped in the stub: leave it to the reaping.
		as.retireRegion(r, false)
		return nil, err
	}
	w.tid = int32(tid)
	st := w.await(stateRunning, 5*time.Second)
	if st != stateTrapped || w.comm.loadSigno() != int32(unix.SIGTRAP) {
		e := w.comm.initErr()
		w.kill()
		as.retireRegion(r, false)
		if e != 0 {
			return nil, fmt.Errorf("systrap worker set-up failed: %w", unix.Errno(-e))
		}
		return nil, fmt.Errorf("systrap worker did not start (state %d)", st)
	}
	if err := w.trapFrame(s); err != nil {
		w.kill()
		as.retireRegion(r, false)
		return nil, err
	}
	return w, nil
}

// seed starts a worker no context used yet with the way of waiting the
// platform's last measurement chose, kept for spinRun handoffs before the
// worker measures for itself: a short-lived process (a fork that execs or
// exits) thus never spends its few handoffs measuring. Which system calls
// block is learnt afresh by each worker (learn): its region, which the
// application can read, shows nothing of another process's.
func (w *worker) seed(s *systrap) {
	w.fresh = false
	if spinFixed != "" {
		return
	}
	switch s.mode.Load() {
	case modeSpin:
		w.run, w.chose = spinRun, true
		w.startPhase(phaseRun, true)
	case modeSleep:
		w.run, w.chose = spinRun, false
		w.startPhase(phaseRun, false)
	}
}

// learn notes that the Sentry took d to serve the last trap's system call
// and tells the handler whether to spin on that call next time.
func (w *worker) learn(d time.Duration) {
	nr := w.lastNr
	w.lastNr = -1
	if nr < 0 || spinFixed != "" {
		return
	}
	b := w.blocks[nr]
	was := b > 0
	if d > noSpinAfter {
		b = min(b+1, 2)
	} else {
		b = max(b-1, -2)
	}
	w.blocks[nr] = b
	if now := b > 0; now != was {
		w.comm.setNoSpin(int(nr), now)
	}
}

// follow binds the worker to the CPU the calling thread runs on, as
// thread.follow does for ptrace.
func (w *worker) follow() {
	cpu := int32(currentCPU())
	if cpu == w.cpu {
		return
	}
	w.cpu = cpu
	var set unix.CPUSet
	set.Set(int(cpu))
	_ = unix.SchedSetaffinity(int(w.tid), &set)
}

// alive says whether the worker thread still exists. The kernel clears
// the state word when the worker exits (CLONE_CHILD_CLEARTID), but not
// when it is the last thread of its process to go, so waits that may
// outlive the process look too.
func (w *worker) alive() bool {
	return unix.Tgkill(int(w.as.pid), int(w.tid), 0) != unix.ESRCH
}

// await waits until the state is no longer old, the worker is gone
// (stateDead) or timeout passed (old), and returns the state.
func (w *worker) await(old uint32, timeout time.Duration) uint32 {
	deadline := time.Now().Add(timeout)
	for {
		step := min(time.Until(deadline), 20*time.Millisecond)
		if step <= 0 {
			return old
		}
		if st := w.comm.wait(old, spinShort, step); st != old {
			return st
		}
		if w.tid != 0 && !w.alive() {
			return stateDead
		}
	}
}

// avoid binds the worker to the Sentry's CPUs other than the one the
// calling thread runs on, so that both can spin at once; with one CPU it
// leaves the worker on any.
func (w *worker) avoid() {
	cpu := int32(currentCPU())
	if w.cpu == -2-cpu {
		return
	}
	w.cpu = -2 - cpu
	set := w.as.p.sys.cpus
	if set.Count() > 1 {
		set.Clear(int(cpu))
	}
	_ = unix.SchedSetaffinity(int(w.tid), &set)
}

// Phases of adapt.
const (
	phaseProbeSleep = iota
	phaseProbeSpin
	phaseRun
)

// adapt counts a handoff and chooses how the next ones wait (see
// spinLong).
func (w *worker) adapt() {
	if spinFixed != "" {
		return
	}
	if w.phaseStart.IsZero() {
		w.phaseStart = time.Now()
		return
	}
	w.handoffs++
	switch w.phase {
	case phaseProbeSleep:
		if w.handoffs < spinWindow {
			return
		}
		w.sleepCost = time.Since(w.phaseStart)
		w.startPhase(phaseProbeSpin, true)
	case phaseProbeSpin:
		// Spinning has lost as soon as its window took longer than the
		// sleeping one: where it loses (two processes ping-ponging on
		// two CPUs) a handoff can cost ten times more spinning, and
		// the window is cut short rather than run out.
		if time.Since(w.phaseStart) > w.sleepCost {
			w.choose(false)
		} else if w.handoffs >= spinWindow {
			w.choose(true)
		}
	case phaseRun:
		if w.handoffs >= w.run {
			w.startPhase(phaseProbeSleep, false)
		}
	}
}

// choose ends a measurement: the worker waits as spin says for its next
// run, twice as long as the last one if the choice is the same.
func (w *worker) choose(spin bool) {
	mode := int32(modeSleep)
	if spin {
		mode = modeSpin
	}
	w.as.p.sys.mode.Store(mode)
	if spin == w.chose && w.run > 0 {
		w.run = min(2*w.run, spinRunMax)
	} else {
		w.run = spinRun
	}
	w.chose = spin
	w.startPhase(phaseRun, spin)
}

func (w *worker) startPhase(phase int, spin bool) {
	w.phase, w.handoffs = phase, 0
	w.phaseStart = time.Now()
	w.setSpinning(spin)
}

func (w *worker) setSpinning(on bool) {
	w.spinning = on
	spin := spinShort
	if on {
		spin = spinLong
	}
	atomic.StoreUint32(&w.comm.spin, uint32(spin))
}

// sentrySpin is how long the Sentry spins waiting for the worker.
func (w *worker) sentrySpin() int {
	if w.spinning {
		return spinLong
	}
	return spinShort
}

// kill ends the worker's stub process: the worker misbehaved.
func (w *worker) kill() {
	unix.Kill(int(w.as.pid), unix.SIGKILL)
}

// release makes the worker exit and frees its region. A worker of a
// released address space dies with its stub process (Release kills it):
// its region waits for the reaping, and nobody waits for the worker.
func (w *worker) release() {
	w.as.mu.Lock()
	dead := w.as.dead
	w.as.mu.Unlock()
	if dead {
		w.as.retireRegion(w.region, false)
		return
	}
	if w.comm.swapState(stateExit) != stateDead {
		w.comm.wake()
		if w.await(stateExit, 2*time.Second) != stateDead {
			w.kill()
			w.as.retireRegion(w.region, false)
			return
		}
	}
	w.as.retireRegion(w.region, true)
}

// retireRegion gives slot r back once no thread of the stub can reach it:
// at once if the stub is gone, after unmapping it if unmap is set and the
// stub lives, else when the stub process is reaped.
func (as *addressSpace) retireRegion(r int, unmap bool) {
	as.mu.Lock()
	if as.reaped {
		as.mu.Unlock()
		as.p.sys.free(r)
		return
	}
	as.mu.Unlock()
	if unmap {
		var res uintptr
		var err error
		ok := as.masterDo(func() {
			res, err = as.masterThr.syscall(unix.SYS_MUNMAP, regionAddr(r), regionSize, 0, 0, 0, 0)
		})
		if ok && err == nil && res == 0 {
			as.p.sys.free(r)
			return
		}
	}
	as.mu.Lock()
	if as.reaped {
		as.mu.Unlock()
		as.p.sys.free(r)
		return
	}
	as.retired = append(as.retired, r)
	as.mu.Unlock()
}

// newWorker injects stubNewWorker: it maps the region at va (offset off
// of the regions file fd) and clones a worker with flags, which starts on
// a stack at the top of the region with the state word as its
// clear_child_tid. It returns clone's raw result and whether the mmap
// succeeded (if not, the first result is mmap's).
func (t *thread) newWorker(flags, va, fd, off uintptr) (uintptr, bool, error) {
	regs := t.initRegs
	regs.Rdi, regs.Rsi = uint64(va), regionSize
	regs.Rdx = unix.PROT_READ | unix.PROT_WRITE
	regs.R10 = unix.MAP_SHARED | unix.MAP_FIXED
	regs.R8, regs.R9 = uint64(fd), uint64(off)
	regs.Rbx = uint64(va)
	regs.R12, regs.R13, regs.R14 = uint64(flags), uint64(va+regionSize), uint64(va+commState)
	regs.R15 = 0
	regs.Rip = stubAddr + stubNewWorkerOff
	if err := t.run(&regs); err != nil {
		return 0, false, err
	}
	return uintptr(regs.Rax), regs.R15 == 0, nil
}

// trapContext is a platform.Context of the systrap mode.
type trapContext struct {
	p  *Platform
	as *addressSpace
	w  *worker
	// helper is a traced thread in as, traced by this context's OS
	// thread, made at the first fault: the memory manager's MapFile for a
	// fault then runs in it (addressSpace.current) rather than through
	// the master, which halves the cost of a fault.
	helper *thread
	// faults counts the faults in as before the helper was made.
	faults int
	// locked is set once the goroutine is locked to its OS thread: the
	// worker follows that thread's CPU (worker.follow), so the thread
	// should stay the same.
	locked bool

	// live is the worker Interrupt signals.
	live        atomic.Pointer[worker]
	interrupted atomic.Bool
}

func (c *trapContext) workerFor(as *addressSpace) (*worker, error) {
	if c.as == as && c.w != nil {
		return c.w, nil
	}
	if !c.locked {
		runtime.LockOSThread()
		c.locked = true
	}
	c.drop()
	w, err := c.p.sys.newWorker(as)
	if err != nil {
		return nil, err
	}
	if w.fresh {
		w.seed(c.p.sys)
	}
	c.as, c.w = as, w
	c.live.Store(w)
	return w, nil
}

func (c *trapContext) dropHelper() {
	c.faults = 0
	if c.helper != nil {
		c.as.dropThread(c.helper)
		c.helper = nil
	}
}

func (c *trapContext) drop() {
	c.dropHelper()
	if c.w != nil {
		c.live.Store(nil)
		if !c.w.park() {
			c.w.release()
		}
		c.as, c.w = nil, nil
	}
}

// Switch implements platform.Context.Switch.
func (c *trapContext) Switch(pas platform.AddressSpace, regs *arch.Registers) (platform.SwitchResult, *platform.SignalInfo, error) {
	as := pas.(*addressSpace)
	w, err := c.workerFor(as)
	if err != nil {
		return 0, nil, err
	}
	if c.interrupted.Swap(false) {
		return platform.SwitchInterrupted, nil, nil
	}
	s := c.p.sys
	if w.lastNr >= 0 {
		w.learn(time.Since(w.trapAt))
	}
	if err := w.putRegs(s, regs); err != nil {
		return 0, nil, err
	}
	if w.spinning {
		w.avoid()
	} else {
		w.follow()
	}
	w.comm.swapState(stateRunning)
	if w.comm.workerSleeps() {
		w.comm.wake()
	}
	if c.interrupted.Load() {
		// Interrupt may have looked at the state before it changed.
		unix.Tgkill(int(as.pid), int(w.tid), interruptSignal)
	}
	st := c.waitTrap(w)
	w.adapt()
	if st != stateTrapped {
		c.live.Store(nil)
		w.kill()
		c.dropHelper()
		c.as, c.w = nil, nil
		w.as.retireRegion(w.region, false)
		return 0, nil, fmt.Errorf("%w: systrap worker %d: state %d", platform.ErrContextDead, w.tid, st)
	}
	if err := w.trapFrame(s); err != nil {
		c.live.Store(nil)
		w.kill()
		c.dropHelper()
		c.as, c.w = nil, nil
		w.as.retireRegion(w.region, false)
		return 0, nil, fmt.Errorf("%w: %v", platform.ErrContextDead, err)
	}
	info := w.getRegs(s, regs)
	switch sig := unix.Signal(info.Signo); {
	case sig == unix.SIGSYS && info.Code == sysSeccomp:
		regs.Orig_rax = regs.Rax
		regs.Rax = ^uint64(unix.ENOSYS) + 1
		if regs.Orig_rax < noSpinCalls {
			w.lastNr = int32(regs.Orig_rax)
			w.trapAt = time.Now()
		}
		return platform.SwitchSyscall, nil, nil
	case sig == unix.SIGSEGV, sig == unix.SIGBUS, sig == unix.SIGFPE, sig == unix.SIGILL, sig == unix.SIGTRAP:
		regs.Orig_rax = ^uint64(0)
		fault := *info
		if c.helper == nil {
			// Without one, faults are fixed through the master: a
			// process that faults only a few times (a fork that
			// exits or execs at once) is spared making one.
			if c.faults++; c.faults >= helperAfter {
				c.helper, _ = as.newThread()
			}
		}
		if c.helper != nil {
			// The fix is injected from this thread's CPU.
			c.helper.follow()
		}
		return platform.SwitchFault, &fault, nil
	default:
		regs.Orig_rax = ^uint64(0)
		c.interrupted.Store(false)
		return platform.SwitchInterrupted, nil, nil
	}
}

// helperAfter is the fault of a context in an address space at which it
// makes its helper, the earlier ones being fixed through the master. A
// helper costs about two faults fixed through the master to make and end
// (BenchmarkSystrapLifecycleHelper), and even a fork that exits at once
// faults five times (its stack, libc's data), /bin/true eleven: so at the
// first.
var helperAfter = 1

// unanswered is how long an interrupted worker may run on before the
// Sentry gives up on it and kills its stub process: a worker answers the
// interrupt signal at once unless the application blocked it with a forged
// rt_sigreturn, which would otherwise make it immune to signals and kills.
var unanswered = 5 * time.Second

// waitTrap waits for w's next trap (or death) and returns its state.
func (c *trapContext) waitTrap(w *worker) uint32 {
	st := w.comm.wait(stateRunning, w.sentrySpin(), 100*time.Millisecond)
	if st != stateRunning {
		return st
	}
	var since time.Time
	for {
		if !w.alive() {
			return stateDead
		}
		if !c.interrupted.Load() {
			since = time.Time{}
		} else if since.IsZero() {
			since = time.Now()
		} else if time.Since(since) > unanswered {
			w.kill()
			return w.await(stateRunning, time.Second)
		}
		if st := w.comm.wait(stateRunning, 0, 100*time.Millisecond); st != stateRunning {
			return st
		}
	}
}

// Interrupt implements platform.Context.Interrupt.
func (c *trapContext) Interrupt() {
	c.interrupted.Store(true)
	if w := c.live.Load(); w != nil && w.comm.loadState() == stateRunning {
		unix.Tgkill(int(w.as.pid), int(w.tid), interruptSignal)
	}
}

// ClearInterrupt implements platform.Context.ClearInterrupt.
func (c *trapContext) ClearInterrupt() { c.interrupted.Store(false) }

// Release implements platform.Context.Release.
func (c *trapContext) Release() {
	c.drop()
	if c.locked {
		runtime.UnlockOSThread()
		c.locked = false
	}
}

// FPState implements platform.Context.FPState.
func (c *trapContext) FPState(pas platform.AddressSpace) ([]byte, error) {
	w, err := c.workerFor(pas.(*addressSpace))
	if err != nil {
		return nil, err
	}
	return w.fpState(c.p.sys), nil
}

// SetFPState implements platform.Context.SetFPState.
func (c *trapContext) SetFPState(pas platform.AddressSpace, state []byte) error {
	w, err := c.workerFor(pas.(*addressSpace))
	if err != nil {
		return err
	}
	w.setFPState(c.p.sys, state)
	return nil
}
