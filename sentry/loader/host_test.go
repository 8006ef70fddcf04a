package loader

import (
	"bufio"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/sentry/arch"
)

const hostInterp = "/lib64/ld-linux-x86-64.so.2"

// openHost opens a host file for a test, skipping when it is missing.
func openHost(t *testing.T, path string) ([]byte, File) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("host file: %v", err)
	}
	return b, newBytesFile(b)
}

// hostLoads returns the PT_LOAD headers of a host file, read with
// debug/elf as an independent parser.
func hostLoads(t *testing.T, path string) (*elf.File, []progHeader) {
	t.Helper()
	ef, err := elf.Open(path)
	if err != nil {
		t.Fatalf("debug/elf: %v", err)
	}
	t.Cleanup(func() { ef.Close() })
	var loads []progHeader
	for _, p := range ef.Progs {
		if p.Type == elf.PT_LOAD {
			loads = append(loads, progHeader{Type: p.Type, Flags: p.Flags, Off: p.Off, Vaddr: p.Vaddr, Filesz: p.Filesz, Memsz: p.Memsz, Align: p.Align})
		}
	}
	return ef, loads
}

// checkImage checks every PT_LOAD of path placed with bias.
func checkImage(t *testing.T, m *fakeMem, path string, bias uint64) *elf.File {
	t.Helper()
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ef, loads := hostLoads(t, path)
	for _, ph := range loads {
		checkSegment(t, m, file, ph, ph.Vaddr+bias)
	}
	return ef
}

func TestLoadHostPIE(t *testing.T) {
	_, f := openHost(t, "/bin/ls")
	op := &mapOpener{host: true}
	defer op.Close()
	m := newFakeMem()
	args := testArgs(f)
	args.Filename = "/bin/ls"
	args.Argv = []string{"ls", "-la", "/"}
	res, err := Load(m, op, args)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if res.Interpreter != hostInterp || res.ExeFilename != "/bin/ls" {
		t.Errorf("interpreter %q exe %q", res.Interpreter, res.ExeFilename)
	}
	ef := checkImage(t, m, "/bin/ls", arch.PIELoadBase)
	if res.Base != arch.PIELoadBase {
		t.Errorf("base %#x, want %#x", res.Base, arch.PIELoadBase)
	}
	ibias := uint64(res.InterpBase)
	ief := checkImage(t, m, hostInterp, ibias)
	if res.Entry != uintptr(ief.Entry+ibias) {
		t.Errorf("entry %#x, want interpreter entry %#x", res.Entry, ief.Entry+ibias)
	}
	ps := checkStack(t, m, res, args, args.Argv)
	aux := auxMap(ps.auxv)
	var phdr uint64
	for _, p := range ef.Progs {
		if p.Type == elf.PT_PHDR {
			phdr = p.Vaddr
		}
	}
	if aux[AT_PHDR] != phdr+arch.PIELoadBase || aux[AT_PHNUM] != uint64(len(ef.Progs)) ||
		aux[AT_ENTRY] != ef.Entry+arch.PIELoadBase || aux[AT_BASE] != ibias {
		t.Errorf("auxv %v", ps.auxv)
	}
	// The program headers are really at AT_PHDR.
	raw, err := m.read(uintptr(aux[AT_PHDR]), phdrSize)
	if err != nil || elf.ProgType(raw[0]) != ef.Progs[0].Type {
		t.Errorf("program headers at AT_PHDR: %x %v", raw, err)
	}
	_, loads := hostLoads(t, "/bin/ls")
	last := loads[len(loads)-1]
	if want := uintptr(pageUp(last.Vaddr+last.Memsz) + arch.PIELoadBase); m.brk != want {
		t.Errorf("brk %#x, want %#x", m.brk, want)
	}
	// The interpreter is one contiguous range, starting at AT_BASE.
	_, iloads := hostLoads(t, hostInterp)
	ilast := iloads[len(iloads)-1]
	for p := ibias; p < ibias+pageUp(ilast.Vaddr+ilast.Memsz); p += pageSize {
		if _, ok := m.find(uintptr(p)); !ok {
			t.Errorf("interpreter page %#x not mapped", p)
		}
	}
}

