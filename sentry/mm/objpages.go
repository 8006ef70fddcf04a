package mm

// objPages maps an object's page indices to the memory-file offsets of
// its pages: chunks of objChunkPages entries, in a map keyed by chunk
// index, with the chunk used last remembered. Sequential work (a large
// write, a fault-around, a truncation) then costs an array access per
// page, not a map operation. Guarded by Object.mu.
type objPages struct {
	chunks  map[uint64]*objChunk
	n       int
	lastIdx uint64
	last    *objChunk
}

const objChunkPages = 512

type objChunk struct {
	// off holds offset+1 for each page held, 0 for a hole.
	off [objChunkPages]uint64
	n   int
}

func (p *objPages) chunk(ci uint64) *objChunk {
	if p.last != nil && p.lastIdx == ci {
		return p.last
	}
	c := p.chunks[ci]
	if c != nil {
		p.last, p.lastIdx = c, ci
	}
	return c
}

// get returns the offset of page idx and whether the object holds it.
func (p *objPages) get(idx uint64) (uint64, bool) {
	c := p.chunk(idx / objChunkPages)
	if c == nil {
		return 0, false
	}
	v := c.off[idx%objChunkPages]
	return v - 1, v != 0
}

// has reports whether the object holds page idx.
func (p *objPages) has(idx uint64) bool {
	_, ok := p.get(idx)
	return ok
}

// set records page idx at off.
func (p *objPages) set(idx, off uint64) {
	ci := idx / objChunkPages
	c := p.chunk(ci)
	if c == nil {
		if p.chunks == nil {
			p.chunks = make(map[uint64]*objChunk)
		}
		c = new(objChunk)
		p.chunks[ci] = c
		p.last, p.lastIdx = c, ci
	}
	e := &c.off[idx%objChunkPages]
	if *e == 0 {
		c.n++
		p.n++
	}
	*e = off + 1
}

// del forgets page idx, returning its offset if the object held it.
func (p *objPages) del(idx uint64) (uint64, bool) {
	ci := idx / objChunkPages
	c := p.chunk(ci)
	if c == nil {
		return 0, false
	}
	e := &c.off[idx%objChunkPages]
	if *e == 0 {
		return 0, false
	}
	off := *e - 1
	*e = 0
	c.n--
	p.n--
	if c.n == 0 {
		delete(p.chunks, ci)
		if p.last == c {
			p.last = nil
		}
	}
	return off, true
}

// len returns the number of pages held.
func (p *objPages) len() int { return p.n }

// each calls fn for every page held, in no particular order; fn may del
// the page it is given.
func (p *objPages) each(fn func(idx, off uint64)) {
	for ci, c := range p.chunks {
		for i := range c.off {
			if v := c.off[i]; v != 0 {
				fn(ci*objChunkPages+uint64(i), v-1)
			}
		}
	}
}

// reset forgets every page.
func (p *objPages) reset() { *p = objPages{} }
