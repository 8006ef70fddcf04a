// Package isolate confines runsc's own processes: it builds and installs
// seccomp-BPF allowlists (our own compiler, no libseccomp), pivots a process
// into an empty read-only root, drops capabilities and sets no_new_privs.
// StartPivotToEmptyRoot leaves the slow part of the pivot, detaching the
// old root (an RCU grace period), to a child process that shares the
// caller's memory (pivot_amd64.s), so the caller can clear its
// capabilities (ClearCapabilities: securebits and capset, no bounding-set
// drops, which no_new_privs makes moot) meanwhile.
//
// The Sentry and the gofer each get their own allowlist (SentryRules,
// GoferRules in rules_amd64.go: tables keyed by syscall number, one group
// per need, each with a comment). A filter always kills a process that
// runs a foreign architecture's syscall ABI or an x32 syscall, and always
// kills on the explicit denials (open, openat in the Sentry, execve,
// mount, ...). A syscall its table does not list, or whose argument
// conditions fail, is handled by the filter's Mode: killed in production,
// or trapped/logged in the debug modes used to discover missing entries.
//
// # Finding a missing entry
//
// A confined process that dies with SIGSYS (runsc do exits 159) made a
// syscall its filter refuses. Run it again with
//
//	runsc --seccomp-debug=trap do ...
//
// and the Go runtime prints "SIGSYS: bad system call" and the stack of the
// goroutine that made the call (naming the wrapper, e.g. syscall.openat,
// and its number), or with
//
//	runsc --seccomp-debug=log do ...
//
// and the kernel lets every unlisted call run and logs it: `dmesg | grep
// type=1326` shows syscall=N for each (SyscallName(N) names it). Explicit
// denials still kill in both modes; an audit line with code=0x80000000
// names the syscall that did.
//
// # The BPF program
//
// Filter.Build emits, in order: the architecture check, the x32 check, a
// binary search over the sorted syscall numbers of the table, and per
// syscall its matches (loads of the 32-bit halves of arguments, masked and
// compared), each jumping to the rule's action or on to the next match and
// finally to the default. The assembler works back to front so every jump
// target is placed before the jump; a target beyond a conditional jump's
// 8-bit reach goes through an unconditional (32-bit) trampoline.
//
// Nothing here holds locks. Functions that change per-thread state
// (Install, DropCapabilities, ClearCapabilities, SetNoNewPrivs) apply it
// to every thread of the Go process: DropCapabilities,
// ClearCapabilities and SetNoNewPrivs stop the world for each call
// (syscall.AllThreadsSyscall), which requires a binary built without cgo
// (AllThreadsSupported reports it); Install has the kernel synchronise
// the threads (SECCOMP_FILTER_FLAG_TSYNC). Prebuild compiles a filter on
// a goroutine while its process goes on starting. LimitBoundingSet
// changes only the calling thread, for the processes it starts.
package isolate
