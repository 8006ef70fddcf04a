package mm

import "golang.org/x/sys/unix"

// Segment is one range of application memory, as an iovec names it.
type Segment struct {
	Addr uintptr
	Len  uint64
}

// vmCopyChunk bounds the Sentry buffer one step of CopyBetween uses.
const vmCopyChunk = 64 << 10

// segCursor walks segments as one stream of bytes.
type segCursor struct {
	segs []Segment
	off  uint64 // into segs[0]
}

// next returns the current position and how many bytes the current
// segment has left, skipping empty segments; ok is false at the end.
func (c *segCursor) next() (uintptr, uint64, bool) {
	for len(c.segs) > 0 && c.off == c.segs[0].Len {
		c.segs, c.off = c.segs[1:], 0
	}
	if len(c.segs) == 0 {
		return 0, 0, false
	}
	return c.segs[0].Addr + uintptr(c.off), c.segs[0].Len - c.off, true
}

func (c *segCursor) advance(n uint64) { c.off += n }

// CopyBetween copies the bytes of src's segments in srcMM to dst's
// segments in dstMM, in order, until either list ends, as
// process_vm_readv and process_vm_writev do. It stops at the first byte
// it cannot read in srcMM or write in dstMM (with each mapping's own
// protection: no forced access): the count copied, or EFAULT when
// nothing was. srcMM and dstMM may be the same address space.
func CopyBetween(dstMM *MemoryManager, dst []Segment, srcMM *MemoryManager, src []Segment) (int64, error) {
	var total uint64
	for _, s := range src {
		total += s.Len
	}
	size := uint64(vmCopyChunk)
	if total < size {
		size = total
	}
	buf := make([]byte, size)
	sc, dc := segCursor{segs: src}, segCursor{segs: dst}
	var done int64
	for {
		sa, sn, ok := sc.next()
		if !ok {
			break
		}
		da, dn, ok := dc.next()
		if !ok {
			break
		}
		n := min(sn, dn, size)
		r, rerr := srcMM.CopyIn(sa, buf[:n])
		w, werr := dstMM.CopyOut(da, buf[:r])
		done += int64(w)
		if rerr != nil || werr != nil || w < r {
			if done == 0 {
				return 0, unix.EFAULT
			}
			return done, nil
		}
		sc.advance(uint64(w))
		dc.advance(uint64(w))
	}
	return done, nil
}
