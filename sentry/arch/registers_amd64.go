package arch

import "golang.org/x/sys/unix"

// Registers are the general registers of an amd64 thread, in the layout of
// the kernel's struct user_regs_struct.
type Registers = unix.PtraceRegs

// SyscallNo returns the system call number of a thread stopped at syscall
// entry.
func SyscallNo(r *Registers) uintptr { return uintptr(r.Orig_rax) }

// SyscallArgs returns the arguments of a thread stopped at syscall entry.
func SyscallArgs(r *Registers) SyscallArguments {
	return SyscallArguments{
		SyscallArgument(r.Rdi), SyscallArgument(r.Rsi), SyscallArgument(r.Rdx),
		SyscallArgument(r.R10), SyscallArgument(r.R8), SyscallArgument(r.R9),
	}
}

// SetReturn sets the system call return value.
func SetReturn(r *Registers, v uintptr) { r.Rax = uint64(v) }

// Return returns the system call return value.
func Return(r *Registers) uintptr { return uintptr(r.Rax) }

// SyscallInsnLen is the length of the syscall instruction (0f 05).
const SyscallInsnLen = 2
