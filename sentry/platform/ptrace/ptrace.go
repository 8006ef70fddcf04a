// Package ptrace implements the platform with PTRACE_SYSEMU, and its
// systrap mode with seccomp traps.
//
// Every application address space is a stub process: a process that has
// nothing mapped but the stub page (see stub_amd64.go) and ranges of the
// memory file the memory manager asks for. Every application thread that
// runs in an address space has its own thread in that stub process, traced
// by the OS thread of the Sentry goroutine that runs the application thread,
// so a system call costs one PTRACE_SYSEMU stop and no goroutine handoff.
//
// Processes and threads:
//   - The template is the first stub process, forked from the Sentry by
//     rawForkStub before the Sentry's seccomp filter is installed, with
//     all of the Sentry's memory but rawForkStub's code marked
//     MADV_DONTFORK (forkStub). It is traced by a dedicated goroutine and
//     never runs application code.
//   - A new address space is a fork of the template, injected as a clone
//     system call into the template's thread. The child parks in the stub's
//     pause loop until a new master goroutine seizes it. The master thread
//     never runs application code either; it performs mmap and munmap for
//     goroutines that have no thread in the address space, and clones the
//     threads that contexts need.
//   - A context gets its thread in an address space by asking the master to
//     inject clone(CLONE_THREAD|CLONE_VM|...); the new thread parks in the
//     pause loop and the context's own OS thread seizes it.
//
// Host file mappings: MapHostFD maps a descriptor of the Sentry (a file
// the gofer donated) straight into a stub, private and never writable, so
// the host's page cache serves the application's reads of program text
// without a fault or a copy in the Sentry. The stub takes a duplicate with
// pidfd_getfd for the one injected call (stubMapFD) and closes it; a host
// that refuses it that access (a Yama ptrace scope, say) turns the feature
// off for the platform, and callers fall back to the memory file.
//
// Every traced thread has PTRACE_O_EXITKILL, and every stub process dies
// with the template (PR_SET_PDEATHSIG), so no stub outlives the Sentry. The
// stubs close every descriptor except the memory file (and, in systrap
// mode, the file of the workers' regions).
//
// Systrap mode (NewSystrap, systrap.go): the same stub processes and
// masters, but application threads are untraced worker threads whose
// system calls a seccomp filter of their own turns into SIGSYS, served by a
// signal handler in the stub that hands the registers to the Sentry through
// shared memory.
//
// Locks: addressSpace.mu guards the set of threads and the systrap regions
// waiting for the stub's end; it is never held while waiting for a tracee.
// addressSpace.stopMu (read-held while a request runs on the master) is
// taken before addressSpace.mu, never after; systrap.mu (the free regions)
// is a leaf.
package ptrace

import (
	"cmp"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/platform"
	"github.com/moat-sandbox/moat/sentry/platform/ptrace/internal/rseq"
)

// interruptSignal is the host signal sent to a stub thread to make its
// tracer's Switch return. It is never delivered: the tracer suppresses it.
const interruptSignal = unix.SIGUSR2

// Platform is the ptrace platform.
type Platform struct {
	memfd    int
	template *tracer
	// tmplThr is the template's thread once it is ready, or tmplErr why
	// it never will be; both belong to the template tracer's goroutine.
	tmplThr *thread
	tmplErr error
	// pid is the Sentry's, as the stubs (in its PID namespace) see it.
	pid int
	// noHostMap is set once a stub could not take a Sentry descriptor.
	noHostMap atomic.Bool
	// spare holds an address space made ahead of need (NewAddressSpace).
	spare chan *addressSpace
	// spared is set once the first spare (init's) has been taken.
	spared atomic.Bool
	// sys is the systrap mode's state, nil in ptrace mode.
	sys *systrap
}

// New creates the platform and its template stub process. memfd is the
// memory file. It must be called before the Sentry's seccomp filter is
// installed (it forks) and it leaves a goroutine running per address space.
func New(memfd int) (*Platform, error) {
	return newPlatform(memfd, nil)
}

