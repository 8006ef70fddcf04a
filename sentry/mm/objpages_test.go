package mm

import (
	"math/rand"
	"testing"
)

// objPages against a map model, through random sets and deletes over a
// few chunks, and its edges.
func TestObjPages(t *testing.T) {
	t.Run("model", func(t *testing.T) {
		var p objPages
		model := map[uint64]uint64{}
		r := rand.New(rand.NewSource(1))
		for i := 0; i < 20000; i++ {
			idx := uint64(r.Intn(4 * objChunkPages))
			if r.Intn(3) == 0 {
				off, ok := p.del(idx)
				want, wok := model[idx]
				if ok != wok || off != want {
					t.Fatalf("del(%d) = %d %v, want %d %v", idx, off, ok, want, wok)
				}
				delete(model, idx)
				continue
			}
			off := uint64(r.Intn(1<<20)) * pageSize // offset 0 included
			p.set(idx, off)
			model[idx] = off
		}
		if p.len() != len(model) {
			t.Fatalf("len %d, want %d", p.len(), len(model))
		}
		seen := 0
		p.each(func(idx, off uint64) {
			seen++
			if model[idx] != off {
				t.Fatalf("each gives %d at %d, want %d", off, idx, model[idx])
			}
		})
		if seen != len(model) {
			t.Fatalf("each saw %d pages, want %d", seen, len(model))
		}
		for idx, off := range model {
			if got, ok := p.get(idx); !ok || got != off {
				t.Fatalf("get(%d) = %d %v, want %d", idx, got, ok, off)
			}
		}
	})
	t.Run("edges", func(t *testing.T) {
		var p objPages
		huge := ^uint64(0) / pageSize
		p.set(huge, 0)
		if off, ok := p.get(huge); !ok || off != 0 {
			t.Fatalf("the last index at offset 0: %d %v", off, ok)
		}
		if p.has(huge - 1) {
			t.Fatal("a neighbour is present")
		}
		p.each(func(idx, _ uint64) { p.del(idx) })
		if p.len() != 0 || len(p.chunks) != 0 {
			t.Fatalf("after deleting all in each: len %d, %d chunks", p.len(), len(p.chunks))
		}
		if p.has(huge) {
			t.Fatal("deleted page still there (stale last chunk)")
		}
	})
}
