package startpages

import (
	"syscall"
	"unsafe"
)

const (
	madvDontneed = 4
	ptLoad       = 1
	pfW          = 2
	pageSize     = 4096
)

// segment is a read-only PT_LOAD segment of the running executable.
type segment struct{ start, end uintptr }

// readOnlySegments returns the executable's PT_LOAD segments that are not
// writable, page-aligned, or nil when the image is not where a non-PIE
// executable's is.
func readOnlySegments() []segment {
	if imageBase == 0 {
		return nil // no known layout on this architecture
	}
	// mincore fails with ENOMEM if imageBase is not mapped: never read
	// memory that may not be there.
	var vec [1]byte
	if _, _, e := syscall.RawSyscall(syscall.SYS_MINCORE, imageBase, pageSize, uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		return nil
	}
	hdr := (*[64]byte)(at(imageBase))
	if hdr[0] != 0x7f || hdr[1] != 'E' || hdr[2] != 'L' || hdr[3] != 'F' || hdr[4] != 2 /* ELFCLASS64 */ {
		return nil
	}
	phoff := *(*uint64)(unsafe.Pointer(&hdr[32]))
	phentsize := *(*uint16)(unsafe.Pointer(&hdr[54]))
	phnum := *(*uint16)(unsafe.Pointer(&hdr[56]))
	if phentsize < 56 || phnum == 0 || phnum > 32 || phoff+uint64(phentsize)*uint64(phnum) > pageSize {
		return nil // the program headers must lie in the page checked above
	}
	self := funcPC()
	var segs []segment
	inText := false
	for i := uint64(0); i < uint64(phnum); i++ {
		ph := at(imageBase + uintptr(phoff+i*uint64(phentsize)))
		typ := *(*uint32)(ph)
		flags := *(*uint32)(unsafe.Add(ph, 4))
		vaddr := *(*uint64)(unsafe.Add(ph, 16))
		memsz := *(*uint64)(unsafe.Add(ph, 40))
		if typ != ptLoad || flags&pfW != 0 || memsz == 0 {
			continue
		}
		s := segment{uintptr(vaddr) &^ (pageSize - 1), (uintptr(vaddr+memsz) + pageSize - 1) &^ (pageSize - 1)}
		inText = inText || (self >= s.start && self < s.end)
		segs = append(segs, s)
	}
	if !inText {
		return nil // not the image this code runs from
	}
	return segs
}

// at turns an address known to be mapped into a pointer.
func at(addr uintptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&addr))
}

// funcPC returns the address of code in this package.
func funcPC() uintptr {
	f := Release
	return **(**uintptr)(unsafe.Pointer(&f))
}

// segments are the executable's read-only segments, found once at init
// (before any seccomp filter: finding them takes mincore).
var segments []segment

// release drops the page table entries of the read-only segments.
func release() {
	for _, s := range segments {
		syscall.RawSyscall(syscall.SYS_MADVISE, s.start, s.end-s.start, madvDontneed)
	}
}
