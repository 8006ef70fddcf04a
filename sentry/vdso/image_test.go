package vdso

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var exported = []string{
	"__vdso_clock_gettime", "__vdso_gettimeofday", "__vdso_time",
	"__vdso_getcpu", "__vdso_clock_getres",
}

var aliases = map[string]string{
	"clock_gettime": "__vdso_clock_gettime",
	"gettimeofday":  "__vdso_gettimeofday",
	"time":          "__vdso_time",
	"getcpu":        "__vdso_getcpu",
	"clock_getres":  "__vdso_clock_getres",
}

func openImage(t *testing.T) *elf.File {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(Image))
	if err != nil {
		t.Fatalf("parsing Image: %v", err)
	}
	return f
}

func TestImageHeader(t *testing.T) {
	f := openImage(t)
	if len(Image)%4096 != 0 || len(Image) == 0 {
		t.Errorf("len(Image) = %d, want a non-zero multiple of 4096", len(Image))
	}
	if f.Class != elf.ELFCLASS64 || f.Data != elf.ELFDATA2LSB || f.Machine != elf.EM_X86_64 {
		t.Errorf("ELF class/data/machine = %v/%v/%v, want 64-bit little-endian x86-64", f.Class, f.Data, f.Machine)
	}
	if f.Type != elf.ET_DYN {
		t.Errorf("type = %v, want ET_DYN", f.Type)
	}
	sonames, err := f.DynString(elf.DT_SONAME)
	if err != nil || len(sonames) != 1 || sonames[0] != "linux-vdso.so.1" {
		t.Errorf("DT_SONAME = %q (%v), want linux-vdso.so.1", sonames, err)
	}
}

func TestImageSegments(t *testing.T) {
	f := openImage(t)
	var loads []*elf.Prog
	have := map[elf.ProgType]bool{}
	for _, p := range f.Progs {
		have[p.Type] = true
		if p.Type == elf.PT_LOAD {
			loads = append(loads, p)
		}
	}
	if len(loads) != 1 {
		t.Fatalf("%d PT_LOAD segments, want 1", len(loads))
	}
	l := loads[0]
	if l.Off != 0 || l.Vaddr != 0 {
		t.Errorf("PT_LOAD at offset %#x address %#x, want both 0 (the image maps as is)", l.Off, l.Vaddr)
	}
	if l.Filesz != l.Memsz {
		t.Errorf("PT_LOAD filesz %#x != memsz %#x: the image must not need zero-filled memory", l.Filesz, l.Memsz)
	}
	if l.Flags != elf.PF_R|elf.PF_X {
		t.Errorf("PT_LOAD flags = %v, want R+X", l.Flags)
	}
	if l.Memsz > uint64(len(Image)) {
		t.Errorf("PT_LOAD spans %#x bytes, beyond the image (%#x)", l.Memsz, len(Image))
	}
	for _, want := range []elf.ProgType{elf.PT_DYNAMIC, elf.PT_GNU_EH_FRAME, elf.PT_NOTE} {
		if !have[want] {
			t.Errorf("no %v program header", want)
		}
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			continue
		}
		if p.Type != elf.PT_GNU_STACK && (p.Off < l.Off || p.Off+p.Filesz > l.Off+l.Filesz) {
			t.Errorf("%v [%#x, %#x) lies outside the loaded segment", p.Type, p.Off, p.Off+p.Filesz)
		}
	}
}

