package mm

// ForceCopyIn is CopyIn with Linux's FOLL_FORCE, as /proc/[pid]/mem and
// ptrace read: a mapping without PROT_READ is read if it may be made
// readable (PROT_NONE memory, for one).
func (m *MemoryManager) ForceCopyIn(addr uintptr, dst []byte) (int, error) {
	done := 0
	return m.translate(addr, len(dst), accessForceRead, func(b []byte) {
		done += copy(dst[done:], b)
	})
}

// ForceCopyOut is CopyOut with FOLL_FORCE: a private mapping without
// PROT_WRITE (program text, a PROT_READ private file mapping) is written
// through copy on write, leaving the file alone; a shared mapping without
// PROT_WRITE is not (EFAULT).
func (m *MemoryManager) ForceCopyOut(addr uintptr, src []byte) (int, error) {
	done := 0
	return m.translate(addr, len(src), accessForceWrite, func(b []byte) {
		done += copy(b, src[done:])
	})
}