func TestLoadHostInterpDirectly(t *testing.T) {
	_, f := openHost(t, hostInterp)
	m := newFakeMem()
	args := testArgs(f)
	args.Filename = hostInterp
	res, err := Load(m, &mapOpener{}, args)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	ef := checkImage(t, m, hostInterp, arch.PIELoadBase)
	if res.Entry != uintptr(ef.Entry+arch.PIELoadBase) || res.Interpreter != "" || res.InterpBase != 0 {
		t.Errorf("result %+v", res)
	}
	ps := checkStack(t, m, res, args, args.Argv)
	aux := auxMap(ps.auxv)
	if aux[AT_BASE] != 0 || aux[AT_ENTRY] != uint64(res.Entry) || aux[AT_PHDR] != arch.PIELoadBase+0x40 {
		// ld.so has no PT_PHDR: its headers, at file offset 0x40,
		// are in its first PT_LOAD (offset 0, address 0).
		t.Errorf("auxv %v", ps.auxv)
	}
}

// buildC compiles src with gcc and flags into dir, skipping the test when
// gcc (or a static libc) is missing.
func buildC(t *testing.T, src string, flags ...string) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc")
	}
	dir := t.TempDir()
	c := filepath.Join(dir, "prog.c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "prog")
	cmd := exec.Command(gcc, append(append([]string{"-O1", "-o", out}, flags...), c)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("gcc %v: %v\n%s", flags, err, b)
	}
	return out
}

const helloC = `#include <stdio.h>
char big[100000];
int data = 42;
int main(int argc, char **argv) { big[argc * 1000] = 1; printf("hello %d %d\n", data, big[99999]); return 0; }
`

func TestLoadGCCStatic(t *testing.T) {
	for _, tc := range []struct {
		name string
		flag string
		typ  elf.Type
	}{
		{"static", "-static", elf.ET_EXEC},
		{"static-pie", "-static-pie", elf.ET_DYN},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := buildC(t, helloC, tc.flag)
			// It runs natively.
			if out, err := exec.Command(path).Output(); err != nil || string(out) != "hello 42 0\n" {
				t.Fatalf("native run: %q %v", out, err)
			}
			_, f := openHost(t, path)
			m := newFakeMem()
			args := testArgs(f)
			args.Filename = path
			res, err := Load(m, &mapOpener{}, args)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			var bias uint64
			if tc.typ == elf.ET_DYN {
				bias = arch.PIELoadBase
			}
			ef := checkImage(t, m, path, bias)
			if ef.Type != tc.typ {
				t.Fatalf("gcc made %v", ef.Type)
			}
			if res.Entry != uintptr(ef.Entry+bias) || res.Interpreter != "" || res.InterpBase != 0 {
				t.Errorf("result %+v", res)
			}
			ps := checkStack(t, m, res, args, args.Argv)
			aux := auxMap(ps.auxv)
			if aux[AT_ENTRY] != ef.Entry+bias || aux[AT_BASE] != 0 || aux[AT_PHNUM] != uint64(len(ef.Progs)) {
				t.Errorf("auxv %v", ps.auxv)
			}
			raw, err := m.read(uintptr(aux[AT_PHDR]), phdrSize)
			if err != nil || elf.ProgType(raw[0]) != ef.Progs[0].Type {
				t.Errorf("program headers at AT_PHDR %#x: %x %v", aux[AT_PHDR], raw, err)
			}
			// The 100000-byte bss is mapped and zero, and brk
			// starts after it.
			_, loads := hostLoads(t, path)
			var data progHeader
			for _, ph := range loads {
				if ph.Flags&elf.PF_W != 0 {
					data = ph
				}
			}
			if data.Memsz-data.Filesz < 100000 {
				t.Fatalf("data segment %+v has no big bss", data)
			}
			if want := uintptr(pageUp(data.Vaddr+data.Memsz) + bias); m.brk != want {
				t.Errorf("brk %#x, want %#x", m.brk, want)
			}
		})
	}
}

// dumpC prints what a program finds on its initial stack.
const dumpC = `#include <stdio.h>
#include <string.h>
#include <elf.h>
int main(int argc, char **argv, char **envp) {
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	while (fgets(line, sizeof line, f))
		if (strstr(line, "[stack]")) { unsigned long lo, hi; sscanf(line, "%lx-%lx", &lo, &hi); printf("top %lx\n", hi); }
	printf("sp %lx\n", (unsigned long)(argv - 1));
	for (int i = 0; i < argc; i++) printf("arg %lx\n", (unsigned long)argv[i]);
	char **e = envp;
	for (; *e; e++) printf("env %lx\n", (unsigned long)*e);
	for (Elf64_auxv_t *a = (Elf64_auxv_t *)(e + 1); ; a++) {
		printf("aux %lu %lx\n", (unsigned long)a->a_type, (unsigned long)a->a_un.a_val);
		if (a->a_type == AT_NULL) break;
	}
	return 0;
}
`

