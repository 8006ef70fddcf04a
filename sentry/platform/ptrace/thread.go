package ptrace

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
)

// thread is a traced stub thread. Its methods must be called from its
// tracer's OS thread.
type thread struct {
	tgid, tid int32
	// tracer is the host tid of the OS thread that seized this one.
	tracer int32
	// cpu is the CPU the thread is bound to, or -1 (see follow).
	cpu int32
	// initRegs are the registers the thread had when it was seized; they
	// give valid segment selectors for injected system calls.
	initRegs arch.Registers
}

// seize attaches the calling OS thread to a stub thread parked in the pause
// loop and stops it.
func seize(tgid, tid int32) (*thread, error) {
	t := &thread{tgid: tgid, tid: tid, tracer: int32(unix.Gettid()), cpu: -1}
	const opts = unix.PTRACE_O_TRACESYSGOOD | unix.PTRACE_O_EXITKILL
	if _, _, errno := unix.RawSyscall6(unix.SYS_PTRACE, unix.PTRACE_SEIZE, uintptr(tid), 0, opts, 0, 0); errno != 0 {
		return nil, fmt.Errorf("PTRACE_SEIZE %d: %w", tid, errno)
	}
	if err := unix.PtraceInterrupt(int(tid)); err != nil {
		return nil, fmt.Errorf("PTRACE_INTERRUPT %d: %w", tid, err)
	}
	for {
		ws, err := t.wait()
		if err != nil {
			return nil, err
		}
		if !ws.Stopped() {
			return nil, fmt.Errorf("stub thread %d: not stopped after PTRACE_INTERRUPT: %#x", tid, uint32(ws))
		}
		if ws.TrapCause() == unix.PTRACE_EVENT_STOP {
			break
		}
		// Some other stop (a stray signal): suppress it and wait on.
		if err := unix.PtraceCont(int(tid), 0); err != nil {
			return nil, err
		}
	}
	if err := t.init(); err != nil {
		return nil, err
	}
	return t, nil
}

// init records the thread's registers after its first stop.
func (t *thread) init() error {
	if err := unix.PtraceGetRegs(int(t.tid), &t.initRegs); err != nil {
		return fmt.Errorf("PTRACE_GETREGS %d: %w", t.tid, err)
	}
	return nil
}

// wait waits for the next state change of t.
func (t *thread) wait() (unix.WaitStatus, error) {
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(int(t.tid), &ws, unix.WALL, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("wait4 %d: %w", t.tid, err)
		}
		return ws, nil
	}
}

// syscall injects a system call into t, which must be stopped, and returns
// its raw result (a negative errno on failure). The thread is left stopped
// at the int3 after the syscall instruction.
func (t *thread) syscall(sysno, a0, a1, a2, a3, a4, a5 uintptr) (uintptr, error) {
	return t.inject(stubAddr+stubSyscallOff, sysno, a0, a1, a2, a3, a4, a5)
}

// clone injects clone or fork: the child parks in the stub's pause loop.
func (t *thread) clone(flags uintptr) (uintptr, error) {
	return t.inject(stubAddr+stubCloneOff, unix.SYS_CLONE, flags, 0, 0, 0, 0, 0)
}

// clonePark injects clone for a thread made ahead of need: it parks with
// every signal blocked (unblockAll undoes that once it is seized).
func (t *thread) clonePark(flags uintptr) (uintptr, error) {
	return t.inject(stubAddr+stubParkOff, unix.SYS_CLONE, flags, 0, 0, 0, 0, 0)
}

func (t *thread) inject(rip, sysno, a0, a1, a2, a3, a4, a5 uintptr) (uintptr, error) {
	regs := t.initRegs
	regs.Rax = uint64(sysno)
	regs.Rdi, regs.Rsi, regs.Rdx = uint64(a0), uint64(a1), uint64(a2)
	regs.R10, regs.R8, regs.R9 = uint64(a3), uint64(a4), uint64(a5)
	regs.Rip = uint64(rip)
	if err := t.run(&regs); err != nil {
		return 0, err
	}
	return uintptr(regs.Rax), nil
}

// mapFDStage says which step of stubMapFD failed.
type mapFDStage int

