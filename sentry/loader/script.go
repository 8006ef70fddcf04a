package loader

import (
	"bytes"
	"fmt"

	"golang.org/x/sys/unix"
)

// shebang is the parsed "#!" line of a script.
type shebang struct {
	Interp string // the interpreter path
	Arg    string // its optional single argument
	HasArg bool
}

// parseShebang parses the "#!" line at the start of buf, the first
// BINPRM_BUF_SIZE bytes of the file zero-padded past its end, the way
// Linux's binfmt_script does:
//
//   - the line ends at the first newline; the search stops at a NUL byte;
//   - without a newline in buf the interpreter path must be followed by a
//     space, tab or NUL (or it may be truncated: ENOEXEC), and the line is
//     taken to end at the last byte of buf, which is dropped;
//   - spaces and tabs (only those) are trimmed on both sides;
//   - the interpreter path ends at the first space, tab or NUL; what
//     follows, after spaces and tabs, is one argument, kept whole
//     (inner spaces included) up to the end of the line or a NUL;
//   - no interpreter path at all is ENOEXEC.
//
// It never reads outside buf and allocates only the two result strings.
func parseShebang(buf []byte) (shebang, error) {
	if len(buf) < 2 || buf[0] != '#' || buf[1] != '!' {
		return shebang{}, fmt.Errorf("not a #! script: %w", unix.ENOEXEC)
	}
	// end is the index one past the last byte of the line.
	var end int
	text := buf
	if i := bytes.IndexByte(text, 0); i >= 0 {
		text = text[:i]
	}
	if nl := bytes.IndexByte(text, '\n'); nl >= 0 {
		end = nl
	} else {
		last := len(buf) - 1
		first := nextNonSpaceTab(buf, 2, last+1)
		if first < 0 {
			return shebang{}, fmt.Errorf("#! line of only blanks: %w", unix.ENOEXEC)
		}
		if nextTerminator(buf, first, last+1) < 0 {
			return shebang{}, fmt.Errorf("#! interpreter path truncated: %w", unix.ENOEXEC)
		}
		end = last
	}
	for end > 2 && isSpaceTab(buf[end-1]) {
		end--
	}
	name := nextNonSpaceTab(buf, 2, end)
	if name < 0 || name == end {
		return shebang{}, fmt.Errorf("#! line names no interpreter: %w", unix.ENOEXEC)
	}
	line := buf[:end]
	sep := nextTerminator(line, name, end)
	var sb shebang
	if sep < 0 {
		sb.Interp = string(line[name:])
		return sb, nil
	}
	sb.Interp = string(line[name:sep])
	if line[sep] == 0 {
		return sb, nil
	}
	if arg := nextNonSpaceTab(line, sep, end); arg >= 0 {
		a := line[arg:]
		if i := bytes.IndexByte(a, 0); i >= 0 {
			a = a[:i]
		}
		sb.Arg, sb.HasArg = string(a), true
	}
	return sb, nil
}

func isSpaceTab(c byte) bool { return c == ' ' || c == '\t' }

// nextNonSpaceTab returns the index of the first byte in b[from:to] that is
// not a space or tab, or -1.
func nextNonSpaceTab(b []byte, from, to int) int {
	for i := from; i < to && i < len(b); i++ {
		if !isSpaceTab(b[i]) {
			return i
		}
	}
	return -1
}

// nextTerminator returns the index of the first space, tab or NUL in
// b[from:to], or -1.
func nextTerminator(b []byte, from, to int) int {
	for i := from; i < to && i < len(b); i++ {
		if isSpaceTab(b[i]) || b[i] == 0 {
			return i
		}
	}
	return -1
}
