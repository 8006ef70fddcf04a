package ptrace

import (
	"fmt"
	"runtime"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/platform"
)

// context runs one application thread. Its goroutine is locked to its OS
// thread from the first Switch on, since that thread traces the stub
// threads.
type context struct {
	locked bool
	as     *addressSpace
	thr    *thread

	// running is the thread Interrupt signals; nil when no Switch can be
	// affected.
	running     atomic.Pointer[thread]
	interrupted atomic.Bool
}

// threadFor returns the context's thread in as, creating it if needed.
func (c *context) threadFor(as *addressSpace) (*thread, error) {
	if !c.locked {
		runtime.LockOSThread()
		c.locked = true
	}
	if c.as == as && c.thr != nil {
		return c.thr, nil
	}
	if c.thr != nil {
		c.running.Store(nil)
		c.as.dropThread(c.thr)
		c.as, c.thr = nil, nil
	}
	t, err := as.newThread()
	if err != nil {
		return nil, err
	}
	c.as, c.thr = as, t
	c.running.Store(t)
	return t, nil
}

// Switch implements platform.Context.Switch.
func (c *context) Switch(pas platform.AddressSpace, regs *arch.Registers) (platform.SwitchResult, *platform.SignalInfo, error) {
	as := pas.(*addressSpace)
	t, err := c.threadFor(as)
	if err != nil {
		return 0, nil, err
	}
	if c.interrupted.Swap(false) {
		return platform.SwitchInterrupted, nil, nil
	}
	regs.Orig_rax = ^uint64(0)
	t.follow()
	if err := setRegs(t.tid, regs); err != nil {
		return 0, nil, fmt.Errorf("PTRACE_SETREGS %d: %w", t.tid, err)
	}
	if err := ptraceSysemu(t.tid); err != nil {
		return 0, nil, fmt.Errorf("PTRACE_SYSEMU %d: %w", t.tid, err)
	}
	ws, err := t.wait()
	if err != nil {
		return 0, nil, err
	}
	if !ws.Stopped() {
		return 0, nil, fmt.Errorf("%w: stub thread %d: status %#x", platform.ErrContextDead, t.tid, uint32(ws))
	}
	if err := getRegs(t.tid, regs); err != nil {
		return 0, nil, fmt.Errorf("PTRACE_GETREGS %d: %w", t.tid, err)
	}
	sig := ws.StopSignal()
	switch {
	case sig == unix.SIGTRAP|0x80:
		return platform.SwitchSyscall, nil, nil
	case sig == interruptSignal, ws.TrapCause() == unix.PTRACE_EVENT_STOP:
		c.interrupted.Store(false)
		return platform.SwitchInterrupted, nil, nil
	case sig == unix.SIGSEGV, sig == unix.SIGBUS, sig == unix.SIGFPE, sig == unix.SIGILL, sig == unix.SIGTRAP:
		info, err := getSiginfo(t.tid)
		if err != nil {
			return 0, nil, err
		}
		return platform.SwitchFault, info, nil
	default:
		// Any other host signal (SIGCHLD, SIGWINCH, ...) is not the
		// application's business: drop it.
		return platform.SwitchInterrupted, nil, nil
	}
}

// Interrupt implements platform.Context.Interrupt.
func (c *context) Interrupt() {
	c.interrupted.Store(true)
	if t := c.running.Load(); t != nil {
		unix.Tgkill(int(t.tgid), int(t.tid), interruptSignal)
	}
}

// ClearInterrupt implements platform.Context.ClearInterrupt.
func (c *context) ClearInterrupt() { c.interrupted.Store(false) }

// Release implements platform.Context.Release.
func (c *context) Release() {
	if c.thr != nil {
		c.running.Store(nil)
		c.as.dropThread(c.thr)
		c.as, c.thr = nil, nil
	}
}

// FPState implements platform.Context.FPState.
func (c *context) FPState(pas platform.AddressSpace) ([]byte, error) {
	t, err := c.threadFor(pas.(*addressSpace))
	if err != nil {
		return nil, err
	}
	return getXState(t.tid)
}

// SetFPState implements platform.Context.SetFPState.
func (c *context) SetFPState(pas platform.AddressSpace, state []byte) error {
	t, err := c.threadFor(pas.(*addressSpace))
	if err != nil {
		return err
	}
	return setXState(t.tid, state)
}

// InitialRegisters returns registers with valid user segment selectors and
// flags for a new application thread.
func InitialRegisters() arch.Registers {
	return arch.Registers{Cs: 0x33, Ss: 0x2b, Eflags: 0x202}
}
