package mm

import (
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// uint32At returns the Sentry's pointer to the aligned 32-bit word at addr,
// populating the page and, for writes, making it private.
func (m *MemoryManager) uint32At(addr uintptr, write bool) (*uint32, error) {
	if addr%4 != 0 {
		return nil, unix.EINVAL
	}
	access := accessRead
	if write {
		access = accessWrite
	}
	var p *uint32
	_, err := m.translate(addr, 4, access, func(b []byte) {
		p = (*uint32)(unsafe.Pointer(&b[0]))
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// LoadUint32 atomically loads the word at addr.
func (m *MemoryManager) LoadUint32(addr uintptr) (uint32, error) {
	p, err := m.uint32At(addr, false)
	if err != nil {
		return 0, err
	}
	return atomic.LoadUint32(p), nil
}

// CompareAndSwapUint32 atomically replaces old with new at addr and returns
// the previous value.
func (m *MemoryManager) CompareAndSwapUint32(addr uintptr, old, new uint32) (uint32, error) {
	p, err := m.uint32At(addr, true)
	if err != nil {
		return 0, err
	}
	for {
		if atomic.CompareAndSwapUint32(p, old, new) {
			return old, nil
		}
		if cur := atomic.LoadUint32(p); cur != old {
			return cur, nil
		}
	}
}

// SwapUint32 atomically stores new at addr and returns the previous value.
func (m *MemoryManager) SwapUint32(addr uintptr, new uint32) (uint32, error) {
	p, err := m.uint32At(addr, true)
	if err != nil {
		return 0, err
	}
	return atomic.SwapUint32(p, new), nil
}

// StoreUint32 atomically stores v at addr.
func (m *MemoryManager) StoreUint32(addr uintptr, v uint32) error {
	p, err := m.uint32At(addr, true)
	if err != nil {
		return err
	}
	atomic.StoreUint32(p, v)
	return nil
}

// offsetOf returns the memory-file offset of b, a slice of f.mapping.
func (f *MemoryFile) offsetOf(b []byte) uint64 {
	return uint64(uintptr(unsafe.Pointer(&b[0])) - uintptr(unsafe.Pointer(&f.mapping[0])))
}