func TestImageSections(t *testing.T) {
	f := openImage(t)
	load := f.Progs[0]
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			load = p
		}
	}
	var text *elf.Section
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		if s.Addr != s.Offset {
			t.Errorf("section %s at address %#x but offset %#x", s.Name, s.Addr, s.Offset)
		}
		if s.Addr+s.Size > load.Vaddr+load.Memsz {
			t.Errorf("section %s [%#x, %#x) is outside the loaded segment", s.Name, s.Addr, s.Addr+s.Size)
		}
		if s.Type == elf.SHT_NOBITS {
			t.Errorf("section %s has no file bytes (bss)", s.Name)
		}
		if s.Flags&elf.SHF_WRITE != 0 && s.Name != ".dynamic" {
			// .dynamic is flagged writable by convention but sits in
			// the read-only segment, as in every vDSO.
			t.Errorf("section %s is writable", s.Name)
		}
		switch {
		case strings.HasPrefix(s.Name, ".data"), strings.HasPrefix(s.Name, ".bss"),
			strings.HasPrefix(s.Name, ".got"), strings.HasPrefix(s.Name, ".plt"),
			strings.HasPrefix(s.Name, ".rela"), strings.HasPrefix(s.Name, ".tdata"):
			t.Errorf("unexpected section %s", s.Name)
		}
		if s.Name == ".text" {
			text = s
		}
	}
	if text == nil || text.Flags&elf.SHF_EXECINSTR == 0 {
		t.Fatalf("no executable .text section")
	}
	for _, name := range []string{".hash", ".gnu.hash", ".dynsym", ".dynstr", ".gnu.version", ".gnu.version_d", ".dynamic", ".eh_frame_hdr", ".eh_frame"} {
		if f.Section(name) == nil {
			t.Errorf("no %s section", name)
		}
	}
	for _, name := range exported {
		off, ok := SymbolOffset(name)
		if !ok {
			t.Errorf("SymbolOffset(%q) not found", name)
			continue
		}
		if uint64(off) < text.Addr || uint64(off) >= text.Addr+text.Size {
			t.Errorf("%s at %#x is outside .text [%#x, %#x)", name, off, text.Addr, text.Addr+text.Size)
		}
	}
}

func TestImageNoRelocations(t *testing.T) {
	f := openImage(t)
	for _, s := range f.Sections {
		if s.Type == elf.SHT_REL || s.Type == elf.SHT_RELA || s.Type == elf.SectionType(19) /* SHT_RELR */ {
			t.Errorf("relocation section %s", s.Name)
		}
	}
	for _, tag := range []elf.DynTag{elf.DT_REL, elf.DT_RELA, elf.DynTag(36) /* DT_RELR */, elf.DT_JMPREL, elf.DT_PLTGOT, elf.DT_TEXTREL, elf.DT_NEEDED, elf.DT_INIT, elf.DT_FINI} {
		if v, err := f.DynValue(tag); err != nil || len(v) != 0 {
			t.Errorf("dynamic tag %v = %v (%v), want none", tag, v, err)
		}
	}
	if libs, err := f.ImportedSymbols(); err != nil || len(libs) != 0 {
		t.Errorf("imported symbols %v (%v), want none", libs, err)
	}
}

func TestImageSymbols(t *testing.T) {
	f := openImage(t)
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]elf.Symbol{}
	for _, s := range syms {
		byName[s.Name] = s
	}
	for _, name := range exported {
		t.Run(name, func(t *testing.T) {
			s, ok := byName[name]
			if !ok {
				t.Fatalf("%s not in .dynsym", name)
			}
			if elf.ST_TYPE(s.Info) != elf.STT_FUNC || elf.ST_BIND(s.Info) != elf.STB_GLOBAL {
				t.Errorf("%s is %v %v, want a global function", name, elf.ST_BIND(s.Info), elf.ST_TYPE(s.Info))
			}
			if !s.HasVersion || s.Version != "LINUX_2.6" || s.VersionIndex.IsHidden() {
				t.Errorf("%s version = %q (has %v, hidden %v), want default LINUX_2.6", name, s.Version, s.HasVersion, s.VersionIndex.IsHidden())
			}
		})
	}
	for alias, target := range aliases {
		t.Run(alias, func(t *testing.T) {
			s, ok := byName[alias]
			if !ok {
				t.Fatalf("%s not in .dynsym", alias)
			}
			if elf.ST_BIND(s.Info) != elf.STB_WEAK || elf.ST_TYPE(s.Info) != elf.STT_FUNC {
				t.Errorf("%s is %v %v, want a weak function", alias, elf.ST_BIND(s.Info), elf.ST_TYPE(s.Info))
			}
			if s.Value != byName[target].Value {
				t.Errorf("%s at %#x, %s at %#x: want the same address", alias, s.Value, target, byName[target].Value)
			}
		})
	}
	vers, err := f.DynamicVersions()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range vers {
		names = append(names, v.Name)
	}
	if len(vers) != 2 || vers[0].Name != "linux-vdso.so.1" || vers[1].Name != "LINUX_2.6" {
		t.Errorf("version definitions = %q, want [linux-vdso.so.1 LINUX_2.6]", names)
	}
}

