package harness

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/moat-sandbox/moat/tools/modbuild"
)

// Containerd2 returns containerd 2.x's binaries, built from its module
// into CacheDir the first time (a few minutes); t is marked unavailable
// when the module cannot be fetched.
func Containerd2(t testing.TB) modbuild.Containerd2Bins {
	t.Helper()
	cache, err := CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	bins, err := modbuild.Containerd2(ctx, cache)
	if errors.Is(err, modbuild.ErrFetch) {
		Unavailable(t, "containerd %s cannot be built here: %v", modbuild.Containerd2Version, err)
	}
	if err != nil {
		t.Fatalf("building containerd %s: %v", modbuild.Containerd2Version, err)
	}
	return bins
}
