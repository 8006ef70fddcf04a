package mm

import "testing"

func TestPageRefs(t *testing.T) {
	var r pageRefs
	last := uint64(memFileSize/pageSize - 1)
	steps := []struct {
		name string
		page uint64
		set  int32
	}{
		{"first page", 0, 1},
		{"same chunk", 5, 3},
		{"next chunk", refChunkPages, 2},
		{"last page", last, 7},
		{"drop one", 5, 0},
		{"drop first", 0, 0},
	}
	want := map[uint64]int32{}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			r.set(s.page, s.set)
			want[s.page] = s.set
			for p, v := range want {
				if got := r.get(p); got != v {
					t.Fatalf("page %d: %d, want %d", p, got, v)
				}
			}
		})
	}
	if r.chunks[0] != nil {
		t.Error("chunk 0 kept with no page referenced")
	}
	if r.chunks[1] == nil || r.chunks[len(r.chunks)-1] == nil {
		t.Error("a chunk with referenced pages is gone")
	}
	r.set(123, 0) // a page never referenced, in a chunk never made
	if r.chunks[0] != nil {
		t.Error("setting zero made a chunk")
	}
}
