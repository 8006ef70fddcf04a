package startpages

// imageBase is where the linker puts a non-PIE amd64 Go executable's ELF
// header and first segment.
const imageBase = 0x400000
