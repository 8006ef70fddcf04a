package ptrace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/bpf"
	"github.com/moat-sandbox/moat/sentry/platform"
)

func newSystrapPlatform(t testing.TB, code []byte) (*Platform, int) {
	t.Helper()
	return newPlatformWith(t, NewSystrap, code)
}

func newSystrapAS(t testing.TB, p *Platform) platform.AddressSpace {
	t.Helper()
	as, err := p.NewAddressSpace()
	if err != nil {
		t.Fatal(err)
	}
	if err := as.MapFile(0x100000, 0, 0x1000, platform.Read|platform.Exec); err != nil {
		t.Fatal(err)
	}
	return as
}

func TestSystrapSwitchSyscallsAndFaults(t *testing.T) {
	p, fd := newSystrapPlatform(t, testCode)
	as := newSystrapAS(t, p)
	defer as.Release()
	runTestThread(t, p, as, true)
	var b [1]byte
	unix.Pread(fd, b[:], 0x1000)
	if b[0] != 1 {
		t.Fatalf("store through the stub did not reach the memory file")
	}
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runTestThread(t, p, as, false)
		}()
	}
	wg.Wait()
	// Regions of released contexts are reused.
	if n := p.sys.next; n > 7 {
		t.Errorf("%d regions made for at most 5 contexts and 2 spare workers at once", n)
	}
}

// TestSystrapRegisters checks that every general register the Sentry sets
// reaches the application and comes back, and that rip and rcx/r11 are
// what the syscall instruction leaves.
func TestSystrapRegisters(t *testing.T) {
	// syscall; syscall
	p, _ := newSystrapPlatform(t, []byte{0x0f, 0x05, 0x0f, 0x05})
	as := newSystrapAS(t, p)
	defer as.Release()
	c := p.NewContext()
	defer c.Release()
	regs := InitialRegisters()
	regs.Rip = 0x100000
	regs.Rax = 39
	regs.Rbx, regs.Rdx, regs.Rsi, regs.Rdi, regs.Rbp, regs.Rsp = 2, 3, 4, 5, 6, 7
	regs.R8, regs.R9, regs.R10, regs.R12, regs.R13, regs.R14, regs.R15 = 8, 9, 10, 12, 13, 14, 15
	want := regs
	r, _, err := c.Switch(as, &regs)
	if err != nil || r != platform.SwitchSyscall {
		t.Fatalf("got %v %v, want a syscall", r, err)
	}
	want.Rip = 0x100002
	want.Rcx = 0x100002
	want.Orig_rax = 39
	want.Rax = ^uint64(unix.ENOSYS) + 1
	want.R11 = regs.R11
	want.Eflags = regs.Eflags
	if regs != want {
		t.Errorf("registers at the syscall:\n got %+v\nwant %+v", regs, want)
	}
	if regs.R11&0x200 == 0 {
		t.Errorf("r11 %#x is not the flags the syscall instruction saved", regs.R11)
	}
	regs.Rax = 60
	r, _, err = c.Switch(as, &regs)
	if err != nil || r != platform.SwitchSyscall || regs.Orig_rax != 60 || regs.Rip != 0x100004 {
		t.Fatalf("second syscall: %v %v %+v", r, err, regs)
	}
}

func TestSystrapFSBase(t *testing.T) {
	// mov rax, fs:[0]; mov rdi, gs:[8]; syscall: the Sentry's fs and gs
	// bases must be the app's.
	code := []byte{0x64, 0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0, 0x65, 0x48, 0x8b, 0x3c, 0x25, 8, 0, 0, 0, 0x0f, 0x05}
	p, fd := newSystrapPlatform(t, code)
	unix.Pwrite(fd, []byte{0x11, 0x22, 0x33, 0x44, 0, 0, 0, 0}, 0x1000+0x80)
	as := newSystrapAS(t, p)
	defer as.Release()
	as.MapFile(0x200000, 0x1000, 0x1000, platform.Read)
	c := p.NewContext()
	defer c.Release()
	regs := InitialRegisters()
	regs.Rip = 0x100000
	regs.Fs_base = 0x200080
	regs.Gs_base = 0x200078
	r, _, err := c.Switch(as, &regs)
	if err != nil || r != platform.SwitchSyscall || regs.Orig_rax != 0x44332211 || regs.Rdi != 0x44332211 {
		t.Fatalf("got %v %v, syscall %#x, rdi %#x, want 0x44332211 for both", r, err, regs.Orig_rax, regs.Rdi)
	}
}

