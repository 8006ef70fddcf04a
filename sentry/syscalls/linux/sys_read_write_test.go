package linux

import (
	"math"
	"testing"
)

func TestRangeOverflows(t *testing.T) {
	tests := []struct {
		name  string
		off   int64
		count uint64
		want  bool
	}{
		{"zero", 0, 0, false},
		{"small", 100, 4096, false},
		{"ends at the largest offset", math.MaxInt64 - 8, 8, false},
		{"one past", math.MaxInt64 - 8, 9, true},
		{"empty at the largest offset", math.MaxInt64, 0, false},
		{"one byte at the largest offset", math.MaxInt64, 1, true},
		{"count larger than any offset", 0, math.MaxUint64, true},
		{"count of MaxInt64 from 0", 0, math.MaxInt64, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := rangeOverflows(tc.off, tc.count); got != tc.want {
				t.Fatalf("rangeOverflows(%d, %d) = %v, want %v", tc.off, tc.count, got, tc.want)
			}
		})
	}
}
