package loader

import (
	"bytes"
	"debug/elf"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/sentry/arch"
	"golang.org/x/sys/unix"
)

func testArgs(f File) Args {
	a := Args{
		Filename:   "/bin/prog",
		File:       f,
		Argv:       []string{"prog", "-l", "two words"},
		Envv:       []string{"HOME=/root", "PATH=/bin"},
		VDSOBase:   0x7fff_f7fc_8000,
		UID:        1,
		EUID:       2,
		GID:        3,
		EGID:       4,
		HWCap:      0x178bfbff,
		HWCap2:     2,
		ClockTicks: 100,
	}
	for i := range a.Random {
		a.Random[i] = byte(0xa0 + i)
	}
	return a
}

// checkStack parses the stack at res.Stack and checks it against args and
// res.
func checkStack(t *testing.T, m *fakeMem, res Result, args Args, wantArgv []string) *parsedStack {
	t.Helper()
	if res.Stack%16 != 0 {
		t.Errorf("stack pointer %#x not 16-byte aligned", res.Stack)
	}
	ps, err := m.parseStack(res.Stack)
	if err != nil {
		t.Fatalf("parse stack: %v", err)
	}
	if ps.argc != uint64(len(wantArgv)) || !slices.Equal(ps.argv, wantArgv) {
		t.Errorf("argv = %d %q, want %q", ps.argc, ps.argv, wantArgv)
	}
	if !slices.Equal(ps.envv, args.Envv) {
		t.Errorf("envv = %q, want %q", ps.envv, args.Envv)
	}
	if !slices.Equal(ps.auxv, res.Auxv) {
		t.Errorf("auxv on stack = %v, Result.Auxv = %v", ps.auxv, res.Auxv)
	}
	// The strings are contiguous: argv, envp, execfn, zero word, top.
	if len(ps.argvPtrs) > 0 && uintptr(ps.argvPtrs[0]) != res.ArgvStart {
		t.Errorf("argv[0] at %#x, ArgvStart %#x", ps.argvPtrs[0], res.ArgvStart)
	}
	if res.ArgvEnd != res.EnvvStart {
		t.Errorf("ArgvEnd %#x != EnvvStart %#x", res.ArgvEnd, res.EnvvStart)
	}
	raw, err := m.read(res.ArgvStart, int(res.ArgvEnd-res.ArgvStart))
	if err != nil || string(raw) != strings.Join(wantArgv, "\x00")+"\x00" {
		t.Errorf("argv area = %q, %v", raw, err)
	}
	if len(args.Envv) > 0 {
		if uintptr(ps.envvPtrs[0]) != res.EnvvStart {
			t.Errorf("envp[0] at %#x, EnvvStart %#x", ps.envvPtrs[0], res.EnvvStart)
		}
		raw, err := m.read(res.EnvvStart, int(res.EnvvEnd-res.EnvvStart))
		if err != nil || string(raw) != strings.Join(args.Envv, "\x00")+"\x00" {
			t.Errorf("envp area = %q, %v", raw, err)
		}
	}
	aux := auxMap(ps.auxv)
	if got := uintptr(aux[AT_EXECFN]); got != res.EnvvEnd {
		t.Errorf("AT_EXECFN %#x, want right after the environment at %#x", got, res.EnvvEnd)
	}
	if s, _ := m.readString(uintptr(aux[AT_EXECFN])); s != args.Filename {
		t.Errorf("AT_EXECFN string %q, want %q", s, args.Filename)
	}
	if end := res.EnvvEnd + uintptr(len(args.Filename)) + 1; end != m.top-8 {
		t.Errorf("strings end at %#x, want top-8 = %#x", end, m.top-8)
	}
	if s, _ := m.readString(uintptr(aux[AT_PLATFORM])); s != "x86_64" {
		t.Errorf("AT_PLATFORM string %q", s)
	}
	if p := uintptr(aux[AT_PLATFORM]); p != (res.ArgvStart&^15)-7 {
		t.Errorf("AT_PLATFORM at %#x, want %#x", p, (res.ArgvStart&^15)-7)
	}
	if r := uintptr(aux[AT_RANDOM]); r != uintptr(aux[AT_PLATFORM])-16 {
		t.Errorf("AT_RANDOM at %#x, want 16 bytes below AT_PLATFORM %#x", r, aux[AT_PLATFORM])
	}
	rnd, _ := m.read(uintptr(aux[AT_RANDOM]), 16)
	if !bytes.Equal(rnd, args.Random[:]) {
		t.Errorf("AT_RANDOM bytes %x, want %x", rnd, args.Random)
	}
	// sp is the highest 16-aligned address leaving room for the frame.
	if want := (uintptr(aux[AT_RANDOM]) - (ps.end - res.Stack)) &^ 15; res.Stack != want {
		t.Errorf("sp %#x, want %#x", res.Stack, want)
	}
	// Keys in Linux's order.
	var keys []uint64
	for _, a := range ps.auxv {
		keys = append(keys, a.Key)
	}
	want := []uint64{AT_HWCAP, AT_PAGESZ, AT_CLKTCK, AT_PHDR, AT_PHENT, AT_PHNUM, AT_BASE, AT_FLAGS, AT_ENTRY, AT_UID, AT_EUID, AT_GID, AT_EGID, AT_SECURE, AT_RANDOM, AT_HWCAP2, AT_EXECFN, AT_PLATFORM, AT_NULL}
	if args.MinSigStackSize != 0 {
		want = append([]uint64{AT_MINSIGSTKSZ}, want...)
	}
	if args.VDSOBase != 0 {
		want = append([]uint64{AT_SYSINFO_EHDR}, want...)
	}
	if !slices.Equal(keys, want) {
		t.Errorf("auxv keys %v, want %v", keys, want)
	}
	for k, v := range map[uint64]uint64{
		AT_HWCAP: args.HWCap, AT_HWCAP2: args.HWCap2, AT_PAGESZ: 4096, AT_CLKTCK: args.ClockTicks,
		AT_PHENT: 56, AT_FLAGS: 0, AT_UID: uint64(args.UID), AT_EUID: uint64(args.EUID),
		AT_GID: uint64(args.GID), AT_EGID: uint64(args.EGID), AT_SECURE: boolWord(args.Secure),
	} {
		if aux[k] != v {
			t.Errorf("auxv[%d] = %#x, want %#x", k, aux[k], v)
		}
	}
	if args.VDSOBase != 0 && aux[AT_SYSINFO_EHDR] != uint64(args.VDSOBase) {
		t.Errorf("AT_SYSINFO_EHDR = %#x", aux[AT_SYSINFO_EHDR])
	}
	return ps
}