func TestSystrapInterrupt(t *testing.T) {
	p, _ := newSystrapPlatform(t, []byte{0xeb, 0xfe}) // jmp $
	as := newSystrapAS(t, p)
	defer as.Release()
	c := p.NewContext()
	defer c.Release()
	regs := InitialRegisters()
	regs.Rip = 0x100000
	for i := 0; i < 20; i++ {
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				c.Interrupt()
				select {
				case <-done:
					return
				default:
				}
			}
		}()
		r, _, err := c.Switch(as, &regs)
		if err != nil || r != platform.SwitchInterrupted {
			t.Fatalf("got %v %v, want interrupted", r, err)
		}
		done <- struct{}{}
		<-done
		c.ClearInterrupt()
	}
}

func TestSystrapFPState(t *testing.T) {
	code := []byte{
		0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8, // mov rax, 0x0807060504030201
		0x66, 0x48, 0x0f, 0x6e, 0xc8, // movq xmm1, rax
		0x0f, 0x05, // syscall
		0x66, 0x48, 0x0f, 0x7e, 0xc7, // movq rdi, xmm0
		0x0f, 0x05, // syscall
	}
	p, _ := newSystrapPlatform(t, code)
	as := newSystrapAS(t, p)
	defer as.Release()
	c := p.NewContext()
	defer c.Release()
	regs := InitialRegisters()
	regs.Rip = 0x100000
	if _, _, err := c.Switch(as, &regs); err != nil {
		t.Fatal(err)
	}
	fp, err := c.FPState(as)
	if err != nil {
		t.Fatal(err)
	}
	if got := binary.LittleEndian.Uint64(fp[160+16:]); got != 0x0807060504030201 {
		t.Fatalf("xmm1 in the FP state is %#x", got)
	}
	binary.LittleEndian.PutUint64(fp[160:], 0xdeadbeefcafe)
	fp[512] |= 2 // XSTATE_BV: SSE in use
	if err := c.SetFPState(as, fp); err != nil {
		t.Fatal(err)
	}
	r, _, err := c.Switch(as, &regs)
	if err != nil || r != platform.SwitchSyscall {
		t.Fatalf("got %v %v", r, err)
	}
	if regs.Rdi != 0xdeadbeefcafe {
		t.Fatalf("xmm0 after SetFPState is %#x", regs.Rdi)
	}
}

