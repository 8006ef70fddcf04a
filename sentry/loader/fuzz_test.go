package loader

import (
	"bytes"
	"debug/elf"
	"os"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/sentry/arch"
	"golang.org/x/sys/unix"
)

// seedELFs returns well-formed and borderline ELF files for fuzz corpora.
func seedELFs() [][]byte {
	pie := newTestELF()
	pie.typ = elf.ET_DYN
	seeds := [][]byte{
		newTestELF().bytes(),
		pie.bytes(),
		newTestELF().withInterp("/lib/ld.so").bytes(),
		newTestInterp().bytes(),
		[]byte("\x7fELF"),
	}
	if b, err := os.ReadFile("/bin/true"); err == nil && len(b) > 8192 {
		seeds = append(seeds, b[:8192]) // headers of a real PIE
	}
	return seeds
}

// allowed is the set of errors the loader may return for hostile input.
var allowed = map[unix.Errno]bool{
	unix.ENOEXEC: true, unix.EINVAL: true, unix.EPERM: true, unix.EIO: true,
	unix.ELIBBAD: true, unix.ENOENT: true, unix.EACCES: true, unix.ENOMEM: true,
	unix.ELOOP: true,
}

// FuzzParse feeds arbitrary bytes to the ELF header and program header
// parser and checks what it accepts.
func FuzzParse(f *testing.F) {
	for _, s := range seedELFs() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		hdr := make([]byte, binprmBufSize)
		copy(hdr, data)
		img, err := parseELF(newBytesFile(data), hdr, true)
		if err != nil {
			if e := errnoOf(err); !allowed[e] {
				t.Fatalf("error %v has errno %v", err, e)
			}
			return
		}
		if img.Phnum < 1 || img.Phnum*phdrSize > maxPhdrBytes || len(img.Phdrs) != img.Phnum {
			t.Fatalf("accepted %d program headers", img.Phnum)
		}
		if img.Type != elf.ET_EXEC && img.Type != elf.ET_DYN {
			t.Fatalf("accepted type %v", img.Type)
		}
		if len(img.Interp) >= pathMax || strings.IndexByte(img.Interp, 0) >= 0 {
			t.Fatalf("accepted interpreter %q", img.Interp)
		}
		if len(img.Loads) == 0 || img.Low%pageSize != 0 || img.Span%pageSize != 0 || img.Span > arch.MaxUserAddress {
			t.Fatalf("accepted layout low %#x span %#x", img.Low, img.Span)
		}
		if img.Align < pageSize || img.Align&(img.Align-1) != 0 {
			t.Fatalf("alignment %#x", img.Align)
		}
		var prevEnd uint64
		for i, ph := range img.Loads {
			if ph.Filesz > ph.Memsz || (i > 0 && ph.Vaddr < prevEnd) || ph.Vaddr+ph.Memsz > arch.MaxUserAddress || (ph.Off-ph.Vaddr)%pageSize != 0 {
				t.Fatalf("accepted segment %d %+v", i, ph)
			}
			if ph.Vaddr < img.Low || ph.Vaddr+ph.Memsz > img.Low+img.Span {
				t.Fatalf("segment %d %+v outside [%#x, +%#x)", i, ph, img.Low, img.Span)
			}
			prevEnd = ph.Vaddr + ph.Memsz
		}
	})
}

// FuzzParseShebang feeds arbitrary first bytes to the #! parser.
func FuzzParseShebang(f *testing.F) {
	for _, s := range []string{
		"#!/bin/sh\n", "#!/bin/sh -e\n", "#! \t/usr/bin/env -S a b \t\n", "#!", "#!/bin/sh ",
		"#!/bin/sh \x00x\n", "#!" + strings.Repeat("a", 300), "#!/x " + strings.Repeat(" ", 300),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		buf := make([]byte, binprmBufSize)
		copy(buf, data)
		orig := bytes.Clone(buf)
		sb, err := parseShebang(buf)
		if !bytes.Equal(buf, orig) {
			t.Fatalf("parser modified its input")
		}
		if err != nil {
			if errnoOf(err) != unix.ENOEXEC {
				t.Fatalf("error %v", err)
			}
			return
		}
		if buf[0] != '#' || buf[1] != '!' {
			t.Fatalf("accepted %q", buf[:2])
		}
		if strings.ContainsAny(sb.Interp, " \t\x00\n") {
			t.Fatalf("interpreter %q", sb.Interp)
		}
		if !sb.HasArg && sb.Arg != "" {
			t.Fatalf("argument %q without HasArg", sb.Arg)
		}
		// Trailing blanks are trimmed only at the end of the line, so
		// an argument cut by a NUL may keep them (as on Linux).
		if strings.ContainsAny(sb.Arg, "\x00\n") || strings.HasPrefix(sb.Arg, " ") || strings.HasPrefix(sb.Arg, "\t") {
			t.Fatalf("argument %q", sb.Arg)
		}
		if len(sb.Interp)+len(sb.Arg) > binprmBufSize-2 {
			t.Fatalf("result longer than the buffer: %q %q", sb.Interp, sb.Arg)
		}
		// The interpreter path appears right after "#!" and blanks.
		rest := strings.TrimLeft(string(buf[2:]), " \t")
		if !strings.HasPrefix(rest, sb.Interp) {
			t.Fatalf("interpreter %q not at the start of %q", sb.Interp, rest)
		}
	})
}

// FuzzLoad runs the whole loader on an arbitrary main executable (with a
// valid interpreter available) in a fake address space.
func FuzzLoad(f *testing.F) {
	for _, s := range seedELFs() {
		f.Add(s)
	}
	f.Add([]byte("#!/lib/ld.so -x\n"))
	f.Add([]byte("#!/script\n"))
	interp := newTestInterp().bytes()
	f.Fuzz(func(t *testing.T, data []byte) {
		op := &mapOpener{files: map[string]File{
			"/lib/ld.so": newBytesFile(interp),
			"/script":    newBytesFile(data),
		}}
		m := newFakeMem()
		args := testArgs(newBytesFile(data))
		res, err := Load(m, op, args)
		if err != nil {
			if e := errnoOf(err); !allowed[e] {
				t.Fatalf("error %v has errno %v", err, e)
			}
			return
		}
		if res.Stack%16 != 0 || res.Entry >= arch.MaxUserAddress {
			t.Fatalf("result %+v", res)
		}
		ps, err := m.parseStack(res.Stack)
		if err != nil {
			t.Fatalf("parse stack: %v", err)
		}
		if len(ps.argv) != len(res.Argv) || len(ps.auxv) != len(res.Auxv) {
			t.Fatalf("stack %+v, result %+v", ps, res)
		}
		for _, v := range m.vmas {
			if v.start < arch.MinUserAddress || (!v.stack && v.end > arch.MaxUserAddress) {
				t.Fatalf("mapping %+v outside user space", v)
			}
		}
	})
}