// checkSegment checks the mapping of one PT_LOAD segment placed at addr:
// protections, file contents and zeroed bss.
func checkSegment(t *testing.T, m *fakeMem, file []byte, ph progHeader, addr uint64) {
	t.Helper()
	start := pageDown(addr)
	end := pageUp(addr + ph.Memsz)
	for p := start; p < end; p += pageSize {
		v, ok := m.find(uintptr(p))
		if !ok {
			t.Errorf("segment at %#x: page %#x not mapped", addr, p)
			return
		}
		if v.prot != protOf(ph.Flags) {
			t.Errorf("segment at %#x: page %#x prot %s, want %s", addr, p, protString(v.prot), protString(protOf(ph.Flags)))
		}
	}
	got, err := m.read(uintptr(addr), int(ph.Filesz))
	if err != nil {
		t.Fatalf("read segment: %v", err)
	}
	want := make([]byte, ph.Filesz)
	if ph.Off < uint64(len(file)) {
		copy(want, file[ph.Off:])
	}
	if !bytes.Equal(got, want) {
		t.Errorf("segment at %#x: contents differ from file", addr)
	}
	if ph.Memsz > ph.Filesz && ph.Flags&elf.PF_W != 0 {
		bss, err := m.read(uintptr(addr+ph.Filesz), int(end-(addr+ph.Filesz)))
		if err != nil {
			t.Fatalf("read bss: %v", err)
		}
		if i := slices.IndexFunc(bss, func(b byte) bool { return b != 0 }); i >= 0 {
			t.Errorf("segment at %#x: bss byte at %#x is %#x, want 0", addr, addr+ph.Filesz+uint64(i), bss[i])
		}
	}
}