func newPlatform(memfd int, sys *systrap) (*Platform, error) {
	commfd := -1
	if sys != nil {
		commfd = sys.fd
	}
	code, _, err := buildStub(memfd, commfd)
	if err != nil {
		return nil, err
	}
	if err := quietChildStops(); err != nil {
		return nil, err
	}
	codefd, err := unix.MemfdCreate("moat-stub", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("creating stub memfd: %w", err)
	}
	defer unix.Close(codefd)
	if _, err := unix.Pwrite(codefd, code, 0); err != nil {
		return nil, fmt.Errorf("writing stub code: %w", err)
	}
	p := &Platform{memfd: memfd, template: newTracer(), pid: unix.Getpid(), spare: make(chan *addressSpace, 1), sys: sys}
	var pid int
	p.template.do(func() { pid, err = forkStub(codefd) })
	if err != nil {
		p.template.stop()
		return nil, fmt.Errorf("starting the stub template: %w", err)
	}
	// The template gets ready (stubInit unmaps the copy of the Sentry
	// that fork gave it, a millisecond or two) while the Sentry boots:
	// the tracer takes its first stop next, and requests for address
	// spaces queue behind that.
	p.template.reqs <- func() { p.tmplThr, p.tmplErr = templateReady(pid) }
	// The first address space (init's) is made while the Sentry boots.
	go p.refill()
	return p, nil
}

// templateReady waits for the template stub process pid's first stop and
// returns its thread, or kills it. It runs on the template tracer.
func templateReady(pid int) (*thread, error) {
	t := &thread{tgid: int32(pid), tid: int32(pid), cpu: -1}
	ws, err := t.wait()
	if err == nil && (!ws.Stopped() || ws.StopSignal() != unix.SIGSTOP) {
		var regs unix.PtraceRegs
		unix.PtraceGetRegs(pid, &regs)
		err = fmt.Errorf("unexpected first stop %#x at rip %#x (rsp %#x)", uint32(ws), regs.Rip, regs.Rsp)
	}
	if err == nil {
		err = unix.PtraceSetOptions(pid, unix.PTRACE_O_TRACESYSGOOD|unix.PTRACE_O_EXITKILL)
	}
	if err == nil {
		err = t.init()
	}
	if err != nil {
		unix.Kill(pid, unix.SIGKILL)
		t.wait()
		return nil, fmt.Errorf("starting the stub template: %w", err)
	}
	return t, nil
}

// MemoryFileFD implements platform.Platform.MemoryFileFD.
func (p *Platform) MemoryFileFD() int { return p.memfd }

// forkStub forks the template. It runs on the template tracer's OS thread,
// which becomes the child's tracer through PTRACE_TRACEME.
//
// The child needs nothing of the Sentry's memory but the code of
// rawForkStub's child path: everything else is marked MADV_DONTFORK first
// (dontForkExcept), so the fork neither copies the page tables of the
// Sentry's heap nor write-protects its pages, each of which would then
// take a copy-on-write fault at the Sentry's next write to it (about 140
// faults at 15-20 us each on these machines, after a fork of 1.3 ms). A
// cgo build (the tests under -race) forks everything as before: its
// threads carry libc's state, such as the rseq area the kernel updates in
// the child before it can unregister it, and keeping that area alone
// proved not enough (the children were killed with SIGSEGV).
func forkStub(codefd int) (int, error) {
	var all, old unix.Sigset_t
	for i := range all.Val {
		all.Val[i] = ^uint64(0)
	}
	rseqArea, rseqLen := rseq.ThreadArea()
	if rseqArea == 0 {
		code := rawForkStubPC() &^ (pageSize - 1)
		dontForkExcept([][2]uintptr{{code, code + forkCodeSpan}})
	}
	unix.PthreadSigmask(unix.SIG_SETMASK, &all, &old)
	pid, errno := rawForkStub(uintptr(codefd), stubAddr, stubSize, stubAddr+stubInitOff, rseqArea, rseqLen)
	unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil)
	if errno != 0 {
		return 0, fmt.Errorf("fork: %w", unix.Errno(errno))
	}
	return int(pid), nil
}

const pageSize = 4096

// forkCodeSpan is how much memory from the page where rawForkStub starts
// the child keeps: two pages, since its code (some 200 bytes) may cross
// a page boundary.
const forkCodeSpan = 2 * pageSize