// TestStackMatchesLinux runs a program natively with address
// randomisation off, loads the same program with the same arguments at the
// same stack top, and compares the two initial stacks.
func TestStackMatchesLinux(t *testing.T) {
	setarch, err := exec.LookPath("setarch")
	if err != nil {
		t.Skip("no setarch")
	}
	path := buildC(t, dumpC)
	argv := []string{path, "x", "yy", ""}
	envv := []string{"A=1", "BB=22", "EMPTY="}
	cmd := exec.Command(setarch, append([]string{"-R", path}, argv[1:]...)...)
	cmd.Env = envv
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("setarch -R: %v", err)
	}
	var top, sp uint64
	var args, envs []uint64
	var aux []AuxEntry
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		var v []uint64
		for i, s := range fs[1:] {
			base := 16
			if fs[0] == "aux" && i == 0 {
				base = 10
			}
			n, err := strconv.ParseUint(s, base, 64)
			if err != nil {
				t.Fatalf("parse %q: %v", sc.Text(), err)
			}
			v = append(v, n)
		}
		switch fs[0] {
		case "top":
			top = v[0]
		case "sp":
			sp = v[0]
		case "arg":
			args = append(args, v[0])
		case "env":
			envs = append(envs, v[0])
		case "aux":
			aux = append(aux, AuxEntry{v[0], v[1]})
		}
	}
	native := auxMap(aux)
	if top == 0 || len(args) != len(argv) || native[AT_RANDOM] == 0 {
		t.Fatalf("native output:\n%s", out)
	}

	_, f := openHost(t, path)
	op := &mapOpener{host: true}
	defer op.Close()
	m := newFakeMem()
	m.top = uintptr(top)
	la := Args{
		Filename: path, File: f, Argv: argv, Envv: envv,
		VDSOBase: uintptr(native[AT_SYSINFO_EHDR]), MinSigStackSize: native[AT_MINSIGSTKSZ],
		HWCap: native[AT_HWCAP], HWCap2: native[AT_HWCAP2], ClockTicks: native[AT_CLKTCK],
		UID: uint32(native[AT_UID]), EUID: uint32(native[AT_EUID]), GID: uint32(native[AT_GID]), EGID: uint32(native[AT_EGID]),
		Secure: native[AT_SECURE] != 0,
	}
	res, err := Load(m, op, la)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	ps := checkStack(t, m, res, la, argv)
	for i := range args {
		if ps.argvPtrs[i] != args[i] {
			t.Errorf("argv[%d] at %#x, Linux %#x", i, ps.argvPtrs[i], args[i])
		}
	}
	for i := range envs {
		if ps.envvPtrs[i] != envs[i] {
			t.Errorf("envp[%d] at %#x, Linux %#x", i, ps.envvPtrs[i], envs[i])
		}
	}
	// Linux may add entries this loader does not (AT_RSEQ_*, newer
	// keys); everything else must match in order and, except where the
	// interpreter was put, in value.
	ours := auxMap(ps.auxv)
	var nativeKeys, ourKeys []uint64
	for _, a := range aux {
		if _, ok := ours[a.Key]; ok {
			nativeKeys = append(nativeKeys, a.Key)
		}
	}
	for _, a := range ps.auxv {
		ourKeys = append(ourKeys, a.Key)
	}
	if !slices.Equal(nativeKeys, ourKeys) {
		t.Errorf("auxv keys %v, Linux %v", ourKeys, nativeKeys)
	}
	for k, v := range native {
		if k == AT_BASE {
			continue
		}
		if ov, ok := ours[k]; ok && ov != v {
			t.Errorf("auxv[%d] = %#x, Linux %#x", k, ov, v)
		}
	}
	// sp follows the same rule: below the random bytes, room for the
	// vectors, rounded down to 16.
	items := uint64(len(argv)+1+len(envv)+1+1) * 8
	if want := (native[AT_RANDOM] - items - uint64(16*len(aux))) &^ 15; sp != want {
		t.Errorf("Linux sp %#x, rule gives %#x", sp, want)
	}
	if want := (ours[AT_RANDOM] - items - uint64(16*len(ps.auxv))) &^ 15; uint64(res.Stack) != want {
		t.Errorf("sp %#x, rule gives %#x", res.Stack, want)
	}
	t.Logf("Linux sp %#x, ours %#x (%d vs %d auxv entries)", sp, res.Stack, len(aux), len(ps.auxv))
}