// TestImageDynamicLookup looks the symbols up the way a dynamic linker or
// the Go runtime does, from the PT_DYNAMIC segment of the mapped image
// alone: through DT_HASH and through DT_GNU_HASH, checking the version
// through DT_VERSYM and DT_VERDEF.
func TestImageDynamicLookup(t *testing.T) {
	f := openImage(t)
	var dyn *elf.Prog
	for _, p := range f.Progs {
		if p.Type == elf.PT_DYNAMIC {
			dyn = p
		}
	}
	if dyn == nil {
		t.Fatal("no PT_DYNAMIC")
	}
	le := binary.LittleEndian
	tags := map[elf.DynTag]uint64{}
	for off := dyn.Off; off+16 <= dyn.Off+dyn.Filesz; off += 16 {
		tag := elf.DynTag(le.Uint64(Image[off:]))
		if tag == elf.DT_NULL {
			break
		}
		tags[tag] = le.Uint64(Image[off+8:])
	}
	for _, tag := range []elf.DynTag{elf.DT_HASH, elf.DT_GNU_HASH, elf.DT_SYMTAB, elf.DT_STRTAB, elf.DT_VERSYM, elf.DT_VERDEF} {
		if _, ok := tags[tag]; !ok {
			t.Fatalf("no %v in the dynamic segment", tag)
		}
	}
	symtab, strtab := tags[elf.DT_SYMTAB], tags[elf.DT_STRTAB]
	cstring := func(off uint64) string {
		end := bytes.IndexByte(Image[off:], 0)
		return string(Image[off : off+uint64(end)])
	}
	symName := func(i uint32) string { return cstring(strtab + uint64(le.Uint32(Image[symtab+uint64(i)*24:]))) }
	symValue := func(i uint32) uint64 { return le.Uint64(Image[symtab+uint64(i)*24+8:]) }
	u32 := func(off uint64) uint32 { return le.Uint32(Image[off:]) }

	// The version LINUX_2.6 must be defined, with the right hash.
	var verIndex uint16
	for off := tags[elf.DT_VERDEF]; ; {
		ndx := le.Uint16(Image[off+4:])
		hash := u32(off + 8)
		aux := off + uint64(u32(off+12))
		if name := cstring(strtab + uint64(u32(aux))); name == "LINUX_2.6" {
			if hash != elfHash("LINUX_2.6") || hash != 0x3ae75f6 {
				t.Errorf("LINUX_2.6 verdef hash = %#x, want %#x", hash, 0x3ae75f6)
			}
			verIndex = ndx
		}
		next := u32(off + 16)
		if next == 0 {
			break
		}
		off += uint64(next)
	}
	if verIndex == 0 {
		t.Fatal("no LINUX_2.6 version definition")
	}
	checkVersion := func(i uint32) {
		if v := le.Uint16(Image[tags[elf.DT_VERSYM]+uint64(i)*2:]); v&0x7fff != verIndex {
			t.Errorf("%s has version index %d, want %d", symName(i), v, verIndex)
		}
	}

	lookupSysV := func(name string) (uint64, bool) {
		h := tags[elf.DT_HASH]
		nbucket := u32(h)
		i := u32(h + 8 + uint64(elfHash(name)%nbucket)*4)
		for i != 0 {
			if symName(i) == name {
				checkVersion(i)
				return symValue(i), true
			}
			i = u32(h + 8 + uint64(nbucket)*4 + uint64(i)*4)
		}
		return 0, false
	}
	lookupGNU := func(name string) (uint64, bool) {
		g := tags[elf.DT_GNU_HASH]
		nbuckets, symoffset, bloomSize, bloomShift := u32(g), u32(g+4), u32(g+8), u32(g+12)
		h := gnuHash(name)
		word := le.Uint64(Image[g+16+uint64((h/64)%bloomSize)*8:])
		mask := uint64(1)<<(h%64) | uint64(1)<<((h>>bloomShift)%64)
		if word&mask != mask {
			return 0, false
		}
		buckets := g + 16 + uint64(bloomSize)*8
		chains := buckets + uint64(nbuckets)*4
		i := u32(buckets + uint64(h%nbuckets)*4)
		if i == 0 {
			return 0, false
		}
		for ; ; i++ {
			h2 := u32(chains + uint64(i-symoffset)*4)
			if h|1 == h2|1 && symName(i) == name {
				checkVersion(i)
				return symValue(i), true
			}
			if h2&1 != 0 {
				return 0, false
			}
		}
	}
	names := append([]string{}, exported...)
	for a := range aliases {
		names = append(names, a)
	}
	for _, name := range names {
		want, _ := SymbolOffset(name)
		for hashName, lookup := range map[string]func(string) (uint64, bool){"DT_HASH": lookupSysV, "DT_GNU_HASH": lookupGNU} {
			got, ok := lookup(name)
			if !ok || got != uint64(want) {
				t.Errorf("%s lookup of %s = %#x, %v; want %#x", hashName, name, got, ok, want)
			}
		}
	}
	for _, missing := range []string{"__vdso_getrandom", "vvar_page", "read_ns"} {
		if _, ok := lookupSysV(missing); ok {
			t.Errorf("DT_HASH finds %s", missing)
		}
		if _, ok := lookupGNU(missing); ok {
			t.Errorf("DT_GNU_HASH finds %s", missing)
		}
	}
}

