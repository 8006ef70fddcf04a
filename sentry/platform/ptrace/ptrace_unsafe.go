package ptrace

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/platform"
)

const (
	ptraceSysemuReq = 31     // PTRACE_SYSEMU
	ntX86XState     = 0x202  // NT_X86_XSTATE
	maxXStateSize   = 0x4000 // generous bound on the xsave area
)

func ptraceSysemu(tid int32) error {
	_, _, errno := unix.RawSyscall6(unix.SYS_PTRACE, ptraceSysemuReq, uintptr(tid), 0, 0, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// unblockAll empties the signal mask of the stopped tracee tid
// (PTRACE_SETSIGMASK).
func unblockAll(tid int32) error {
	const ptraceSetSigmask = 0x420b
	var none uint64
	_, _, errno := unix.RawSyscall6(unix.SYS_PTRACE, ptraceSetSigmask, uintptr(tid), 8, uintptr(unsafe.Pointer(&none)), 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

func getSiginfo(tid int32) (*platform.SignalInfo, error) {
	info := &platform.SignalInfo{}
	_, _, errno := unix.RawSyscall6(unix.SYS_PTRACE, unix.PTRACE_GETSIGINFO, uintptr(tid), 0, uintptr(unsafe.Pointer(&info.Raw[0])), 0, 0)
	if errno != 0 {
		return nil, fmt.Errorf("PTRACE_GETSIGINFO %d: %w", tid, errno)
	}
	info.Signo = *(*int32)(unsafe.Pointer(&info.Raw[0]))
	info.Errno = *(*int32)(unsafe.Pointer(&info.Raw[4]))
	info.Code = *(*int32)(unsafe.Pointer(&info.Raw[8]))
	info.Addr = *(*uint64)(unsafe.Pointer(&info.Raw[16]))
	return info, nil
}

func getXState(tid int32) ([]byte, error) {
	buf := make([]byte, maxXStateSize)
	iov := unix.Iovec{Base: &buf[0], Len: uint64(len(buf))}
	_, _, errno := unix.RawSyscall6(unix.SYS_PTRACE, unix.PTRACE_GETREGSET, uintptr(tid), ntX86XState, uintptr(unsafe.Pointer(&iov)), 0, 0)
	if errno != 0 {
		return nil, fmt.Errorf("PTRACE_GETREGSET %d: %w", tid, errno)
	}
	return buf[:iov.Len], nil
}

func setXState(tid int32, state []byte) error {
	if len(state) == 0 {
		return nil
	}
	iov := unix.Iovec{Base: &state[0], Len: uint64(len(state))}
	_, _, errno := unix.RawSyscall6(unix.SYS_PTRACE, unix.PTRACE_SETREGSET, uintptr(tid), ntX86XState, uintptr(unsafe.Pointer(&iov)), 0, 0)
	if errno != 0 {
		return fmt.Errorf("PTRACE_SETREGSET %d: %w", tid, errno)
	}
	return nil
}

// kernelSigaction is struct sigaction as rt_sigaction takes it on amd64.
type kernelSigaction struct {
	handler  uintptr
	flags    uint64
	restorer uintptr
	mask     uint64
}

// quietChildStops sets the Sentry's SIGCHLD disposition to SIG_DFL behind
// the Go runtime's back. Every ptrace stop of a stub thread notifies its
// tracer's process with SIGCHLD; with the runtime's handler installed, that
// is a signal delivery (often into the tracer's own wait4) per application
// system call. Under SIG_DFL the kernel drops SIGCHLD when it is generated,
// and unlike SIG_IGN it leaves wait4's reaping alone. Nothing in the
// Sentry asks for SIGCHLD.
func quietChildStops() error {
	act := kernelSigaction{handler: 0} // SIG_DFL
	_, _, errno := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(unix.SIGCHLD), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
	if errno != 0 {
		return fmt.Errorf("rt_sigaction(SIGCHLD, SIG_DFL): %w", errno)
	}
	return nil
}

// getRegs and setRegs are PTRACE_GETREGS and PTRACE_SETREGS as raw system
// calls: they never block, so the hot path skips the Go scheduler's
// entersyscall/exitsyscall that unix.PtraceGetRegs pays.
func getRegs(tid int32, regs *arch.Registers) error {
	_, _, errno := unix.RawSyscall6(unix.SYS_PTRACE, unix.PTRACE_GETREGS, uintptr(tid), 0, uintptr(unsafe.Pointer(regs)), 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

func setRegs(tid int32, regs *arch.Registers) error {
	_, _, errno := unix.RawSyscall6(unix.SYS_PTRACE, unix.PTRACE_SETREGS, uintptr(tid), 0, uintptr(unsafe.Pointer(regs)), 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