func TestLoadStaticExec(t *testing.T) {
	e := newTestELF()
	file := e.bytes()
	m := newFakeMem()
	args := testArgs(newBytesFile(file))
	args.MinSigStackSize = 3376
	res, err := Load(m, &mapOpener{}, args)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if res.Entry != 0x401000 || res.Interpreter != "" || res.ExeFilename != "/bin/prog" || res.InterpBase != 0 {
		t.Errorf("result %+v", res)
	}
	for _, ph := range e.phdrs[:2] {
		checkSegment(t, m, file, ph, ph.Vaddr)
	}
	// The data segment's file page holds file bytes below p_filesz and
	// zeros after; its last page of bss is anonymous.
	if !m.brkSet || m.brk != 0x407000 || res.BrkStart != 0x407000 {
		t.Errorf("brk start %#x (set %v), want 0x407000", m.brk, m.brkSet)
	}
	if v, _ := m.find(0x405000); v.file != nil {
		t.Errorf("bss page 0x405000 is file backed")
	}
	if _, ok := m.find(0x402000); ok {
		t.Errorf("gap page 0x402000 mapped")
	}
	ps := checkStack(t, m, res, args, args.Argv)
	aux := auxMap(ps.auxv)
	if aux[AT_PHDR] != 0x400040 || aux[AT_PHNUM] != 3 || aux[AT_ENTRY] != 0x401000 || aux[AT_BASE] != 0 {
		t.Errorf("auxv %v", ps.auxv)
	}
	if aux[AT_MINSIGSTKSZ] != 3376 {
		t.Errorf("AT_MINSIGSTKSZ = %d", aux[AT_MINSIGSTKSZ])
	}
	if res.ExecStack {
		t.Errorf("ExecStack set for a RW PT_GNU_STACK")
	}
}

func TestLoadWithInterp(t *testing.T) {
	for _, typ := range []elf.Type{elf.ET_EXEC, elf.ET_DYN} {
		t.Run(typ.String(), func(t *testing.T) {
			e := newTestELF().withInterp("/lib/ld.so")
			e.typ = typ
			e.phdrs = append(e.phdrs, progHeader{Type: elf.PT_PHDR, Flags: elf.PF_R, Off: 0x40, Vaddr: 0x400040, Filesz: 0x100, Memsz: 0x100})
			e.phdrs[len(e.phdrs)-2].Flags |= elf.PF_X // executable PT_GNU_STACK
			file := e.bytes()
			ie := newTestInterp()
			ifile := ie.bytes()
			m := newFakeMem()
			op := &mapOpener{files: map[string]File{"/lib/ld.so": newBytesFile(ifile)}}
			args := testArgs(newBytesFile(file))
			args.VDSOBase = 0
			res, err := Load(m, op, args)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			var bias uint64
			if typ == elf.ET_DYN {
				bias = uint64(arch.PIELoadBase) - 0x400000
			}
			if res.Base != uintptr(0x400000+bias) {
				t.Errorf("base %#x", res.Base)
			}
			for _, ph := range e.phdrs {
				if ph.Type == elf.PT_LOAD {
					checkSegment(t, m, file, ph, ph.Vaddr+bias)
				}
			}
			ibase := uint64(res.InterpBase)
			if ibase == 0 || ibase%pageSize != 0 {
				t.Fatalf("interp base %#x", ibase)
			}
			for _, ph := range ie.phdrs {
				checkSegment(t, m, ifile, ph, ph.Vaddr+ibase)
			}
			// The gap between the interpreter's segments stays reserved.
			for p := ibase + 0x2000; p < ibase+0x5000; p += pageSize {
				if v, ok := m.find(uintptr(p)); !ok || v.prot != unix.PROT_NONE || v.file != nil {
					t.Errorf("interp gap page %#x: %+v %v", p, v, ok)
				}
			}
			if res.Entry != uintptr(ibase+0x1080) || res.Interpreter != "/lib/ld.so" || !res.ExecStack {
				t.Errorf("result %+v", res)
			}
			if !slices.Equal(op.opened, []string{"/lib/ld.so"}) {
				t.Errorf("opened %q", op.opened)
			}
			ps := checkStack(t, m, res, args, args.Argv)
			aux := auxMap(ps.auxv)
			if aux[AT_BASE] != ibase || aux[AT_ENTRY] != 0x401000+bias || aux[AT_PHDR] != 0x400040+bias || aux[AT_PHNUM] != uint64(len(e.phdrs)) {
				t.Errorf("auxv %v", ps.auxv)
			}
			if m.brk != uintptr(0x407000+bias) {
				t.Errorf("brk %#x", m.brk)
			}
		})
	}
}

