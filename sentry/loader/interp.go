package loader

// Interpreter returns the path of the file that loading f would open
// next: the PT_INTERP path of an ELF executable, or the interpreter of a
// "#!" script; "" when there is none or f is not loadable. It checks
// only what it reads, so it is a hint (the caller may warm caches with
// it), never a substitute for Load's checks.
func Interpreter(f File) string {
	var hdr [binprmBufSize]byte
	if err := readHeader(f, hdr[:]); err != nil {
		return ""
	}
	if hdr[0] == '#' && hdr[1] == '!' {
		sb, err := parseShebang(hdr[:])
		if err != nil {
			return ""
		}
		return sb.Interp
	}
	img, err := parseELF(f, hdr[:], true)
	if err != nil || !img.HasInterp {
		return ""
	}
	return img.Interp
}