// TestSystrapFilter runs the worker's filter in the BPF interpreter.
func TestSystrapFilter(t *testing.T) {
	_, labels, err := buildStub(5, 6)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := bpf.Compile(systrapFilter(labels))
	if err != nil {
		t.Fatal(err)
	}
	site := func(name string) uint64 { return stubAddr + uint64(labels[name]) }
	const arch = unix.AUDIT_ARCH_X86_64
	for _, tc := range []struct {
		name string
		d    bpf.Data
		want uint32
	}{
		{"app getpid", bpf.Data{Nr: 39, Arch: arch, InstructionPointer: 0x400000}, seccompRetTrap},
		{"app futex", bpf.Data{Nr: unix.SYS_FUTEX, Arch: arch, InstructionPointer: 0x7ffe_ffff_0000}, seccompRetTrap},
		{"app high ip", bpf.Data{Nr: 39, Arch: arch, InstructionPointer: 0x7fff_0000_1000}, seccompRetTrap},
		{"vsyscall", bpf.Data{Nr: 96, Arch: arch, InstructionPointer: 0xffff_ffff_ff60_0000}, seccompRetTrap},
		{"app open", bpf.Data{Nr: unix.SYS_OPENAT, Arch: arch, InstructionPointer: 0x401000}, seccompRetTrap},
		{"handler futex wake", bpf.Data{Nr: unix.SYS_FUTEX, Arch: arch, InstructionPointer: site("trap_futex_wake"), Args: [6]uint64{0, futexWake}}, seccompRetAllow},
		{"handler futex wait", bpf.Data{Nr: unix.SYS_FUTEX, Arch: arch, InstructionPointer: site("trap_futex_wait"), Args: [6]uint64{0, futexWait}}, seccompRetAllow},
		{"stub futex requeue", bpf.Data{Nr: unix.SYS_FUTEX, Arch: arch, InstructionPointer: site("trap_futex_wait"), Args: [6]uint64{0, 3}}, seccompRetKillProcess},
		{"handler arch_prctl", bpf.Data{Nr: unix.SYS_ARCH_PRCTL, Arch: arch, InstructionPointer: site("trap_arch_prctl"), Args: [6]uint64{archSetFS}}, seccompRetAllow},
		{"handler arch_prctl gs", bpf.Data{Nr: unix.SYS_ARCH_PRCTL, Arch: arch, InstructionPointer: site("trap_arch_prctl_gs"), Args: [6]uint64{archSetGS}}, seccompRetAllow},
		{"stub arch_prctl gs at fs site", bpf.Data{Nr: unix.SYS_ARCH_PRCTL, Arch: arch, InstructionPointer: site("trap_arch_prctl"), Args: [6]uint64{archSetGS}}, seccompRetKillProcess},
		{"stub arch_prctl map vdso", bpf.Data{Nr: unix.SYS_ARCH_PRCTL, Arch: arch, InstructionPointer: site("trap_arch_prctl"), Args: [6]uint64{0x2001}}, seccompRetKillProcess},
		{"handler exit", bpf.Data{Nr: unix.SYS_EXIT, Arch: arch, InstructionPointer: site("trap_exit")}, seccompRetAllow},
		{"handler sigreturn", bpf.Data{Nr: unix.SYS_RT_SIGRETURN, Arch: arch, InstructionPointer: site("trap_sigreturn")}, seccompRetAllow},
		{"stub open at futex site", bpf.Data{Nr: unix.SYS_OPENAT, Arch: arch, InstructionPointer: site("trap_futex_wake")}, seccompRetKillProcess},
		{"stub mmap at sigreturn site", bpf.Data{Nr: unix.SYS_MMAP, Arch: arch, InstructionPointer: site("trap_sigreturn")}, seccompRetKillProcess},
		{"stub futex elsewhere", bpf.Data{Nr: unix.SYS_FUTEX, Arch: arch, InstructionPointer: stubAddr + 2}, seccompRetKillProcess},
		{"stub open in ptrace part", bpf.Data{Nr: unix.SYS_OPENAT, Arch: arch, InstructionPointer: stubAddr + 2}, seccompRetKillProcess},
		{"stub page end", bpf.Data{Nr: 39, Arch: arch, InstructionPointer: stubAddr + stubSize - 1}, seccompRetKillProcess},
		{"after stub page", bpf.Data{Nr: 39, Arch: arch, InstructionPointer: stubAddr + stubSize}, seccompRetTrap},
		{"i386 app", bpf.Data{Nr: 20, Arch: unix.AUDIT_ARCH_I386, InstructionPointer: 0x400000}, seccompRetTrap},
		{"i386 at a stub site", bpf.Data{Nr: unix.SYS_RT_SIGRETURN, Arch: unix.AUDIT_ARCH_I386, InstructionPointer: site("trap_sigreturn")}, seccompRetKillProcess},
		{"i386 in the stub", bpf.Data{Nr: 20, Arch: unix.AUDIT_ARCH_I386, InstructionPointer: stubAddr + 0x10}, seccompRetKillProcess},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.d
			if got := prog.Run(&d); got != tc.want {
				t.Errorf("filter returned %#x, want %#x", got, tc.want)
			}
		})
	}
}

