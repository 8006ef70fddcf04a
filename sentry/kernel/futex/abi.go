package futex

// Linux futex ABI constants (include/uapi/linux/futex.h). golang.org/x/sys/unix
// does not carry them, so they live here, beside the code that gives them
// meaning; the syscall handler decodes futex(2) arguments with them.

// Futex commands: the low bits of futex(2)'s futex_op argument.
const (
	CmdWait          = 0  // FUTEX_WAIT
	CmdWake          = 1  // FUTEX_WAKE
	CmdFD            = 2  // FUTEX_FD (removed in Linux 2.6.26)
	CmdRequeue       = 3  // FUTEX_REQUEUE
	CmdCmpRequeue    = 4  // FUTEX_CMP_REQUEUE
	CmdWakeOp        = 5  // FUTEX_WAKE_OP
	CmdLockPI        = 6  // FUTEX_LOCK_PI
	CmdUnlockPI      = 7  // FUTEX_UNLOCK_PI
	CmdTrylockPI     = 8  // FUTEX_TRYLOCK_PI
	CmdWaitBitset    = 9  // FUTEX_WAIT_BITSET
	CmdWakeBitset    = 10 // FUTEX_WAKE_BITSET
	CmdWaitRequeuePI = 11 // FUTEX_WAIT_REQUEUE_PI
	CmdCmpRequeuePI  = 12 // FUTEX_CMP_REQUEUE_PI
	CmdLockPI2       = 13 // FUTEX_LOCK_PI2
)

// Option bits of futex_op.
const (
	// PrivateFlag is FUTEX_PRIVATE_FLAG: the futex is private to one
	// address space.
	PrivateFlag = 128
	// ClockRealtime is FUTEX_CLOCK_REALTIME: the timeout is measured on
	// CLOCK_REALTIME instead of CLOCK_MONOTONIC.
	ClockRealtime = 256
	// CmdMask is FUTEX_CMD_MASK: futex_op without the option bits.
	CmdMask = ^(PrivateFlag | ClockRealtime)
)

// Bits of a futex word used by the robust and PI futex protocols.
const (
	// Waiters is FUTEX_WAITERS: the owner must wake waiters on unlock.
	Waiters = 0x80000000
	// OwnerDied is FUTEX_OWNER_DIED: the owner exited without unlocking.
	OwnerDied = 0x40000000
	// TIDMask is FUTEX_TID_MASK: the owner's thread ID.
	TIDMask = 0x3fffffff
)

// BitsetMatchAny is FUTEX_BITSET_MATCH_ANY: the bitset of FUTEX_WAIT and
// FUTEX_WAKE, which matches every waiter.
const BitsetMatchAny = 0xffffffff

// RobustListLimit is ROBUST_LIST_LIMIT: the most entries of a robust list
// the kernel processes when a thread exits, so that a circular list ends.
const RobustListLimit = 2048

// FUTEX_WAKE_OP operations, the op field (bits 28-31) of val3.
const (
	OpSet      = 0 // FUTEX_OP_SET: *uaddr2 = oparg
	OpAdd      = 1 // FUTEX_OP_ADD: *uaddr2 += oparg
	OpOr       = 2 // FUTEX_OP_OR: *uaddr2 |= oparg
	OpAndN     = 3 // FUTEX_OP_ANDN: *uaddr2 &= ~oparg
	OpXor      = 4 // FUTEX_OP_XOR: *uaddr2 ^= oparg
	OpArgShift = 8 // FUTEX_OP_OPARG_SHIFT: use 1 << oparg as the operand
)

// FUTEX_WAKE_OP comparisons, the cmp field (bits 24-27) of val3. The
// comparison is of the old value of *uaddr2 with cmparg, both as signed
// 32-bit integers.
const (
	CmpEq = 0 // FUTEX_OP_CMP_EQ
	CmpNe = 1 // FUTEX_OP_CMP_NE
	CmpLt = 2 // FUTEX_OP_CMP_LT
	CmpLe = 3 // FUTEX_OP_CMP_LE
	CmpGt = 4 // FUTEX_OP_CMP_GT
	CmpGe = 5 // FUTEX_OP_CMP_GE
)

// EncodeOp builds a FUTEX_WAKE_OP val3 like Linux's FUTEX_OP macro.
func EncodeOp(op, oparg, cmp, cmparg uint32) uint32 {
	return (op&0xf)<<28 | (cmp&0xf)<<24 | (oparg&0xfff)<<12 | cmparg&0xfff
}
