package ptrace

import (
	"testing"
	"time"

	"github.com/moat-sandbox/moat/sentry/arch"
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
	c, regs := runToGetpid(t, p, as, "first switch")
	defer c.Release()
	if err := as.MapFile(0x200000, 0x1000, 0x1000, platform.Read|platform.Write); err != nil {
		t.Fatal(err)
	}
	// munmap returns 0, which must not be mistaken for a clone child.
	if err := as.Unmap(0x200000, 0x1000); err != nil {
		t.Fatal(err)
	}
	if r, _, err := c.Switch(as, regs); err != nil || r != platform.SwitchSyscall || regs.Orig_rax != 60 {
		t.Fatalf("second switch: %v %v %d rip %#x", r, err, regs.Orig_rax, regs.Rip)
	}
}

// TestBatch maps memory in a batch, whose calls must go to the stub
// directly from the master tracer (a hand-off to its goroutine from within
// a batch would wait forever), then runs the code mapped.
func TestBatch(t *testing.T) {
	t.Run("ptrace", func(t *testing.T) { testBatch(t, New) })
	t.Run("systrap", func(t *testing.T) { testBatch(t, NewSystrap) })
}

func testBatch(t *testing.T, newPlat func(int) (*Platform, error)) {
	p, _ := newPlatformWith(t, newPlat, testCode)
	pas, err := p.NewAddressSpace()
	if err != nil {
		t.Fatal(err)
	}
	as := pas.(*addressSpace)
	done := make(chan struct{})
	go func() {
		defer close(done)
		as.Batch(func() {
			if as.current() != as.masterThr {
				t.Error("the batch does not run on the master tracer's thread")
			}
			for _, err := range []error{
				as.MapFile(0x100000, 0, 0x1000, platform.Read|platform.Exec),
				as.MapFile(0x200000, 0x1000, 0x1000, platform.Read|platform.Write),
				as.Unmap(0x200000, 0x1000),
			} {
				if err != nil {
					t.Error(err)
				}
			}
		})
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		// Not released: that would wait for the master tracer too.
		t.Fatal("the batch's calls wait for the master tracer that runs them")
	}
	defer pas.Release()
	c, _ := runToGetpid(t, p, as, "switch to the code mapped in the batch")
	c.Release()
}

// runToGetpid switches a new context of p into as at 0x100000, where the
// test code makes getpid first, and checks that it stops there. The
// caller releases the context.
func runToGetpid(t *testing.T, p *Platform, as platform.AddressSpace, what string) (platform.Context, *arch.Registers) {
	t.Helper()
	c := p.NewContext()
	regs := InitialRegisters()
	regs.Rip = 0x100000
	regs.Rsp = 0x300000
	if r, _, err := c.Switch(as, &regs); err != nil || r != platform.SwitchSyscall || regs.Orig_rax != 39 {
		t.Fatalf("%s: %v %v %d", what, r, err, regs.Orig_rax)
	}
	return c, &regs
}
