package ptrace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/platform"
)

// hostMapCode, at 0x400000, is: mov rdi, [0x400100]; mov eax, 39; syscall;
// mov byte [0x400100], 1; ud2. Its data word sits at offset 0x100.
func hostMapFile(t *testing.T) (*os.File, []byte) {
	t.Helper()
	code := []byte{
		0x48, 0x8b, 0x3c, 0x25, 0x00, 0x01, 0x40, 0x00,
		0xb8, 39, 0, 0, 0, 0x0f, 0x05,
		0xc6, 0x04, 0x25, 0x00, 0x01, 0x40, 0x00, 0x01,
		0x0f, 0x0b,
	}
	page := make([]byte, 0x2000)
	copy(page, code)
	binary.LittleEndian.PutUint64(page[0x100:], 0x1122334455667788)
	// The second page is data only, to map at another address.
	binary.LittleEndian.PutUint64(page[0x1000:], 0x0102030405060708)
	p := filepath.Join(t.TempDir(), "hostmap")
	if err := os.WriteFile(p, page, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, page
}

// stubFDs lists the descriptors the stub process holds.
func stubFDs(t *testing.T, pid int32) []string {
	t.Helper()
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestMapHostFD(t *testing.T) {
	p, _ := newTestPlatform(t)
	f, page := hostMapFile(t)
	pas, err := p.NewAddressSpace()
	if err != nil {
		t.Fatal(err)
	}
	defer pas.Release()
	as := pas.(*addressSpace)
	before := stubFDs(t, as.pid)
	fd := int(f.Fd())

	// No goroutine has a thread in the stub yet: the master maps it.
	if err := as.MapHostFD(0x400000, 0x1000, unix.PROT_READ|unix.PROT_EXEC, fd, 0); err != nil {
		if errors.Is(err, unix.EPERM) {
			t.Skipf("the test's temporary directory is noexec: %v", err)
		}
		t.Fatal(err)
	}
	if err := as.MapHostFD(0x500000, 0x1000, unix.PROT_READ|unix.PROT_WRITE, fd, 0); err != unix.EINVAL {
		t.Fatalf("a writable host mapping: got %v, want EINVAL", err)
	}

	c := p.NewContext()
	defer c.Release()
	regs := InitialRegisters()
	regs.Rip = 0x400000
	regs.Rsp = 0x300000
	r, _, err := c.Switch(as, &regs)
	if err != nil || r != platform.SwitchSyscall || regs.Orig_rax != 39 {
		t.Fatalf("first switch: %v %v, syscall %d; want getpid", r, err, regs.Orig_rax)
	}
	if regs.Rdi != 0x1122334455667788 {
		t.Fatalf("the stub read %#x from the host file, want 0x1122334455667788", regs.Rdi)
	}
	r, info, err := c.Switch(as, &regs)
	if err != nil || r != platform.SwitchFault || info.Signo != int32(unix.SIGSEGV) || info.Addr != 0x400100 || info.Code != 2 {
		t.Fatalf("a store to the host mapping: got %v %+v %v, want SIGSEGV SEGV_ACCERR at 0x400100", r, info, err)
	}

	// This goroutine's OS thread now traces a stub thread: the mapping
	// goes through it. Map the file's second page over the first.
	if err := as.MapHostFD(0x400000, 0x1000, unix.PROT_READ, fd, 0x1000); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	memf, err := os.Open(fmt.Sprintf("/proc/%d/mem", as.pid))
	if err != nil {
		t.Fatal(err)
	}
	defer memf.Close()
	if _, err := memf.ReadAt(buf, 0x400000); err != nil {
		t.Fatal(err)
	}
	if got := binary.LittleEndian.Uint64(buf); got != 0x0102030405060708 {
		t.Fatalf("after remapping: %#x, want the file's second page", got)
	}

	// The host file is untouched and the stub kept no descriptor.
	got, err := os.ReadFile(f.Name())
	if err != nil || !bytes.Equal(got, page) {
		t.Fatalf("the host file changed (%v)", err)
	}
	if after := stubFDs(t, as.pid); len(after) != len(before) {
		t.Fatalf("stub descriptors: %v before, %v after", before, after)
	}
	// A descriptor the Sentry does not have fails without turning the
	// feature off.
	if err := as.MapHostFD(0x600000, 0x1000, unix.PROT_READ, 1<<20-1, 0); err == nil || errors.Is(err, ErrNoHostMap) {
		t.Fatalf("a bad descriptor: got %v", err)
	}
	if p.noHostMap.Load() {
		t.Fatal("a bad descriptor turned host mappings off")
	}
}

// sigBlk returns the SigBlk line of a stub thread's status.
func sigBlk(t *testing.T, pid, tid int32) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/status", pid, tid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "SigBlk:") {
			return strings.TrimSpace(strings.TrimPrefix(l, "SigBlk:"))
		}
	}
	t.Fatal("no SigBlk line")
	return ""
}

func TestSpareAddressSpaceParkedThread(t *testing.T) {
	p, _ := newTestPlatform(t)
	// New starts making the spare; wait for it.
	deadline := time.Now().Add(10 * time.Second)
	for len(p.spare) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	pas, err := p.NewAddressSpace()
	if err != nil {
		t.Fatal(err)
	}
	defer pas.Release()
	as := pas.(*addressSpace)
	tid := as.parked
	if tid == 0 {
		t.Fatal("the spare address space has no parked thread")
	}
	// Parked, it blocks every signal a process-wide signal could pick
	// it for (SIGKILL and SIGSTOP cannot be blocked).
	// (The clone returns in the master before the child has run its
	// rt_sigprocmask: give it the time.)
	got := sigBlk(t, as.pid, tid)
	for deadline := time.Now().Add(5 * time.Second); got != "fffffffffffbfeff" && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
		got = sigBlk(t, as.pid, tid)
	}
	if got != "fffffffffffbfeff" {
		t.Fatalf("parked thread SigBlk %s", got)
	}
	if err := as.MapFile(0x100000, 0, 0x1000, platform.Read|platform.Exec); err != nil {
		t.Fatal(err)
	}
	// The first context takes it, with signals unblocked.
	done := make(chan struct{})
	go func() {
		defer close(done)
		c := p.NewContext().(*context)
		defer c.Release()
		regs := InitialRegisters()
		regs.Rip = 0x100000
		regs.Rsp = 0x300000
		if r, _, err := c.Switch(as, &regs); err != nil || r != platform.SwitchSyscall {
			t.Errorf("switch: %v %v", r, err)
			return
		}
		if c.thr.tid != tid {
			t.Errorf("the context runs on thread %d, not the parked %d", c.thr.tid, tid)
		}
		if got := sigBlk(t, as.pid, tid); got != "0000000000000000" {
			t.Errorf("SigBlk %s once seized", got)
		}
	}()
	<-done
	// And the platform makes the next spare once a second address space
	// is asked for (see NewAddressSpace, TestSpareAfterSecondAddressSpace).
	second, err := p.NewAddressSpace()
	if err != nil {
		t.Fatal(err)
	}
	defer second.Release()
	for len(p.spare) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if len(p.spare) == 0 {
		t.Fatal("no new spare address space")
	}
}