// dontForkExcept marks every mapping of the process outside the
// page-aligned ranges keep MADV_DONTFORK: a process forked afterwards
// does not get them. The marks stay: nothing else forks the Sentry (it
// starts no process, and new stub processes are forks of the template).
// Holes in the address space make madvise return ENOMEM
// after it has marked the mappings around them; any other failure leaves
// a mapping to be copied, which costs time, not correctness.
func dontForkExcept(keep [][2]uintptr) {
	keep = append(slices.Clone(keep), [2]uintptr{userTop, userTop})
	slices.SortFunc(keep, func(a, b [2]uintptr) int { return cmp.Compare(a[0], b[0]) })
	lo := uintptr(0)
	for _, r := range keep {
		if r[0] > lo {
			unix.Syscall(unix.SYS_MADVISE, lo, r[0]-lo, unix.MADV_DONTFORK)
		}
		lo = max(lo, r[1])
	}
}

func rawForkStub(memfd, addr, size, entry, rseqArea, rseqLen uintptr) (pid, errno uintptr)

// rawForkStubPC returns the address of rawForkStub's code.
func rawForkStubPC() uintptr

// NewAddressSpace implements platform.Platform.NewAddressSpace. It
// returns the spare address space made in the background when there is
// one, and has the next one made: a fork or exec then does not wait for a
// stub process to be forked and seized (two injected calls and their
// round trips). The first spare, made while the Sentry boots, is init's;
// the next is made only once a second address space is asked for: a
// sandbox whose init never forks (runsc do /bin/true, most containers'
// long-running process) then never makes a stub process it does not use,
// which cost init's start 0.8 ms here (the fork and the thread's clone
// ran just as init's first mappings were injected) and kept a process
// idle for good.
func (p *Platform) NewAddressSpace() (platform.AddressSpace, error) {
	select {
	case as := <-p.spare:
		if p.spared.Swap(true) {
			go p.refill()
		}
		return as, nil
	default:
	}
	as, err := p.newAddressSpace()
	if err == nil && p.spared.Load() {
		go p.refill()
	}
	return as, err
}

// refill makes the spare address space if there is none, with a thread
// cloned and parked for its first context (which only has to seize it).
func (p *Platform) refill() {
	as, err := p.newAddressSpace()
	if err != nil {
		return // NewAddressSpace makes one itself and reports why not
	}
	if tid, err := as.cloneThread(true); err == nil {
		as.parked = tid
	}
	if p.sys != nil {
		// The first context's worker too (systrap).
		if w, err := p.sys.makeWorker(as); err == nil {
			as.mu.Lock()
			as.idle = append(as.idle, w)
			as.mu.Unlock()
		}
	}
	select {
	case p.spare <- as:
	default:
		as.Release()
	}
}

func (p *Platform) newAddressSpace() (*addressSpace, error) {
	var pid uintptr
	var err error
	p.template.do(func() {
		if p.tmplThr == nil {
			err = p.tmplErr
			return
		}
		pid, err = p.tmplThr.clone(uintptr(unix.SIGCHLD))
	})
	if err != nil {
		return nil, fmt.Errorf("forking a stub process: %w", err)
	}
	as := &addressSpace{p: p, pid: int32(pid), master: newTracer()}
	as.master.do(func() {
		as.masterThr, err = seize(int32(pid), int32(pid))
	})
	if err != nil {
		unix.Kill(int(pid), unix.SIGKILL)
		as.master.stop()
		return nil, fmt.Errorf("seizing stub process %d: %w", pid, err)
	}
	return as, nil
}

// NewContext implements platform.Platform.NewContext.
func (p *Platform) NewContext() platform.Context {
	if p.sys != nil {
		return &trapContext{p: p}
	}
	return &context{}
}

// tracer is a goroutine locked to an OS thread, which runs functions sent to
// it. ptrace requests must come from the tracing thread; a tracer is how a
// goroutine that is not that thread gets one done.
type tracer struct {
	reqs chan func()
	// tid is the host tid of the tracer's OS thread, set before the
	// first request is run.
	tid atomic.Int32
}

func newTracer() *tracer {
	t := &tracer{reqs: make(chan func())}
	go func() {
		// Never unlocked: the OS thread exits with the goroutine, and its
		// tracees with it (PTRACE_O_EXITKILL).
		runtime.LockOSThread()
		t.tid.Store(int32(unix.Gettid()))
		for f := range t.reqs {
			f()
		}
	}()
	return t
}

func (t *tracer) do(f func()) {
	done := make(chan struct{})
	t.reqs <- func() { f(); close(done) }
	<-done
}

func (t *tracer) stop() { close(t.reqs) }

