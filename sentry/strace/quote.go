package strace

const (
	// maxStr is how many bytes of a string or buffer print before "..."
	// (strace's default -s 32).
	maxStr = 32
	// maxArray is how many elements of an array print before "...".
	maxArray = 32
	// pathMax bounds path names, which print whole.
	pathMax = 4096
	// pageSize bounds each read of a NUL-terminated string, so that a
	// string ending just before an unmapped page still reads.
	pageSize = 4096
	// strChunk is how many bytes of a string one read asks for.
	strChunk = 128
)

// quote appends data as a C string literal the way strace prints it:
// printable ASCII as is, \t \n \v \f \r \" \\ escaped, anything else in
// octal (three digits only when an octal digit follows). With hex, every
// byte prints as \xNN. more appends "..." after the closing quote.
func (p *printer) quote(data []byte, more, hex bool) {
	p.b = append(p.b, '"')
	const digits = "0123456789abcdef"
	for i, c := range data {
		if hex {
			p.b = append(p.b, '\\', 'x', digits[c>>4], digits[c&15])
			continue
		}
		switch c {
		case '"', '\\':
			p.b = append(p.b, '\\', c)
		case '\t':
			p.b = append(p.b, '\\', 't')
		case '\n':
			p.b = append(p.b, '\\', 'n')
		case '\v':
			p.b = append(p.b, '\\', 'v')
		case '\f':
			p.b = append(p.b, '\\', 'f')
		case '\r':
			p.b = append(p.b, '\\', 'r')
		default:
			if c >= ' ' && c <= '~' {
				p.b = append(p.b, c)
				continue
			}
			p.b = append(p.b, '\\')
			nextOctal := i+1 < len(data) && data[i+1] >= '0' && data[i+1] <= '7'
			if nextOctal || c >= 0100 {
				p.b = append(p.b, '0'+c>>6)
			}
			if nextOctal || c >= 010 {
				p.b = append(p.b, '0'+(c>>3)&7)
			}
			p.b = append(p.b, '0'+c&7)
		}
	}
	p.b = append(p.b, '"')
	if more {
		p.str("...")
	}
}

// readCString reads a NUL-terminated string of at most max bytes at addr
// into scratch. It returns the bytes before the NUL, whether a NUL was
// found within max bytes, and whether the memory could be read that far.
func (p *printer) readCString(addr uint64, max int) (s []byte, terminated, ok bool) {
	if addr == 0 {
		return nil, false, false
	}
	if max > len(p.scratch) {
		max = len(p.scratch)
	}
	n := 0
	for n < max {
		// Read in small steps that never cross a page, so a short string
		// costs a short copy and a string ending before an unmapped page
		// still reads.
		chunk := pageSize - int((addr+uint64(n))%pageSize)
		if chunk > strChunk {
			chunk = strChunk
		}
		if chunk > max-n {
			chunk = max - n
		}
		got := p.readSome(addr+uint64(n), p.scratch[n:n+chunk])
		for i := n; i < n+got; i++ {
			if p.scratch[i] == 0 {
				return p.scratch[:i], true, true
			}
		}
		n += got
		if got < chunk {
			return p.scratch[:n], false, false
		}
	}
	return p.scratch[:n], false, true
}

// cstring prints the NUL-terminated string at addr, at most limit bytes
// of it (with "..." if it is longer), or its address if it cannot be read.
func (p *printer) cstring(addr uint64, limit int) {
	s, terminated, ok := p.readCString(addr, limit+1)
	if !ok && !terminated {
		p.ptr(addr)
		return
	}
	more := false
	if len(s) > limit {
		s, more = s[:limit], true
	}
	p.quote(s, more, false)
}

// buffer prints size bytes at addr (at most maxStr of them, then "..."),
// or the address if they cannot be read.
func (p *printer) buffer(addr, size uint64, hex bool) {
	if addr == 0 {
		p.ptr(addr)
		return
	}
	n := size
	if n > maxStr {
		n = maxStr
	}
	if n > 0 && !p.read(addr, p.scratch[:n]) {
		p.ptr(addr)
		return
	}
	p.quote(p.scratch[:n], size > maxStr, hex)
}

// path prints a path name argument in full.
func (p *printer) path(addr uint64) {
	p.cstring(addr, pathMax)
}

// strArray prints execve's argv: ["ls", "-l"], at most maxArray strings.
func (p *printer) strArray(addr uint64) {
	if addr == 0 {
		p.ptr(addr)
		return
	}
	var raw [8]byte
	if !p.read(addr, raw[:]) {
		p.ptr(addr)
		return
	}
	p.b = append(p.b, '[')
	for i := 0; ; i++ {
		if !p.read(addr+uint64(i)*8, raw[:]) {
			// The array runs into unreadable memory: show where.
			if i > 0 {
				p.str(", ")
			}
			p.hex(addr + uint64(i)*8)
			break
		}
		elem := le64(raw[:])
		if elem == 0 {
			break
		}
		if i > 0 {
			p.str(", ")
		}
		if i == maxArray {
			p.str("...")
			break
		}
		p.cstring(elem, maxStr)
	}
	p.b = append(p.b, ']')
}

// maxEnvCount bounds how many envp entries are counted.
const maxEnvCount = 1 << 16

// envArray prints execve's envp as its address and a count of variables.
func (p *printer) envArray(addr uint64) {
	p.ptr(addr)
	if addr == 0 {
		return
	}
	var raw [8]byte
	for i := uint64(0); i < maxEnvCount; i++ {
		if !p.read(addr+i*8, raw[:]) {
			return
		}
		if le64(raw[:]) == 0 {
			p.str(" /* ")
			p.uint(i)
			if i == 1 {
				p.str(" var */")
			} else {
				p.str(" vars */")
			}
			return
		}
	}
}

func le16(b []byte) uint16 { return uint16(b[0]) | uint16(b[1])<<8 }

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func le64(b []byte) uint64 { return uint64(le32(b)) | uint64(le32(b[4:]))<<32 }
