package strace

import (
	"testing"

	"golang.org/x/sys/unix"
)

func BenchmarkExitOpenat(b *testing.B) {
	m := newMem()
	args := a(0xffffff9c, m.cstr("/etc/ld.so.cache"), unix.O_RDONLY|unix.O_CLOEXEC)
	b.ReportAllocs()
	for b.Loop() {
		Exit(m, unix.SYS_OPENAT, args, 3)
	}
}

func BenchmarkExitRead(b *testing.B) {
	m := newMem()
	args := a(3, m.put([]byte("root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1")), 832)
	b.ReportAllocs()
	for b.Loop() {
		Exit(m, unix.SYS_READ, args, 45)
	}
}

func TestAllocations(t *testing.T) {
	m := newMem()
	args := a(0xffffff9c, m.cstr("/etc/ld.so.cache"), unix.O_RDONLY|unix.O_CLOEXEC)
	Exit(m, unix.SYS_OPENAT, args, 3)
	// The fake memory itself allocates nothing; the line is the one
	// allocation.
	if n := testing.AllocsPerRun(100, func() { Exit(m, unix.SYS_OPENAT, args, 3) }); n > 1 {
		t.Errorf("Exit of openat makes %v allocations, want at most 1", n)
	}
}
