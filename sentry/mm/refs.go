package mm

// pageRefs counts references per page of the memory file: a two-level
// table of chunks of refChunkPages counters, a chunk allocated when a page
// in it is first referenced and dropped when its last page is freed. It
// replaces a map, whose hashing showed in profiles of every fault and
// large write (hundreds of pages each).
type pageRefs struct {
	chunks [memFileSize / pageSize / refChunkPages]*refChunk
}

const refChunkPages = 4096

type refChunk struct {
	n    [refChunkPages]int32
	used int // pages with a non-zero count
}

func (r *pageRefs) get(p uint64) int32 {
	c := r.chunks[p/refChunkPages]
	if c == nil {
		return 0
	}
	return c.n[p%refChunkPages]
}

func (r *pageRefs) set(p uint64, v int32) {
	i := p / refChunkPages
	c := r.chunks[i]
	if c == nil {
		if v == 0 {
			return
		}
		c = new(refChunk)
		r.chunks[i] = c
	}
	old := &c.n[p%refChunkPages]
	switch {
	case *old == 0 && v != 0:
		c.used++
	case *old != 0 && v == 0:
		c.used--
	}
	*old = v
	if c.used == 0 {
		r.chunks[i] = nil
	}
}
