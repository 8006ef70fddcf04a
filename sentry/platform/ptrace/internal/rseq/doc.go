// Package rseq finds the restartable-sequences area libc registered for the
// calling thread, which a process forked from that thread must unregister
// before it unmaps the memory the area lives in. Only cgo builds have one,
// and only race builds of the Sentry are cgo builds (runsc itself must be
// pure Go for its all-threads security calls); it is its own package because cgo and Go assembly cannot share
// one.
package rseq
