package vdso

//go:generate ./mkvdso.sh

import (
	"bytes"
	"debug/elf"
	_ "embed"
	"fmt"
	"sync"
)

//go:embed vdso.so
var vdsoSO []byte

// Image is the vDSO as the Sentry maps it: the ELF file built from vdso.c,
// zero-padded to a whole number of pages. Its one PT_LOAD segment starts
// at file offset 0 and address 0, so the file is mapped as is, VVarSize
// bytes above the vvar page.
var Image = padToPage(vdsoSO)

func padToPage(b []byte) []byte {
	n := (len(b) + VVarSize - 1) &^ (VVarSize - 1)
	out := make([]byte, n)
	copy(out, b)
	return out
}

var symbols = sync.OnceValues(func() (map[string]uintptr, error) {
	f, err := elf.NewFile(bytes.NewReader(Image))
	if err != nil {
		return nil, fmt.Errorf("parsing the vDSO image: %w", err)
	}
	syms, err := f.DynamicSymbols()
	if err != nil {
		return nil, fmt.Errorf("reading the vDSO's dynamic symbols: %w", err)
	}
	m := make(map[string]uintptr, len(syms))
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Section != elf.SHN_UNDEF {
			m[s.Name] = uintptr(s.Value)
		}
	}
	return m, nil
})

// SymbolOffset returns the offset in Image of the exported function name
// (e.g. "__vdso_clock_gettime"), from the image's dynamic symbol table.
func SymbolOffset(name string) (uintptr, bool) {
	m, err := symbols()
	if err != nil {
		return 0, false
	}
	off, ok := m[name]
	return off, ok
}
