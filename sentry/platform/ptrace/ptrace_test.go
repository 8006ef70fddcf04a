package ptrace

import (
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/platform"
)

// testCode is: mov eax, 39; syscall; mov eax, 60; syscall; mov byte [0x200000], 1; ud2
var testCode = []byte{
	0xb8, 39, 0, 0, 0, 0x0f, 0x05,
	0xb8, 60, 0, 0, 0, 0x0f, 0x05,
	0xc6, 0x04, 0x25, 0x00, 0x00, 0x20, 0x00, 0x01,
	0x0f, 0x0b,
}

func newTestPlatform(t *testing.T) (*Platform, int) {
	t.Helper()
	return newPlatformWith(t, New, testCode)
}

// newPlatformWith makes a platform with newPlat over a fresh 1 MiB memory
// file whose first bytes are code.
func newPlatformWith(t testing.TB, newPlat func(int) (*Platform, error), code []byte) (*Platform, int) {
	t.Helper()
	fd, err := unix.MemfdCreate("test-memfile", unix.MFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Ftruncate(fd, 1<<20); err != nil {
		t.Fatal(err)
	}
	if _, err := unix.Pwrite(fd, code, 0); err != nil {
		t.Fatal(err)
	}
	p, err := newPlat(fd)
	if err != nil {
		t.Fatal(err)
	}
	return p, fd
}

func runTestThread(t *testing.T, p *Platform, as platform.AddressSpace, first bool) {
	c := p.NewContext()
	defer c.Release()
	regs := InitialRegisters()
	regs.Rip = 0x100000
	regs.Rsp = 0x300000
	for i, want := range []uint64{39, 60} {
		r, _, err := c.Switch(as, &regs)
		if err != nil {
			t.Fatalf("switch %d: %v", i, err)
		}
		if r != platform.SwitchSyscall || regs.Orig_rax != want {
			t.Fatalf("switch %d: result %v, syscall %d, want syscall %d", i, r, regs.Orig_rax, want)
		}
		regs.Rax = 1234
	}
	if first {
		r, info, err := c.Switch(as, &regs)
		if err != nil || r != platform.SwitchFault || info.Signo != int32(unix.SIGSEGV) || info.Addr != 0x200000 {
			t.Fatalf("want SIGSEGV at 0x200000, got %v %+v %v", r, info, err)
		}
		if err := as.MapFile(0x200000, 0x1000, 0x1000, platform.Read|platform.Write); err != nil {
			t.Fatal(err)
		}
	}
	r, info, err := c.Switch(as, &regs)
	if err != nil || r != platform.SwitchFault || info.Signo != int32(unix.SIGILL) {
		t.Fatalf("want SIGILL, got %v %+v %v", r, info, err)
	}
}

func TestSwitchSyscallsAndFaults(t *testing.T) {
	p, fd := newTestPlatform(t)
	as, err := p.NewAddressSpace()
	if err != nil {
		t.Fatal(err)
	}
	defer as.Release()
	if err := as.MapFile(0x100000, 0, 0x1000, platform.Read|platform.Exec); err != nil {
		t.Fatal(err)
	}
	runTestThread(t, p, as, true)
	var b [1]byte
	unix.Pread(fd, b[:], 0x1000)
	if b[0] != 1 {
		t.Fatalf("store through the stub did not reach the memory file")
	}
	// Several threads in one address space at once.
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runTestThread(t, p, as, false)
		}()
	}
	wg.Wait()
}

func TestInterrupt(t *testing.T) {
	p, fd := newTestPlatform(t)
	// jmp $ (a spin loop)
	unix.Pwrite(fd, []byte{0xeb, 0xfe}, 0x2000)
	as, err := p.NewAddressSpace()
	if err != nil {
		t.Fatal(err)
	}
	defer as.Release()
	as.MapFile(0x100000, 0x2000, 0x1000, platform.Read|platform.Exec)
	c := p.NewContext()
	regs := InitialRegisters()
	regs.Rip = 0x100000
	done := make(chan struct{})
	go func() {
		defer close(done)
		// The context's stub thread is traced by this goroutine's OS
		// thread, so it is released here too.
		defer c.Release()
		r, _, err := c.Switch(as, &regs)
		if err != nil || r != platform.SwitchInterrupted {
			t.Errorf("got %v %v, want interrupted", r, err)
		}
	}()
	for {
		c.Interrupt()
		select {
		case <-done:
			return
		default:
		}
	}
}

func BenchmarkSyscall(b *testing.B) {
	fd, _ := unix.MemfdCreate("bench", 0)
	unix.Ftruncate(fd, 1<<20)
	// loop: mov eax, 39; syscall; jmp loop
	unix.Pwrite(fd, []byte{0xb8, 39, 0, 0, 0, 0x0f, 0x05, 0xeb, 0xf7}, 0)
	p, err := New(fd)
	if err != nil {
		b.Fatal(err)
	}
	as, _ := p.NewAddressSpace()
	as.MapFile(0x100000, 0, 0x1000, platform.Read|platform.Exec)
	c := p.NewContext()
	regs := InitialRegisters()
	regs.Rip = 0x100000
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := c.Switch(as, &regs); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	c.Release()
	as.Release()
}
