// Package isolate confines runsc's own processes: it builds and installs
// seccomp-BPF allowlists (our own compiler, no libseccomp), pivots a process
// into an empty read-only root, drops capabilities and sets no_new_privs.
//
// The Sentry and the gofer each get their own allowlist (SentryRules,
// GoferRules). A filter always kills a process that runs a foreign
// architecture's syscall ABI or an x32 syscall; a syscall its table does
// not list is handled by the filter's Mode: killed in production, or
// trapped/logged in the debug modes used to discover missing entries.
//
// Nothing here holds locks. Functions that change process-wide state
// (Install, DropCapabilities, SetNoNewPrivs) apply it to every thread of
// the Go process, which requires a binary built without cgo.
package isolate
