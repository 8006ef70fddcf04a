package ptrace

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestSystrapDisassembly checks the hand-assembled worker code and handler
// against objdump when it is available.
func TestSystrapDisassembly(t *testing.T) {
	code, labels, err := buildStub(5, 6)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("objdump"); err != nil {
		t.Skip("objdump not installed")
	}
	f := t.TempDir() + "/stub.bin"
	if err := os.WriteFile(f, code[stubNewWorkerOff:labels["trap_action"]], 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("objdump", "-D", "-b", "binary", "-m", "i386:x86-64", "-M", "intel", f).CombinedOutput()
	if err != nil {
		t.Fatalf("objdump: %v\n%s", err, out)
	}
	dis := string(out)
	for _, want := range []string{
		"cmp    rax,rbx",
		"mov    rdi,r12",
		"mov    rsi,r13",
		"mov    r10,r14",
		"mov    r15d,0x1",
		"lea    rdi,[rbx+0x40]",
		"and    rbx,0xffffffffffff0000",
		"mov    DWORD PTR [rbx+0xc],edi",
		"mov    QWORD PTR [rbx+0x10],rsi",
		"mov    QWORD PTR [rbx+0x18],rdx",
		"xchg   DWORD PTR [rbx],eax",
		"cmp    DWORD PTR [rbx+0x4],0x0",
		"mov    r13d,DWORD PTR [rbx+0x34]",
		"cmp    edi,0x1f",
		"mov    eax,DWORD PTR [rsi+0x18]",
		"cmp    eax,0x200",
		"cmp    BYTE PTR [rbx+rax*1+0x800],0x0",
		"xor    r13d,r13d",
		"mov    ecx,r13d",
		"pause",
		"xchg   DWORD PTR [rbx+0x8],eax",
		"mov    r12d,DWORD PTR [rbx+0x20]",
		"mov    rsi,QWORD PTR [rbx+0x28]",
		"mov    rsi,QWORD PTR [rbx+0x38]",
		"mov    DWORD PTR [rbx+0x30],eax",
		"int3",
	} {
		if !strings.Contains(dis, want) {
			t.Errorf("disassembly lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(dis)
	}
}