// TestBSS checks the zeroing of the partial page after p_filesz and the
// anonymous pages after it, for several shapes.
func TestBSS(t *testing.T) {
	for _, tc := range []struct {
		name string
		ph   progHeader
	}{
		{"partial page", progHeader{Type: elf.PT_LOAD, Flags: elf.PF_R | elf.PF_W, Off: 0x2100, Vaddr: 0x403100, Filesz: 0x200, Memsz: 0x400}},
		{"several pages", progHeader{Type: elf.PT_LOAD, Flags: elf.PF_R | elf.PF_W, Off: 0x2100, Vaddr: 0x403100, Filesz: 0x200, Memsz: 0x5000}},
		{"file ends on a page", progHeader{Type: elf.PT_LOAD, Flags: elf.PF_R | elf.PF_W, Off: 0x2000, Vaddr: 0x403000, Filesz: 0x1000, Memsz: 0x2800}},
		{"bss only", progHeader{Type: elf.PT_LOAD, Flags: elf.PF_R | elf.PF_W, Off: 0x2100, Vaddr: 0x403100, Filesz: 0, Memsz: 0x2000}},
		{"no bss", progHeader{Type: elf.PT_LOAD, Flags: elf.PF_R, Off: 0x2100, Vaddr: 0x403100, Filesz: 0x200, Memsz: 0x200}},
		{"read-only bss", progHeader{Type: elf.PT_LOAD, Flags: elf.PF_R, Off: 0x2100, Vaddr: 0x403100, Filesz: 0x200, Memsz: 0x3000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestELF()
			e.phdrs[1] = tc.ph
			file := e.bytes()
			m := newFakeMem()
			if _, err := Load(m, &mapOpener{}, testArgs(newBytesFile(file))); err != nil {
				t.Fatalf("Load: %v", err)
			}
			checkSegment(t, m, file, tc.ph, tc.ph.Vaddr)
			end := tc.ph.Vaddr + tc.ph.Memsz
			if _, ok := m.find(uintptr(pageUp(end))); ok {
				t.Errorf("page after the segment mapped")
			}
			if tc.ph.Flags&elf.PF_W == 0 && tc.ph.Memsz > tc.ph.Filesz {
				// Like Linux, the tail of the last file page of a
				// read-only segment keeps the file's bytes; the
				// pages after it are zero.
				tail, _ := m.read(uintptr(tc.ph.Vaddr+tc.ph.Filesz), 16)
				if !bytes.Equal(tail, file[tc.ph.Off+tc.ph.Filesz:][:16]) {
					t.Errorf("read-only tail %x", tail)
				}
				z, _ := m.read(uintptr(pageUp(tc.ph.Vaddr+tc.ph.Filesz)), int(pageUp(end)-pageUp(tc.ph.Vaddr+tc.ph.Filesz)))
				if slices.ContainsFunc(z, func(b byte) bool { return b != 0 }) {
					t.Errorf("read-only bss pages not zero")
				}
			}
		})
	}
}

