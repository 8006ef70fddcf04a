package linux

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/kernel"
	"github.com/moat-sandbox/moat/sentry/mm"
)

// mmapMinAddr is Linux's default vm.mmap_min_addr.
const mmapMinAddr = 0x10000

// mmap flags Linux ignores.
const mapIgnored = unix.MAP_DENYWRITE | unix.MAP_EXECUTABLE | unix.MAP_STACK | unix.MAP_NORESERVE | unix.MAP_POPULATE | unix.MAP_LOCKED | unix.MAP_NONBLOCK

// Mmap implements mmap(2).
func Mmap(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	addr, length, prot, flags, fd, off := a[0].Pointer(), a[1].Uint64(), int(a[2].Int()), int(a[3].Int()), a[4].Int(), a[5].Int64()
	// Linux's mmap ignores protection bits it does not know (mprotect
	// refuses them).
	prot &= unix.PROT_READ | unix.PROT_WRITE | unix.PROT_EXEC
	typ := flags & unix.MAP_TYPE
	private := typ == unix.MAP_PRIVATE
	switch typ {
	case unix.MAP_PRIVATE, unix.MAP_SHARED:
	case unix.MAP_SHARED_VALIDATE:
		if flags&unix.MAP_ANONYMOUS != 0 {
			return 0, unix.EINVAL // Linux validates file mappings only
		}
		known := unix.MAP_SHARED_VALIDATE | unix.MAP_FIXED | unix.MAP_ANONYMOUS | unix.MAP_GROWSDOWN |
			unix.MAP_FIXED_NOREPLACE | unix.MAP_32BIT | unix.MAP_HUGETLB | mapIgnored | (0x3f << 26)
		if flags&^known != 0 {
			return 0, unix.EOPNOTSUPP
		}
	default:
		return 0, unix.EINVAL
	}
	if length == 0 || off%arch.PageSize != 0 {
		return 0, unix.EINVAL
	}
	if flags&unix.MAP_HUGETLB != 0 {
		t.Log().Info("mmap: MAP_HUGETLB is not supported")
		return 0, unix.EINVAL
	}
	o := mm.MMapOpts{
		Addr:      addr,
		Length:    uintptr(length),
		Prot:      prot,
		Private:   private,
		Fixed:     flags&unix.MAP_FIXED != 0,
		NoReplace: flags&unix.MAP_FIXED_NOREPLACE != 0 && flags&unix.MAP_FIXED == 0,
		GrowsDown: flags&unix.MAP_GROWSDOWN != 0,
		NoReserve: flags&unix.MAP_NORESERVE != 0,
	}
	// READ_IMPLIES_EXEC: readable mappings are executable too, but
	// for files on noexec mounts (do_mmap).
	readImpliesExec := prot&unix.PROT_READ != 0 && t.ReadImpliesExec()
	if readImpliesExec {
		o.Prot |= unix.PROT_EXEC
	}
	if o.Fixed && addr%arch.PageSize != 0 {
		return 0, unix.EINVAL
	}
	// Linux refuses fixed mappings below vm.mmap_min_addr (64 KiB by
	// default) with EPERM.
	if (o.Fixed || o.NoReplace) && addr < mmapMinAddr {
		return 0, unix.EPERM
	}
	if flags&unix.MAP_32BIT != 0 && !o.Fixed && addr == 0 {
		o.Addr = 0x40000000
	}
	if flags&unix.MAP_ANONYMOUS == 0 {
		f := t.FDTable().GetFile(fd)
		if f == nil {
			return 0, unix.EBADF
		}
		defer f.DecRef()
		// An O_PATH descriptor has no file operations: EBADF, as fget
		// refuses it.
		if f.IsPath() {
			return 0, unix.EBADF
		}
		if !f.Readable() {
			return 0, unix.EACCES
		}
		st, err := f.Stat(t)
		if err != nil {
			return 0, err
		}
		switch {
		case st.IsRegular():
		case st.Type() == unix.S_IFCHR && st.Rdev == unix.Mkdev(1, 5):
			// /dev/zero maps anonymous memory.
			if private {
				o.Name = ""
			}
			return mmapPopulate(t, o, flags)
		default:
			return 0, unix.ENODEV
		}
		o.MaxProt = unix.PROT_READ | unix.PROT_WRITE | unix.PROT_EXEC
		if !private && !f.Writable() {
			if prot&unix.PROT_WRITE != 0 {
				return 0, unix.EACCES
			}
			o.MaxProt &^= unix.PROT_WRITE
		}
		if mnt := f.VirtualDentry().Mount; mnt != nil && mnt.Flags().NoExec {
			if prot&unix.PROT_EXEC != 0 {
				return 0, unix.EPERM
			}
			o.MaxProt &^= unix.PROT_EXEC
			if readImpliesExec {
				o.Prot &^= unix.PROT_EXEC
			}
		}
		if off < 0 || uint64(off)+length < uint64(off) {
			return 0, unix.EOVERFLOW
		}
		if mo, ok := f.Impl().(mm.Mappable); ok {
			// tmpfs files and memfds: map the object's own pages.
			o.Object = mo.MemoryObject()
		} else if so, ok := f.Impl().(mm.SharedMappable); ok && !private {
			// Gofer files: the pages of the file's cache, written back.
			obj, err := so.SharedObject(t.MemoryManager().MemoryFile())
			if err != nil {
				return 0, err
			}
			defer obj.DecRef()
			o.Object = obj
		} else {
			o.File = kernel.MappableFile(f)
		}
		o.Offset = off
		o.Name = t.MappingName(f)
	}
	return mmapPopulate(t, o, flags)
}

