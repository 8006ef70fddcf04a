// Package platform defines the seam between the Sentry and the mechanism
// that runs application code: address spaces the Sentry fills with ranges of
// its memory file, and contexts that run a thread's registers in an address
// space until the thread makes a system call, faults, or is interrupted.
//
// The ptrace platform (package ptrace) is the only implementation today;
// it has two modes, PTRACE_SYSEMU (ptrace.New) and seccomp traps
// (ptrace.NewSystrap, runsc --platform=systrap).
package platform

import (
	"errors"

	"github.com/moat-sandbox/moat/sentry/arch"
)

// Platform creates address spaces and execution contexts.
type Platform interface {
	// NewAddressSpace returns a new, empty address space.
	NewAddressSpace() (AddressSpace, error)
	// NewContext returns a context for one application thread. A context
	// must be used from one goroutine, which the platform may lock to its
	// OS thread.
	NewContext() Context
	// MemoryFileFD is the host fd of the memory file whose ranges address
	// spaces map.
	MemoryFileFD() int
}

// Protection bits, as PROT_READ, PROT_WRITE and PROT_EXEC.
const (
	Read  = 0x1
	Write = 0x2
	Exec  = 0x4
)

// AddressSpace is an application address space as the host sees it: a set of
// mappings of the memory file. The memory manager decides what is mapped;
// the address space only mirrors it.
type AddressSpace interface {
	// MapFile maps [off, off+length) of the memory file at addr with prot,
	// replacing whatever was mapped there.
	MapFile(addr uintptr, off uint64, length uintptr, prot int) error
	// Unmap removes mappings in [addr, addr+length).
	Unmap(addr, length uintptr) error
	// Release destroys the address space once no context uses it.
	Release()
}

// Batcher is an AddressSpace whose calls cost less made together: Batch
// runs f, which makes them (MapFile, Unmap, ...), and returns when f has.
type Batcher interface {
	Batch(f func())
}

// SwitchResult says why Switch returned.
type SwitchResult int

const (
	// SwitchSyscall means the thread made a system call; the registers
	// hold its number (Orig_rax) and arguments, and RIP points after the
	// syscall instruction.
	SwitchSyscall SwitchResult = iota
	// SwitchFault means the thread took a synchronous fault; the signal
	// information describes it.
	SwitchFault
	// SwitchInterrupted means Interrupt was called, or a host signal meant
	// for the Sentry arrived.
	SwitchInterrupted
)

// ErrContextDead is returned by Switch when the host thread running the
// context died (for example, it was killed by the OOM killer).
var ErrContextDead = errors.New("platform context died")

// Context runs one application thread.
type Context interface {
	// Switch runs regs (and the context's floating-point state) in as until
	// the thread makes a system call, faults, or is interrupted. On
	// SwitchFault, info holds the host signal information (signo, code and
	// fault address).
	Switch(as AddressSpace, regs *arch.Registers) (SwitchResult, *SignalInfo, error)
	// Interrupt makes a concurrent or the next Switch return
	// SwitchInterrupted. It may be called from any goroutine.
	Interrupt()
	// ClearInterrupt forgets a pending Interrupt.
	ClearInterrupt()
	// FPState returns the thread's floating-point state in the xsave
	// layout; SetFPState replaces it. They are used for signal frames, fork
	// and exec, never on the syscall fast path.
	FPState(as AddressSpace) ([]byte, error)
	SetFPState(as AddressSpace, state []byte) error
	// Release frees the context's host resources. The context must not be
	// used afterwards.
	Release()
}

// SignalInfo is the part of a host siginfo the Sentry needs for faults.
type SignalInfo struct {
	Signo int32
	Errno int32
	Code  int32
	// Addr is si_addr for SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGTRAP.
	Addr uint64
	// Raw is the whole host siginfo_t.
	Raw [128]byte
}

// MaxStubAddress is the lowest address used by platform machinery; see
// arch.MaxUserAddress.
var _ = arch.MaxUserAddress
