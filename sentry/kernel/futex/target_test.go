package futex

import (
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// fakeMem is memory that fake address spaces map: an array of words, read
// and written with sync/atomic like the Sentry's mapping of application
// memory.
type fakeMem struct {
	id    uint64
	words []uint32
}

func newFakeMem(id uint64, size int) *fakeMem {
	return &fakeMem{id: id, words: make([]uint32, size/4)}
}

// fakeAS is a Target: an address space mapping mem at base.
type fakeAS struct {
	id       uint64
	mem      *fakeMem
	base     uintptr
	shared   bool // a MAP_SHARED mapping: shared futexes key on mem
	readOnly bool
	copies   atomic.Int64 // CopyInBytes calls
}

var _ Target = (*fakeAS)(nil)

// newFakeAS returns a private address space with size bytes of its own
// memory at base.
func newFakeAS(id uint64, base uintptr, size int) *fakeAS {
	return &fakeAS{id: id, mem: newFakeMem(id+1000, size), base: base}
}

func (a *fakeAS) word(addr uintptr) (*uint32, error) {
	if addr%4 != 0 {
		panic("fakeAS: misaligned word access")
	}
	if addr < a.base || addr-a.base >= uintptr(len(a.mem.words))*4 {
		return nil, unix.EFAULT
	}
	return &a.mem.words[(addr-a.base)/4], nil
}

func (a *fakeAS) LoadUint32(addr uintptr) (uint32, error) {
	p, err := a.word(addr)
	if err != nil {
		return 0, err
	}
	return atomic.LoadUint32(p), nil
}

func (a *fakeAS) CompareAndSwapUint32(addr uintptr, old, new uint32) (uint32, error) {
	p, err := a.word(addr)
	if err != nil {
		return 0, err
	}
	if a.readOnly {
		return 0, unix.EFAULT
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

func (a *fakeAS) SwapUint32(addr uintptr, new uint32) (uint32, error) {
	p, err := a.word(addr)
	if err != nil {
		return 0, err
	}
	if a.readOnly {
		return 0, unix.EFAULT
	}
	return atomic.SwapUint32(p, new), nil
}

func (a *fakeAS) SharedKey(addr uintptr) (Key, error) {
	if _, err := a.word(addr &^ 3); err != nil {
		return Key{}, err
	}
	if a.shared {
		return Key{Kind: KindShared, A: a.mem.id, B: uint64(addr - a.base)}, nil
	}
	return Key{Kind: KindSharedPrivateMapping, A: a.id, B: uint64(addr)}, nil
}

func (a *fakeAS) PrivateKey(addr uintptr) Key {
	return Key{Kind: KindPrivate, A: a.id, B: uint64(addr)}
}

func (a *fakeAS) CopyInBytes(addr uintptr, dst []byte) (int, error) {
	a.copies.Add(1)
	for i := range dst {
		b := addr + uintptr(i)
		p, err := a.word(b &^ 3)
		if err != nil {
			return i, err
		}
		dst[i] = byte(atomic.LoadUint32(p) >> (8 * (b % 4)))
	}
	return len(dst), nil
}

// store and load are the application's plain accesses, for tests.
func (a *fakeAS) store(t *testing.T, addr uintptr, v uint32) {
	t.Helper()
	p, err := a.word(addr)
	if err != nil {
		t.Fatalf("store at %#x: %v", addr, err)
	}
	atomic.StoreUint32(p, v)
}

func (a *fakeAS) load(t *testing.T, addr uintptr) uint32 {
	t.Helper()
	v, err := a.LoadUint32(addr)
	if err != nil {
		t.Fatalf("load at %#x: %v", addr, err)
	}
	return v
}

// store64 stores a little-endian 64-bit word, as amd64 lays out pointers.
// addr need not be aligned.
func (a *fakeAS) store64(t *testing.T, addr uintptr, v uint64) {
	t.Helper()
	for i := range uintptr(8) {
		b := addr + i
		p, err := a.word(b &^ 3)
		if err != nil {
			t.Fatalf("store64 at %#x: %v", addr, err)
		}
		shift := 8 * (b % 4)
		for {
			old := atomic.LoadUint32(p)
			nv := old&^(0xff<<shift) | uint32(byte(v>>(8*i)))<<shift
			if atomic.CompareAndSwapUint32(p, old, nv) {
				break
			}
		}
	}
}

// queued counts the waiters queued in m, checking each bucket's links.
func (m *Manager) queued(t *testing.T) int {
	t.Helper()
	n := 0
	for i := range m.buckets {
		b := &m.buckets[i]
		b.mu.Lock()
		var prev *Waiter
		for w := b.head; w != nil; w = w.next {
			if w.prev != prev {
				t.Errorf("bucket %d: broken prev link", i)
			}
			if w.bucket.Load() != b {
				t.Errorf("bucket %d: waiter points at another bucket", i)
			}
			if m.bucketFor(w.key) != b {
				t.Errorf("bucket %d: waiter with key %v in the wrong bucket", i, w.key)
			}
			prev = w
			n++
		}
		if b.tail != prev {
			t.Errorf("bucket %d: tail is not the last waiter", i)
		}
		b.mu.Unlock()
	}
	return n
}