const (
	mapFDOpen  mapFDStage = iota // pidfd_open of the Sentry
	mapFDGetFD                   // pidfd_getfd of its descriptor
	mapFDMmap                    // the mmap itself
)

// mapFD runs stubMapFD in t: it maps the Sentry's descriptor fd at addr
// (mmap's other arguments as given) and returns mmap's raw result (a
// negative errno on failure) and, on failure, the step that failed.
func (t *thread) mapFD(sentryPID, fd int, addr, length uintptr, prot, flags int, off uint64) (uintptr, mapFDStage, error) {
	regs := t.initRegs
	regs.Rdi = uint64(sentryPID)
	regs.R10 = uint64(fd)
	regs.R9, regs.R13, regs.R14, regs.R15, regs.Rbp = uint64(addr), uint64(length), uint64(prot), uint64(flags), off
	regs.Rbx, regs.R8 = ^uint64(0), ^uint64(0)
	regs.Rip = stubAddr + stubMapFDOff
	if err := t.run(&regs); err != nil {
		return 0, 0, err
	}
	stage := mapFDMmap
	switch {
	case int64(regs.Rbx) < 0:
		stage = mapFDOpen
	case int64(regs.R8) < 0:
		stage = mapFDGetFD
	}
	return uintptr(regs.Rax), stage, nil
}

// run starts t at regs (with Orig_rax cleared, so no system call is
// restarted) and waits until it stops at an int3 of the stub; regs are then
// its registers there.
func (t *thread) run(regs *arch.Registers) error {
	regs.Orig_rax = ^uint64(0)
	sysno := regs.Rax
	if err := unix.PtraceSetRegs(int(t.tid), regs); err != nil {
		return fmt.Errorf("PTRACE_SETREGS %d: %w", t.tid, err)
	}
	if err := unix.PtraceCont(int(t.tid), 0); err != nil {
		return fmt.Errorf("PTRACE_CONT %d: %w", t.tid, err)
	}
	for {
		ws, err := t.wait()
		if err != nil {
			return err
		}
		if !ws.Stopped() {
			return fmt.Errorf("stub thread %d died during injected syscall %d: %#x", t.tid, sysno, uint32(ws))
		}
		if ws.StopSignal() == unix.SIGTRAP && ws.TrapCause() == 0 {
			break
		}
		if ws.StopSignal() == interruptSignal || ws.TrapCause() == unix.PTRACE_EVENT_STOP {
			// An interrupt meant for Switch; the caller's run loop checks
			// for pending work itself. Suppress it and go on.
			if err := unix.PtraceCont(int(t.tid), 0); err != nil {
				return err
			}
			continue
		}
		return fmt.Errorf("stub thread %d: unexpected stop %#x during injected syscall %d", t.tid, uint32(ws), sysno)
	}
	if err := unix.PtraceGetRegs(int(t.tid), regs); err != nil {
		return fmt.Errorf("PTRACE_GETREGS %d: %w", t.tid, err)
	}
	return nil
}

// exit makes t exit and reaps it.
func (t *thread) exit() {
	if int32(unix.Gettid()) != t.tracer {
		// Only the tracer can stop or reap t. Kill it: if the tracer is
		// gone, so is the ptrace link, and the kernel reaps the thread;
		// otherwise the tracer's next wait or its own exit does.
		unix.Tgkill(int(t.tgid), int(t.tid), unix.SIGKILL)
		return
	}
	regs := t.initRegs
	regs.Rax = unix.SYS_EXIT
	regs.Orig_rax = ^uint64(0)
	regs.Rdi = 0
	regs.Rip = stubAddr + stubSyscallOff
	if unix.PtraceSetRegs(int(t.tid), &regs) == nil && unix.PtraceCont(int(t.tid), 0) == nil {
		t.reap()
		return
	}
	// The thread is already gone or not stopped: kill what is left of it.
	unix.Tgkill(int(t.tgid), int(t.tid), unix.SIGKILL)
	t.reap()
}

// reap waits until t has exited.
func (t *thread) reap() {
	for {
		ws, err := t.wait()
		if err != nil || ws.Exited() || ws.Signaled() {
			return
		}
		// Still stopped (a signal or event on its way out): let it go on.
		unix.PtraceCont(int(t.tid), 0)
	}
}