// memLimits returns the caller's limits on its address space.
func memLimits(t *kernel.Task) *mm.Limits {
	l := t.ThreadGroup().Limits()
	data := l.Get(unix.RLIMIT_DATA)
	return &mm.Limits{
		AS:      l.Get(unix.RLIMIT_AS).Cur,
		Data:    data.Cur,
		DataMax: data.Max,
		MemLock: l.Get(unix.RLIMIT_MEMLOCK).Cur,
		IPCLock: t.Credentials().HasCapability(unix.CAP_IPC_LOCK),
	}
}

// mmapPopulate maps o and, for MAP_POPULATE or MAP_LOCKED, fills its pages
// (failing to is not an error, as on Linux).
func mmapPopulate(t *kernel.Task, o mm.MMapOpts, flags int) (uintptr, error) {
	m := t.MemoryManager()
	o.Locked = flags&unix.MAP_LOCKED != 0
	o.Limits = memLimits(t)
	r, err := m.MMap(o)
	populate := flags&(unix.MAP_POPULATE|unix.MAP_LOCKED) != 0 || m.PopulatesNewMappings()
	if err == nil && populate && flags&unix.MAP_NONBLOCK == 0 {
		m.Populate(r, o.Length)
	}
	return r, err
}

// Munmap implements munmap(2).
func Munmap(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return 0, t.MemoryManager().MUnmap(a[0].Pointer(), uintptr(a[1].Uint64()))
}

// Mprotect implements mprotect(2).
func Mprotect(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	prot := int(a[2].Int())
	growsDown := prot&unix.PROT_GROWSDOWN != 0
	if prot&unix.PROT_GROWSDOWN != 0 && prot&unix.PROT_GROWSUP != 0 {
		return 0, unix.EINVAL
	}
	prot &^= unix.PROT_GROWSDOWN | unix.PROT_GROWSUP
	return 0, t.MemoryManager().MProtect(a[0].Pointer(), uintptr(a[1].Uint64()), prot, mm.MProtectOpts{
		GrowsDown:       growsDown,
		ReadImpliesExec: t.ReadImpliesExec(),
	})
}

// Mremap implements mremap(2).
func Mremap(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	old, oldSize, newSize, flags, newAddr := a[0].Pointer(), uintptr(a[1].Uint64()), uintptr(a[2].Uint64()), a[3].Int(), a[4].Pointer()
	if flags&^(unix.MREMAP_MAYMOVE|unix.MREMAP_FIXED|unix.MREMAP_DONTUNMAP) != 0 {
		return 0, unix.EINVAL
	}
	return t.MemoryManager().MRemap(old, oldSize, newSize, mm.MRemapOpts{
		MayMove:   flags&unix.MREMAP_MAYMOVE != 0,
		Fixed:     flags&unix.MREMAP_FIXED != 0,
		DontUnmap: flags&unix.MREMAP_DONTUNMAP != 0,
		NewAddr:   newAddr,
		Limits:    memLimits(t),
	})
}

// Brk implements brk(2).
func Brk(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return t.MemoryManager().Brk(a[0].Pointer(), memLimits(t)), nil
}