// addressSpace is a stub process.
type addressSpace struct {
	p         *Platform
	pid       int32
	master    *tracer
	masterThr *thread

	mu sync.Mutex
	// threads are the context threads in this process, by the host tid of
	// their tracer.
	threads map[int32]*thread
	dead    bool
	// parked is a thread cloned ahead of need, untraced in the pause loop,
	// or 0 (refill).
	parked int32
	// reaped is set once the stub process is gone; retired holds the
	// systrap regions of exited workers until then (retireRegion).
	reaped  bool
	retired []int
	// idle are systrap workers no context uses, parked in their handler:
	// made ahead of need (refill) or left by a released context.
	idle []*worker

	// stopMu guards stopped, set when Release stops the master; masterDo
	// holds it for reading so that it never sends to a stopped master.
	stopMu  sync.RWMutex
	stopped bool
}

// current returns the calling OS thread's stub thread in as, or nil: the
// master thread when called on the master tracer's OS thread (in a
// request it runs, such as Batch's).
func (as *addressSpace) current() *thread {
	tid := int32(unix.Gettid())
	if tid == as.master.tid.Load() {
		return as.masterThr
	}
	as.mu.Lock()
	t := as.threads[tid]
	as.mu.Unlock()
	return t
}

// syscall runs a system call in the stub process, in the caller's own thread
// when it has one, else through the master.
func (as *addressSpace) syscall(sysno uintptr, args ...uintptr) (uintptr, error) {
	var a [6]uintptr
	copy(a[:], args)
	if t := as.current(); t != nil {
		return t.syscall(sysno, a[0], a[1], a[2], a[3], a[4], a[5])
	}
	var r uintptr
	var err error
	as.master.do(func() {
		r, err = as.masterThr.syscall(sysno, a[0], a[1], a[2], a[3], a[4], a[5])
	})
	return r, err
}

// Batch implements platform.Batcher: f runs on the master tracer's
// thread, unless the calling thread traces a thread of the stub itself, so
// that the calls it makes go to the stub directly, not each through a
// hand-off to the master tracer's goroutine: a thread wake-up, from tens
// of microseconds on an idle machine to milliseconds on a busy one.
func (as *addressSpace) Batch(f func()) {
	if as.current() != nil {
		f()
		return
	}
	as.master.do(f)
}

// MapFile implements platform.AddressSpace.MapFile.
func (as *addressSpace) MapFile(addr uintptr, off uint64, length uintptr, prot int) error {
	r, err := as.syscall(unix.SYS_MMAP, addr, length, uintptr(prot), unix.MAP_SHARED|unix.MAP_FIXED, uintptr(as.p.memfd), uintptr(off))
	if err != nil {
		return err
	}
	if r != addr {
		return fmt.Errorf("stub mmap at %#x returned %#x (%v)", addr, r, unix.Errno(-r))
	}
	return nil
}

// ErrNoHostMap is MapHostFD's error when the host does not let the stubs
// map the Sentry's descriptors.
var ErrNoHostMap = errors.New("stubs cannot map Sentry descriptors")

// MapHostFD maps [off, off+length) of the Sentry's host descriptor fd at
// addr, MAP_PRIVATE|MAP_FIXED with prot, which may not include PROT_WRITE:
// the application reads the host file's pages and can never change the
// file. The stub holds no descriptor afterwards. It returns ErrNoHostMap,
// at once after the first time, when the host refuses the stub the
// descriptor, and the host mmap's error (EPERM for PROT_EXEC on a noexec
// mount, ENODEV for a file that cannot be mapped) otherwise.
func (as *addressSpace) MapHostFD(addr, length uintptr, prot int, fd int, off uint64) error {
	if prot&unix.PROT_WRITE != 0 {
		return unix.EINVAL
	}
	if as.p.noHostMap.Load() {
		return ErrNoHostMap
	}
	const flags = unix.MAP_PRIVATE | unix.MAP_FIXED
	var r uintptr
	var stage mapFDStage
	var err error
	if t := as.current(); t != nil {
		r, stage, err = t.mapFD(as.p.pid, fd, addr, length, prot, flags, off)
	} else {
		as.master.do(func() {
			r, stage, err = as.masterThr.mapFD(as.p.pid, fd, addr, length, prot, flags, off)
		})
	}
	if err != nil {
		return err
	}
	if r == addr {
		return nil
	}
	errno := unix.Errno(-r)
	if int64(r) >= 0 || int64(r) < -4095 {
		return fmt.Errorf("stub mmap of descriptor %d at %#x returned %#x", fd, addr, r)
	}
	if stage != mapFDMmap {
		if errno == unix.EPERM || errno == unix.EACCES || errno == unix.ENOSYS || errno == unix.ESRCH {
			as.p.noHostMap.Store(true)
			return ErrNoHostMap
		}
		return fmt.Errorf("stub taking descriptor %d: %w", fd, errno)
	}
	// A failed MAP_FIXED may have left the range unmapped, which is what
	// the caller's fallback expects anyway.
	return errno
}

