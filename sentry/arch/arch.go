// Package arch holds the architecture-dependent state of an application
// thread: its general registers, its floating-point state, the layout of
// signal frames, and the decoding of system call arguments.
//
// Only amd64 exists today; architecture code lives in _amd64.go files.
package arch

// SyscallArgument is one raw argument of a system call.
type SyscallArgument uintptr

// Int returns the argument as a 32-bit signed integer, as C's int.
func (a SyscallArgument) Int() int32 { return int32(a) }

// Uint returns the argument as a 32-bit unsigned integer.
func (a SyscallArgument) Uint() uint32 { return uint32(a) }

// Int64 returns the argument as a 64-bit signed integer.
func (a SyscallArgument) Int64() int64 { return int64(a) }

// Uint64 returns the argument as a 64-bit unsigned integer.
func (a SyscallArgument) Uint64() uint64 { return uint64(a) }

// Pointer returns the argument as an application address.
func (a SyscallArgument) Pointer() uintptr { return uintptr(a) }

// SyscallArguments are the six arguments of a system call.
type SyscallArguments [6]SyscallArgument
