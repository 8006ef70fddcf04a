package ptrace

import (
	"testing"
	"time"
)

// TestSpareAfterSecondAddressSpace checks when spares are made: one
// while the platform starts (init's), none when that one is taken, and
// one again once a second address space has been asked for.
func TestSpareAfterSecondAddressSpace(t *testing.T) {
	p, _ := newTestPlatform(t)
	waitSpare := func(d time.Duration) bool {
		for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if len(p.spare) > 0 {
				return true
			}
		}
		return false
	}
	if !waitSpare(10 * time.Second) {
		t.Fatal("no spare address space made at the start")
	}
	first, err := p.NewAddressSpace()
	if err != nil {
		t.Fatal(err)
	}
	defer first.Release()
	if waitSpare(200 * time.Millisecond) {
		t.Fatal("a spare was made when init's was taken")
	}
	second, err := p.NewAddressSpace()
	if err != nil {
		t.Fatal(err)
	}
	defer second.Release()
	if !waitSpare(10 * time.Second) {
		t.Fatal("no spare made after a second address space")
	}
	third, err := p.NewAddressSpace()
	if err != nil {
		t.Fatal(err)
	}
	defer third.Release()
	if !waitSpare(10 * time.Second) {
		t.Fatal("the spare taken by a third address space was not replaced")
	}
}