// Unmap implements platform.AddressSpace.Unmap.
func (as *addressSpace) Unmap(addr, length uintptr) error {
	r, err := as.syscall(unix.SYS_MUNMAP, addr, length)
	if err != nil {
		return err
	}
	if r != 0 {
		return fmt.Errorf("stub munmap %#x+%#x: %v", addr, length, unix.Errno(-r))
	}
	return nil
}

// newThread creates a thread in the stub process, seized by the calling OS
// thread. The thread waits to be seized with every signal blocked, as one
// made ahead of need does: in systrap mode the workers' handlers are the
// whole stub process's, and an untraced thread with no alternate stack
// must never run them; its signals are unblocked once it is traced.
func (as *addressSpace) newThread() (*thread, error) {
	as.mu.Lock()
	tid := as.parked
	as.parked = 0
	as.mu.Unlock()
	if tid == 0 {
		var err error
		if tid, err = as.cloneThread(true); err != nil {
			return nil, err
		}
	}
	t, err := seize(as.pid, tid)
	if err == nil {
		err = unblockAll(tid)
	}
	if err != nil {
		unix.Tgkill(int(as.pid), int(tid), unix.SIGKILL)
		return nil, err
	}
	me := int32(unix.Gettid())
	as.mu.Lock()
	if as.threads == nil {
		as.threads = make(map[int32]*thread)
	}
	as.threads[me] = t
	as.mu.Unlock()
	return t, nil
}

// cloneThread has the master clone a thread into the stub process; it parks
// in the pause loop, untraced, until a context's OS thread seizes it. A
// thread made ahead of need parks with every signal blocked.
func (as *addressSpace) cloneThread(ahead bool) (int32, error) {
	const flags = unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND |
		unix.CLONE_THREAD | unix.CLONE_SYSVSEM
	var tid uintptr
	var err error
	as.master.do(func() {
		if ahead {
			tid, err = as.masterThr.clonePark(flags)
		} else {
			tid, err = as.masterThr.clone(flags)
		}
	})
	if err != nil {
		return 0, err
	}
	if int64(tid) < 0 {
		return 0, fmt.Errorf("clone in stub: %w", unix.Errno(-int64(tid)))
	}
	return int32(tid), nil
}

// dropThread ends the calling OS thread's stub thread t.
func (as *addressSpace) dropThread(t *thread) {
	me := int32(unix.Gettid())
	as.mu.Lock()
	delete(as.threads, me)
	as.mu.Unlock()
	t.exit()
}

// Release implements platform.AddressSpace.Release.
func (as *addressSpace) Release() {
	as.mu.Lock()
	if as.dead {
		as.mu.Unlock()
		return
	}
	as.dead = true
	for _, w := range as.idle {
		as.retired = append(as.retired, w.region)
	}
	as.idle = nil
	as.mu.Unlock()
	// Reaping the leader waits until every other thread of the process has
	// been reaped by its own tracer, so the master does it without holding
	// up the caller.
	as.stopMu.Lock()
	as.stopped = true
	as.master.reqs <- func() {
		unix.Kill(int(as.pid), unix.SIGKILL)
		as.masterThr.reap()
		as.mu.Lock()
		as.reaped = true
		retired := as.retired
		as.retired = nil
		as.mu.Unlock()
		for _, r := range retired {
			as.p.sys.free(r)
		}
	}
	as.master.stop()
	as.stopMu.Unlock()
}

// masterDo runs f on the master unless Release has stopped it, and says
// whether it did.
func (as *addressSpace) masterDo(f func()) bool {
	as.stopMu.RLock()
	defer as.stopMu.RUnlock()
	if as.stopped {
		return false
	}
	as.master.do(f)
	return true
}