// TestSystrapHostile checks that application code that jumps into the stub
// to make a system call of its own is killed before the call happens.
func TestSystrapHostile(t *testing.T) {
	_, labels, err := buildStub(5, 6)
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []struct {
		name string
		ip   uint64 // the syscall instruction jumped to
	}{
		{"handler futex site", stubAddr + uint64(labels["trap_futex_wake"]) - 2},
		{"sigreturn site", stubAddr + uint64(labels["trap_sigreturn"]) - 2},
		{"ptrace injection site", stubAddr + stubSyscallOff},
	} {
		t.Run(target.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "pwned")
			// openat(AT_FDCWD, path, O_CREAT|O_WRONLY, 0644) from the stub.
			var code []byte
			code = append(code, 0xb8, 0x01, 0x01, 0, 0)                   // mov eax, 257
			code = append(code, 0x48, 0xc7, 0xc7, 0x9c, 0xff, 0xff, 0xff) // mov rdi, -100
			code = append(code, 0x48, 0xbe)                               // mov rsi, 0x100800
			code = binary.LittleEndian.AppendUint64(code, 0x100800)
			code = append(code, 0xba, 0x41, 0, 0, 0)          // mov edx, O_CREAT|O_WRONLY
			code = append(code, 0x41, 0xba, 0xa4, 0x01, 0, 0) // mov r10d, 0644
			code = append(code, 0x48, 0xb9)                   // mov rcx, target
			code = binary.LittleEndian.AppendUint64(code, target.ip)
			code = append(code, 0xff, 0xe1) // jmp rcx
			page := make([]byte, 0x1000)
			copy(page, code)
			copy(page[0x800:], path+"\x00")
			p, _ := newSystrapPlatform(t, page)
			as := newSystrapAS(t, p)
			defer as.Release()
			c := p.NewContext()
			defer c.Release()
			regs := InitialRegisters()
			regs.Rip = 0x100000
			_, _, err := c.Switch(as, &regs)
			if !errors.Is(err, platform.ErrContextDead) {
				t.Errorf("Switch returned %v, want the context dead", err)
			}
			if _, err := os.Stat(path); err == nil {
				t.Errorf("the application created %s through the stub", path)
			}
		})
	}
}