// Madvise implements madvise(2).
func Madvise(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	addr, length, advice := a[0].Pointer(), uintptr(a[1].Uint64()), a[2].Int()
	if addr%arch.PageSize != 0 {
		return 0, unix.EINVAL
	}
	length = (length + arch.PageSize - 1) &^ (arch.PageSize - 1)
	if length == 0 {
		return 0, nil
	}
	m := t.MemoryManager()
	switch advice {
	case unix.MADV_DONTNEED:
		return 0, m.MAdviseDontNeed(addr, length)
	case unix.MADV_DONTFORK, unix.MADV_DOFORK, unix.MADV_WIPEONFORK, unix.MADV_KEEPONFORK:
		return 0, m.MAdviseFork(addr, length, int(advice))
	case unix.MADV_NORMAL, unix.MADV_RANDOM, unix.MADV_SEQUENTIAL, unix.MADV_WILLNEED,
		unix.MADV_HUGEPAGE, unix.MADV_NOHUGEPAGE,
		unix.MADV_DONTDUMP, unix.MADV_DODUMP, unix.MADV_MERGEABLE, unix.MADV_UNMERGEABLE,
		unix.MADV_COLD, unix.MADV_PAGEOUT:
		// Hints: the Sentry's memory behaves the same either way.
		return 0, m.CheckRange(addr, length)
	case unix.MADV_FREE:
		// Pages may be dropped at any time; dropping now is allowed.
		return 0, m.MAdviseFree(addr, length)
	case unix.MADV_REMOVE:
		return 0, m.MAdviseRemove(addr, length)
	case unix.MADV_POPULATE_READ, unix.MADV_POPULATE_WRITE:
		return 0, m.MAdvisePopulate(addr, length, advice == unix.MADV_POPULATE_WRITE)
	case unix.MADV_HWPOISON:
		return 0, unix.EINVAL
	default:
		return 0, unix.EINVAL
	}
}

// Msync implements msync(2).
func Msync(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	addr, length, flags := a[0].Pointer(), uintptr(a[1].Uint64()), a[2].Int()
	if addr%arch.PageSize != 0 || flags&^(unix.MS_ASYNC|unix.MS_SYNC|unix.MS_INVALIDATE) != 0 ||
		flags&unix.MS_ASYNC != 0 && flags&unix.MS_SYNC != 0 {
		return 0, unix.EINVAL
	}
	length = (length + arch.PageSize - 1) &^ (arch.PageSize - 1)
	// Shared mappings of gofer files write their dirty pages back; tmpfs
	// files and memfds are their pages.
	if err := t.MemoryManager().CheckRange(addr, length); err != nil {
		return 0, err
	}
	if flags&unix.MS_INVALIDATE != 0 && t.MemoryManager().AnyLocked(addr, length) {
		return 0, unix.EBUSY
	}
	return 0, t.MemoryManager().SyncRange(addr, length)
}

// Mincore implements mincore(2).
func Mincore(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	addr, length, vec := a[0].Pointer(), uintptr(a[1].Uint64()), a[2].Pointer()
	if addr%arch.PageSize != 0 {
		return 0, unix.EINVAL
	}
	r, err := t.MemoryManager().Resident(addr, length)
	if err != nil {
		return 0, err
	}
	_, err = t.CopyOutBytes(vec, r)
	return 0, err
}

// lockRange widens [addr, addr+length) to whole pages.
func lockRange(a arch.SyscallArguments) (start, length uintptr) {
	addr, l := a[0].Pointer(), uintptr(a[1].Uint64())
	start = addr &^ (arch.PageSize - 1)
	end := (addr + l + arch.PageSize - 1) &^ (arch.PageSize - 1)
	return start, end - start
}

// Mlock implements mlock(2): the pages are populated (memory is never
// swapped, so that and RLIMIT_MEMLOCK's accounting are all locking means
// here).
func Mlock(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	start, length := lockRange(a)
	return 0, t.MemoryManager().MLock(start, length, false, memLimits(t))
}

// Mlock2 implements mlock2(2).
func Mlock2(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	flags := a[2].Int()
	if flags&^unix.MLOCK_ONFAULT != 0 {
		return 0, unix.EINVAL
	}
	start, length := lockRange(a)
	return 0, t.MemoryManager().MLock(start, length, flags&unix.MLOCK_ONFAULT != 0, memLimits(t))
}

// Munlock implements munlock(2).
func Munlock(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	start, length := lockRange(a)
	return 0, t.MemoryManager().MUnlock(start, length)
}

// Mlockall implements mlockall(2): MCL_CURRENT locks (and, without
// MCL_ONFAULT, populates) every mapping, MCL_FUTURE every later one.
func Mlockall(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	flags := a[0].Int()
	if flags == 0 || flags&^(unix.MCL_CURRENT|unix.MCL_FUTURE|unix.MCL_ONFAULT) != 0 ||
		flags&(unix.MCL_CURRENT|unix.MCL_FUTURE) == 0 {
		return 0, unix.EINVAL
	}
	return 0, t.MemoryManager().MLockAll(flags&unix.MCL_CURRENT != 0, flags&unix.MCL_FUTURE != 0,
		flags&unix.MCL_ONFAULT != 0, memLimits(t))
}

// Munlockall implements munlockall(2).
func Munlockall(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	t.MemoryManager().MUnlockAll()
	return 0, nil
}
