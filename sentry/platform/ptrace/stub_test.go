package ptrace

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestStubDisassembly checks the hand-assembled stub against objdump when it
// is available.
func TestStubDisassembly(t *testing.T) {
	code, err := stubCode(5)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("objdump"); err != nil {
		t.Skip("objdump not installed")
	}
	f := t.TempDir() + "/stub.bin"
	if err := os.WriteFile(f, code[:stubDataOff], 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("objdump", "-D", "-b", "binary", "-m", "i386:x86-64", "-M", "intel", f).CombinedOutput()
	if err != nil {
		t.Fatalf("objdump: %v\n%s", err, out)
	}
	dis := string(out)
	for _, want := range []string{
		"0:\t0f 05", "2:\tcc", "je     0x8", "8:\tb8 22 00 00 00", "jmp    0x8",
		"18:\t0f 05", "lea    rsi,[rip+0x", "jne    0x46", "movabs rsi,0x7ffffffe0000",
	} {
		if !strings.Contains(dis, want) {
			t.Errorf("disassembly lacks %q:\n%s", want, dis)
		}
	}
}