func BenchmarkSystrapSyscall(b *testing.B) {
	// loop: mov eax, 39; syscall; jmp loop
	p, _ := newSystrapPlatform(b, []byte{0xb8, 39, 0, 0, 0, 0x0f, 0x05, 0xeb, 0xf7})
	as := newSystrapAS(b, p)
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

// BenchmarkSystrapModes compares the adaptive handoff with always
// spinning and never spinning.
func BenchmarkSystrapModes(b *testing.B) {
	for _, mode := range []string{"", "spin", "sleep"} {
		name := mode
		if name == "" {
			name = "adaptive"
		}
		b.Run(name, func(b *testing.B) {
			old := spinFixed
			spinFixed = mode
			defer func() { spinFixed = old }()
			BenchmarkSystrapSyscall(b)
		})
	}
}

// TestSystrapBlockedInterrupt checks that an application that blocks the
// interrupt signal with a forged rt_sigreturn cannot make itself immune
// to interrupts: its stub process is killed.
func TestSystrapBlockedInterrupt(t *testing.T) {
	for _, blocked := range []bool{false, true} {
		t.Run(fmt.Sprintf("blocked=%v", blocked), func(t *testing.T) { testForgedSigreturn(t, blocked) })
	}
}

func testForgedSigreturn(t *testing.T, blocked bool) {
	old := unanswered
	unanswered = 300 * time.Millisecond
	defer func() { unanswered = old }()
	_, labels, err := buildStub(5, 6)
	if err != nil {
		t.Fatal(err)
	}
	var code []byte
	code = append(code, 0x48, 0xbc) // mov rsp, 0x200000
	code = binary.LittleEndian.AppendUint64(code, 0x200000)
	code = append(code, 0x48, 0xb9) // mov rcx, trap_restorer
	code = binary.LittleEndian.AppendUint64(code, stubAddr+uint64(labels["trap_restorer"]))
	code = append(code, 0xff, 0xe1) // jmp rcx
	loop := 0x100000 + uint64(len(code))
	code = append(code, 0xeb, 0xfe) // jmp $
	page := make([]byte, 0x2000)
	copy(page, code)
	p, fd := newSystrapPlatform(t, page)
	as := newSystrapAS(t, p)
	defer as.Release()
	if err := as.MapFile(0x200000, 0x1000, 0x1000, platform.Read|platform.Write); err != nil {
		t.Fatal(err)
	}
	c := p.NewContext()
	defer c.Release()
	if _, err := c.FPState(as); err != nil { // makes the worker
		t.Fatal(err)
	}
	frame := make([]byte, 0x1000)
	le := binary.LittleEndian
	// uc_stack: the worker's own alternate stack.
	le.PutUint64(frame[16:], uint64(regionAddr(c.(*trapContext).w.region)+altstackOff))
	le.PutUint64(frame[32:], regionSize-altstackOff)
	le.PutUint64(frame[160:], 0x200800) // rsp
	le.PutUint64(frame[168:], loop)     // rip
	le.PutUint64(frame[176:], 0x202)    // eflags
	le.PutUint16(frame[184:], 0x33)     // cs
	le.PutUint16(frame[190:], 0x2b)     // ss
	if blocked {
		le.PutUint64(frame[296:], 1<<(uint(interruptSignal)-1))
	}
	if _, err := unix.Pwrite(fd, frame, 0x1000); err != nil {
		t.Fatal(err)
	}
	regs := InitialRegisters()
	regs.Rip = 0x100000
	var r platform.SwitchResult
	var start time.Time
	for i := 0; ; i++ {
		go func() {
			time.Sleep(100 * time.Millisecond)
			c.Interrupt()
		}()
		start = time.Now()
		r, _, err = c.Switch(as, &regs)
		// On a loaded machine the interrupt may come before the forged
		// rt_sigreturn has run: the thread stops on its way to the loop,
		// and runs on from there.
		if err != nil || r != platform.SwitchInterrupted || regs.Rip == loop || i == 20 {
			break
		}
	}
	if !blocked {
		if err != nil || r != platform.SwitchInterrupted || regs.Rip != loop {
			t.Fatalf("got %v %v at rip %#x, want interrupted at %#x", r, err, regs.Rip, loop)
		}
		return
	}
	if !errors.Is(err, platform.ErrContextDead) {
		t.Fatalf("Switch returned %v, want the context dead", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("the worker was killed after %v", el)
	}
}

// TestSystrapReleaseWhileRunning kills the stub process under a running
// worker: Switch must report the context dead rather than wait forever.
func TestSystrapReleaseWhileRunning(t *testing.T) {
	p, _ := newSystrapPlatform(t, []byte{0xeb, 0xfe}) // jmp $
	as := newSystrapAS(t, p)
	c := p.NewContext()
	regs := InitialRegisters()
	regs.Rip = 0x100000
	// A first switch creates the worker; a parked one is in its handler.
	other := p.NewContext()
	if _, err := other.FPState(as); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		as.Release()
	}()
	start := time.Now()
	_, _, err := c.Switch(as, &regs)
	if !errors.Is(err, platform.ErrContextDead) {
		t.Fatalf("Switch returned %v, want the context dead", err)
	}
	c.Release()
	other.Release()
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("took %v", el)
	}
}

// benchmarkFaults measures a first-touch fault fixed with MapFile.
func benchmarkFaults(b *testing.B, newPlat func(int) (*Platform, error)) {
	fd, _ := unix.MemfdCreate("bench", 0)
	unix.Ftruncate(fd, 1<<30)
	// loop: mov byte [rdi], 1; add rdi, 4096; jmp loop
	unix.Pwrite(fd, []byte{0xc6, 0x07, 0x01, 0x48, 0x81, 0xc7, 0x00, 0x10, 0x00, 0x00, 0xeb, 0xf5}, 0)
	p, err := newPlat(fd)
	if err != nil {
		b.Fatal(err)
	}
	as, _ := p.NewAddressSpace()
	as.MapFile(0x100000, 0, 0x1000, platform.Read|platform.Exec)
	c := p.NewContext()
	regs := InitialRegisters()
	regs.Rip = 0x100000
	regs.Rdi = 0x10000000
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, info, err := c.Switch(as, &regs)
		if err != nil || r != platform.SwitchFault {
			b.Fatal(r, err)
		}
		page := uintptr(info.Addr) &^ 0xfff
		if err := as.MapFile(page, uint64(0x1000+i%1000*0x1000), 0x1000, platform.Read|platform.Write); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	c.Release()
	as.Release()
}

