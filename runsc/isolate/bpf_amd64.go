package isolate

import "golang.org/x/sys/unix"

// auditArch is the seccomp_data.arch value of the native syscall ABI.
const auditArch = unix.AUDIT_ARCH_X86_64

// x32SyscallBit marks x32 ABI syscall numbers (__X32_SYSCALL_BIT); the
// filter kills any syscall number at or above it.
const x32SyscallBit = 0x40000000
