// Package vdso is Moat's own vDSO: the image the Sentry maps into every
// address space (named by AT_SYSINFO_EHDR) and the time keeper that feeds
// it. See the design notes at the end of this comment (kept current in
// this file).
package vdso