func BenchmarkFault(b *testing.B)        { benchmarkFaults(b, New) }
func BenchmarkSystrapFault(b *testing.B) { benchmarkFaults(b, NewSystrap) }

// TestSystrapInt80 checks that a 32-bit system call (int 0x80) reaches the
// Sentry as a system call, as under ptrace, rather than killing the stub;
// on a host without 32-bit emulation it is a fault, as natively.
func TestSystrapInt80(t *testing.T) {
	p, _ := newSystrapPlatform(t, []byte{0xb8, 20, 0, 0, 0, 0xcd, 0x80}) // mov eax, 20; int 0x80
	as := newSystrapAS(t, p)
	defer as.Release()
	c := p.NewContext()
	defer c.Release()
	regs := InitialRegisters()
	regs.Rip = 0x100000
	r, info, err := c.Switch(as, &regs)
	switch {
	case err != nil:
		t.Fatal(err)
	case r == platform.SwitchSyscall && regs.Orig_rax == 20 && regs.Rip == 0x100007:
	case r == platform.SwitchFault && info.Signo == int32(unix.SIGSEGV) && regs.Rip == 0x100005:
	default:
		t.Fatalf("got %v %+v, syscall %d at %#x", r, info, int64(regs.Orig_rax), regs.Rip)
	}
}

// benchmarkNewThread measures a new context's life in a live address
// space: its first system call, a fault and its release (pthread_create's
// share of the platform).
func benchmarkNewThread(b *testing.B, newPlat func(int) (*Platform, error)) {
	fd, _ := unix.MemfdCreate("bench", 0)
	unix.Ftruncate(fd, 1<<20)
	// mov byte [0x200000], 1; mov eax, 39; syscall
	unix.Pwrite(fd, []byte{0xc6, 0x04, 0x25, 0x00, 0x00, 0x20, 0x00, 0x01, 0xb8, 39, 0, 0, 0, 0x0f, 0x05}, 0)
	p, err := newPlat(fd)
	if err != nil {
		b.Fatal(err)
	}
	as, _ := p.NewAddressSpace()
	as.MapFile(0x100000, 0, 0x1000, platform.Read|platform.Exec)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c := p.NewContext()
		regs := InitialRegisters()
		regs.Rip = 0x100000
		r, _, err := c.Switch(as, &regs)
		if err != nil || r != platform.SwitchFault {
			b.Fatal(r, err)
		}
		as.MapFile(0x200000, 0x1000, 0x1000, platform.Read|platform.Write)
		if r, _, err := c.Switch(as, &regs); err != nil || r != platform.SwitchSyscall {
			b.Fatal(r, err)
		}
		as.Unmap(0x200000, 0x1000)
		c.Release()
	}
	b.StopTimer()
	as.Release()
}

func BenchmarkNewThread(b *testing.B)        { benchmarkNewThread(b, New) }
func BenchmarkSystrapNewThread(b *testing.B) { benchmarkNewThread(b, NewSystrap) }

// A region made ready for a new worker is zero throughout, its alternate
// stack too: it may have held another process's signal frames (FP and
// vector registers).
func TestSystrapRegionCleared(t *testing.T) {
	p, _ := newSystrapPlatform(t, nil)
	s := p.sys
	r, err := s.alloc()
	if err != nil {
		t.Fatal(err)
	}
	slot := s.slot(r)
	for i := range slot {
		slot[i] = 0xa5
	}
	s.resetRegion(r)
	for i := altstackOff; i < len(slot); i++ {
		if slot[i] != 0 {
			t.Fatalf("byte %#x of the alternate stack kept %#x after resetRegion", i, slot[i])
		}
	}
	s.free(r)
}
