package linux

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel"
)

// memorySyscalls are the entries of memfd_create (sys_memfd.go), System V
// shared memory (sys_shm.go), process_vm_readv/writev (sys_process_vm.go)
// and the
// mmap and madvise entries (sys_mmap.go), which replace linux64.go's when
// init merges these into AMD64 (this file's init runs after linux64.go's).
func memorySyscalls() map[uintptr]kernel.Syscall {
	return map[uintptr]kernel.Syscall{
		unix.SYS_MEMFD_CREATE: {Name: "memfd_create", Fn: MemfdCreate, Support: kernel.SupportPartial,
			Note: "MFD_HUGETLB is refused (EINVAL)"},
		unix.SYS_SHMGET: {Name: "shmget", Fn: Shmget, Support: kernel.SupportFull},
		unix.SYS_SHMAT:  {Name: "shmat", Fn: Shmat, Support: kernel.SupportFull},
		unix.SYS_SHMDT:  {Name: "shmdt", Fn: Shmdt, Support: kernel.SupportFull},
		unix.SYS_SHMCTL: {Name: "shmctl", Fn: Shmctl, Support: kernel.SupportPartial,
			Note: "one IPC namespace per sandbox; SHM_LOCK only sets the mode bit (memory is never swapped)"},
		unix.SYS_MADVISE: {Name: "madvise", Fn: Madvise, Support: kernel.SupportPartial,
			Note: "DONTNEED, FREE, REMOVE, POPULATE_READ/WRITE, DONTFORK/DOFORK, WIPEONFORK/KEEPONFORK act; other known advice is accepted as a hint; HWPOISON and newer advice give EINVAL"},
		unix.SYS_PROCESS_VM_READV: {Name: "process_vm_readv", Fn: ProcessVMReadv, Support: kernel.SupportPartial,
			Note: "as Linux without Yama; exec-only mappings count as readable"},
		unix.SYS_PROCESS_VM_WRITEV: {Name: "process_vm_writev", Fn: ProcessVMWritev, Support: kernel.SupportPartial,
			Note: "as Linux without Yama; exec-only mappings count as readable"},
		unix.SYS_MMAP: {Name: "mmap", Fn: Mmap, Support: kernel.SupportPartial,
			Note: "MAP_SHARED mappings of gofer files share a page cache with read/write of the file in the sandbox and are written back at msync, fsync, close, the last munmap and every 5 s (host processes changing the file meanwhile are not seen); MAP_HUGETLB unsupported"},
	}
}

func init() { tableParts = append(tableParts, memorySyscalls) }
