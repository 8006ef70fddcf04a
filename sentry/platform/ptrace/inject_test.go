package ptrace

import (
	"testing"

	"github.com/moat-sandbox/moat/sentry/platform"
)

// TestInjectAtSyscallStop maps memory through the context's own thread while
// it is stopped at a system call, then resumes the application.
func TestInjectAtSyscallStop(t *testing.T) {
	p, _ := newTestPlatform(t)
	as, err := p.NewAddressSpace()
	if err != nil {
		t.Fatal(err)
	}
	defer as.Release()
	as.MapFile(0x100000, 0, 0x1000, platform.Read|platform.Exec)
	c := p.NewContext()
	defer c.Release()
	regs := InitialRegisters()
	regs.Rip = 0x100000
	regs.Rsp = 0x300000
	if r, _, err := c.Switch(as, &regs); err != nil || r != platform.SwitchSyscall || regs.Orig_rax != 39 {
		t.Fatalf("first switch: %v %v %d", r, err, regs.Orig_rax)
	}
	if err := as.MapFile(0x200000, 0x1000, 0x1000, platform.Read|platform.Write); err != nil {
		t.Fatal(err)
	}
	// munmap returns 0, which must not be mistaken for a clone child.
	if err := as.Unmap(0x200000, 0x1000); err != nil {
		t.Fatal(err)
	}
	if r, _, err := c.Switch(as, &regs); err != nil || r != platform.SwitchSyscall || regs.Orig_rax != 60 {
		t.Fatalf("second switch: %v %v %d rip %#x", r, err, regs.Orig_rax, regs.Rip)
	}
}
