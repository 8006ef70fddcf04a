package future

import (
	"errors"
	"testing"
)

// TestStart checks that the results come back, the same on every call,
// and that f runs while the caller goes on.
func TestStart(t *testing.T) {
	release := make(chan struct{})
	errBoom := errors.New("boom")
	get := Start(func() (int, error) {
		<-release // would deadlock if Start ran f itself
		return 42, errBoom
	})
	close(release)
	for range 2 {
		if v, err := get(); v != 42 || err != errBoom {
			t.Fatalf("get() = %d, %v; want 42, %v", v, err, errBoom)
		}
	}
}