func elfHash(s string) uint32 {
	var h uint32
	for i := 0; i < len(s); i++ {
		h = h<<4 + uint32(s[i])
		g := h & 0xf0000000
		if g != 0 {
			h ^= g >> 24
		}
		h &^= g
	}
	return h
}

func gnuHash(s string) uint32 {
	h := uint32(5381)
	for i := 0; i < len(s); i++ {
		h = h*33 + uint32(s[i])
	}
	return h
}

// TestImageUpToDate rebuilds vdso.so when the gcc that built it is at hand
// and checks the committed file is what vdso.c, vdso.lds and vdso.map
// make today (run `go generate ./sentry/vdso` after changing them).
func TestImageUpToDate(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc")
	}
	out, err := exec.Command(gcc, "--version").Output()
	if err != nil {
		t.Skipf("gcc --version: %v", err)
	}
	version := strings.SplitN(string(out), "\n", 2)[0]
	f := openImage(t)
	comment := f.Section(".comment")
	if comment == nil {
		t.Skip("vdso.so has no .comment naming its compiler")
	}
	data, err := comment.Data()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), strings.TrimPrefix(version, "gcc ")) {
		t.Skipf("vdso.so was built by %q, this gcc is %q", bytes.Trim(data, "\x00"), version)
	}
	dst := filepath.Join(t.TempDir(), "vdso.so")
	cmd := exec.Command("./mkvdso.sh", dst)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mkvdso.sh: %v\n%s", err, out)
	}
	fresh, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fresh, vdsoSO) {
		t.Errorf("vdso.so is stale: run go generate ./sentry/vdso and commit it")
	}
}
