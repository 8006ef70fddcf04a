package main

import (
	"math"
	"testing"
)

func TestSummarize(t *testing.T) {
	s := summarize([]float64{5, 1, 4, 2, 3, 9, 8, 7, 6, 10})
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	near("median", s.median, 5.5)
	near("mean", s.mean, 5.5)
	// Sample standard deviation of 1..10 is sqrt(55/6).
	near("ci95", s.ci95, 1.96*math.Sqrt(55.0/6)/math.Sqrt(10))
	near("p10", s.p10, 2)
	near("p90", s.p90, 10)
	odd := summarize([]float64{3, 1, 2})
	near("odd median", odd.median, 2)
}