func errnoOf(err error) unix.Errno {
	var e unix.Errno
	if errors.As(err, &e) {
		return e
	}
	return 0
}

func TestLoadErrors(t *testing.T) {
	seg := func(e *testELF, i int, f func(*progHeader)) *testELF { f(&e.phdrs[i]); return e }
	for _, tc := range []struct {
		name   string
		elf    *testELF
		raw    []byte // instead of elf
		interp *testELF
		want   unix.Errno
	}{
		{name: "empty file", raw: []byte{}, want: unix.ENOEXEC},
		{name: "text", raw: []byte("hello world\n"), want: unix.ENOEXEC},
		{name: "magic only", raw: []byte("\x7fELF"), want: unix.ENOEXEC},
		{name: "class32", elf: func() *testELF { e := newTestELF(); e.class = elf.ELFCLASS32; return e }(), want: unix.ENOEXEC},
		{name: "aarch64", elf: func() *testELF { e := newTestELF(); e.machine = elf.EM_AARCH64; return e }(), want: unix.ENOEXEC},
		{name: "relocatable", elf: func() *testELF { e := newTestELF(); e.typ = elf.ET_REL; return e }(), want: unix.ENOEXEC},
		{name: "core", elf: func() *testELF { e := newTestELF(); e.typ = elf.ET_CORE; return e }(), want: unix.ENOEXEC},
		{name: "phentsize", elf: func() *testELF { e := newTestELF(); e.phentsize = 32; return e }(), want: unix.ENOEXEC},
		{name: "no phdrs", elf: func() *testELF { e := newTestELF(); e.phnum = 0; return e }(), want: unix.ENOEXEC},
		{name: "74 phdrs", elf: func() *testELF { e := newTestELF(); e.phnum = 74; e.size = 0x10000; return e }(), want: unix.ENOEXEC},
		{name: "65535 phdrs", elf: func() *testELF { e := newTestELF(); e.phnum = 65535; return e }(), want: unix.ENOEXEC},
		{name: "phdrs past EOF", elf: func() *testELF { e := newTestELF(); e.phoff = 0x2f00; e.phnum = 10; return e }(), want: unix.ENOEXEC},
		{name: "phoff huge", elf: func() *testELF { e := newTestELF(); e.phoff = 1 << 63; e.phdrs = nil; e.phnum = 2; return e }(), want: unix.ENOEXEC},
		{name: "no PT_LOAD", elf: func() *testELF { e := newTestELF(); e.phdrs = e.phdrs[2:]; return e }(), want: unix.EINVAL},
		{name: "filesz > memsz", elf: seg(newTestELF(), 1, func(p *progHeader) { p.Filesz = 0x4000 }), want: unix.EINVAL},
		{name: "incongruent", elf: seg(newTestELF(), 1, func(p *progHeader) { p.Off = 0x2180 }), want: unix.EINVAL},
		{name: "overlap", elf: seg(newTestELF(), 1, func(p *progHeader) { p.Vaddr = 0x401000; p.Off = 0x2000 }), want: unix.ENOEXEC},
		{name: "descending", elf: seg(newTestELF(), 1, func(p *progHeader) { p.Vaddr = 0x300100 }), want: unix.ENOEXEC},
		{name: "memsz huge", elf: seg(newTestELF(), 1, func(p *progHeader) { p.Memsz = 1 << 62 }), want: unix.EINVAL},
		{name: "vaddr wraps", elf: seg(newTestELF(), 1, func(p *progHeader) { p.Vaddr = ^uint64(0) - 0xfff; p.Off = 0 }), want: unix.EINVAL},
		{name: "past user space", elf: seg(newTestELF(), 1, func(p *progHeader) { p.Vaddr = arch.MaxUserAddress - 0x1000 + 0x100; p.Off = 0x100 }), want: unix.EINVAL},
		{name: "offset huge", elf: seg(newTestELF(), 1, func(p *progHeader) { p.Off = 1<<63 + 0x100 }), want: unix.EINVAL},
		{name: "at page zero", elf: func() *testELF {
			e := newTestELF()
			e.phdrs[0].Vaddr, e.entry = 0, 0x100
			e.phdrs[1].Vaddr = 0x3100
			return e
		}(), want: unix.EPERM},
		{name: "entry past user space", elf: func() *testELF { e := newTestELF(); e.entry = 1 << 60; return e }(), want: unix.EINVAL},
		{name: "PT_INTERP too long", elf: func() *testELF {
			e := newTestELF().withInterp("/lib/ld.so")
			e.phdrs[0].Filesz = 4097
			return e
		}(), want: unix.ENOEXEC},
		{name: "PT_INTERP one byte", elf: func() *testELF {
			e := newTestELF().withInterp("/lib/ld.so")
			e.phdrs[0].Filesz = 1
			return e
		}(), want: unix.ENOEXEC},
		{name: "PT_INTERP unterminated", elf: func() *testELF {
			e := newTestELF().withInterp("/lib/ld.so")
			e.phdrs[0].Filesz = 5
			return e
		}(), want: unix.ENOEXEC},
		{name: "PT_INTERP past EOF", elf: func() *testELF {
			e := newTestELF().withInterp("/lib/ld.so")
			e.phdrs[0].Off = 0x10000
			return e
		}(), want: unix.EIO},
		{name: "PT_INTERP empty path", elf: newTestELF().withInterp("\x00"), want: unix.EACCES},
		{name: "interp missing", elf: newTestELF().withInterp("/nope"), want: unix.ENOENT},
		{name: "interp not ELF", elf: newTestELF().withInterp("/lib/ld.so"), interp: func() *testELF { e := newTestInterp(); e.machine = elf.EM_386; return e }(), want: unix.ELIBBAD},
		{name: "interp bad phdrs", elf: newTestELF().withInterp("/lib/ld.so"), interp: func() *testELF { e := newTestInterp(); e.phentsize = 1; return e }(), want: unix.ELIBBAD},
		{name: "interp relocatable", elf: newTestELF().withInterp("/lib/ld.so"), interp: func() *testELF { e := newTestInterp(); e.typ = elf.ET_REL; return e }(), want: unix.ELIBBAD},
		{name: "interp with broken PT_INTERP", elf: newTestELF().withInterp("/lib/ld.so"), interp: func() *testELF {
			e := newTestInterp().withInterp("/x")
			e.phdrs[0].Filesz = 1 << 20 // ignored, as on Linux
			return e
		}()},
		{name: "interp bad segment", elf: newTestELF().withInterp("/lib/ld.so"), interp: seg(newTestInterp(), 1, func(p *progHeader) { p.Filesz = 0x3000 }), want: unix.EINVAL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := tc.raw
			if tc.elf != nil {
				file = tc.elf.bytes()
			}
			op := &mapOpener{files: map[string]File{}}
			if tc.interp != nil {
				op.files["/lib/ld.so"] = newBytesFile(tc.interp.bytes())
			}
			m := newFakeMem()
			_, err := Load(m, op, testArgs(newBytesFile(file)))
			if got := errnoOf(err); got != tc.want {
				t.Fatalf("Load: %v (errno %d %v), want %v", err, got, got, tc.want)
			}
			if tc.want != 0 && len(m.vmas) != 0 {
				t.Errorf("mapped %v before failing", m.log)
			}
		})
	}
}

// TestInterpShortHeader: a truncated interpreter header fails with EIO.
func TestInterpShortHeader(t *testing.T) {
	op := &mapOpener{files: map[string]File{"/lib/ld.so": newBytesFile(newTestInterp().bytes()[:40])}}
	_, err := Load(newFakeMem(), op, testArgs(newBytesFile(newTestELF().withInterp("/lib/ld.so").bytes())))
	if errnoOf(err) != unix.EIO {
		t.Fatalf("Load: %v, want EIO", err)
	}
}

// TestMemoryFailure: errors from Memory come back wrapped.
func TestMemoryFailure(t *testing.T) {
	file := newTestELF().bytes()
	for i := 1; i <= 4; i++ {
		m := newFakeMem()
		m.failMaps = i
		_, err := Load(m, &mapOpener{}, testArgs(newBytesFile(file)))
		if errnoOf(err) != unix.ENOMEM {
			t.Errorf("failing map %d: %v, want ENOMEM", i, err)
		}
	}
}

func TestArgLimits(t *testing.T) {
	file := newTestELF().bytes()
	big := strings.Repeat("x", maxArgStrlen-1) // exactly MAX_ARG_STRLEN with its NUL
	for _, tc := range []struct {
		name       string
		argv, envv []string
		limit      uint64
		want       unix.Errno
	}{
		{name: "longest string", argv: []string{big}},
		{name: "string too long", argv: []string{big + "x"}, want: unix.E2BIG},
		{name: "env string too long", argv: []string{"a"}, envv: []string{big + "x"}, want: unix.E2BIG},
		{name: "total over 2 MiB", argv: slices.Repeat([]string{big}, 16), want: unix.E2BIG},
		{name: "total under 2 MiB", argv: slices.Repeat([]string{big}, 15)},
		{name: "bigger rlimit", argv: slices.Repeat([]string{big}, 16), limit: 64 << 20},
		{name: "6 MiB cap", argv: slices.Repeat([]string{big}, 48), limit: 1 << 40, want: unix.E2BIG},
		{name: "128 KiB floor", argv: []string{big[:100000]}, limit: 4096},
		{name: "128 KiB floor exceeded", argv: []string{big[:100000], big[:40000]}, limit: 4096, want: unix.E2BIG},
		{name: "too many pointers", argv: slices.Repeat([]string{""}, 16384), limit: 4096, want: unix.E2BIG},
		{name: "empty argv", argv: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newFakeMem()
			args := testArgs(newBytesFile(file))
			args.Argv, args.Envv, args.StackLimit = tc.argv, tc.envv, tc.limit
			res, err := Load(m, &mapOpener{}, args)
			if got := errnoOf(err); got != tc.want {
				t.Fatalf("Load: %v, want %v", err, tc.want)
			}
			if err != nil {
				return
			}
			want := tc.argv
			if len(want) == 0 {
				want = []string{""}
			}
			checkStack(t, m, res, args, want)
		})
	}
}

func TestInterpreter(t *testing.T) {
	tests := []struct {
		name string
		path string // a host file
		want func(string) bool
	}{
		{"dynamic executable", "/bin/true", func(s string) bool { return strings.HasPrefix(s, "/") && strings.Contains(s, "ld-linux") }},
		{"not loadable", "/etc/passwd", func(s string) bool { return s == "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := os.Open(tt.path)
			if err != nil {
				t.Skip(err)
			}
			defer f.Close()
			if got := Interpreter(osFile{f}); !tt.want(got) {
				t.Errorf("Interpreter(%s) = %q", tt.path, got)
			}
		})
	}
	t.Run("script", func(t *testing.T) {
		if got := Interpreter(&bytesFile{bytes.NewReader([]byte("#!/bin/sh -e\necho\n"))}); got != "/bin/sh" {
			t.Errorf("Interpreter(script) = %q, want /bin/sh", got)
		}
	})
}
