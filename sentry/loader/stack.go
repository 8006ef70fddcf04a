package loader

import (
	"encoding/binary"
	"fmt"

	"github.com/moat-sandbox/moat/sentry/arch"
	"golang.org/x/sys/unix"
)

// stackArgs is what goes on the initial stack besides the auxiliary
// vector.
type stackArgs struct {
	argv, envv []string
	execfn     string
	random     [16]byte
}

// stackAddrs are the addresses of the strings and bytes the auxiliary
// vector points at.
type stackAddrs struct {
	execfn, platform, random uintptr
}

// stackLayout is the initial stack as written.
type stackLayout struct {
	sp                                     uintptr // where argc is
	argvStart, argvEnd, envvStart, envvEnd uintptr
	auxv                                   []AuxEntry
}

// buildStack writes the initial stack below top as Linux's execve and
// create_elf_tables do (see the package comment for the picture). auxv
// returns the auxiliary vector, AT_NULL included, once the addresses it
// refers to are known.
func buildStack(mem Memory, top uintptr, st *stackArgs, auxv func(stackAddrs) []AuxEntry) (stackLayout, error) {
	var l stackLayout
	// The strings go in one block: argv, envp, then execfn, ending just
	// below a zero word at the very top.
	n := uint64(len(st.execfn)) + 1
	for _, s := range st.argv {
		n += uint64(len(s)) + 1
	}
	for _, s := range st.envv {
		n += uint64(len(s)) + 1
	}
	const word = 8
	// What goes below the strings: padding to 16 bytes, the platform
	// string, the random bytes, the vectors, and padding again.
	words := uint64(len(st.argv)+1+len(st.envv)+1+1) + 2*64
	need := n + 16 + uint64(len(platform)+1) + 16 + word*words + 16
	if uint64(top) < arch.MinUserAddress || uint64(top)-arch.MinUserAddress < word+need {
		return l, fmt.Errorf("stack top %#x leaves no room for %d bytes: %w", top, need, unix.ENOMEM)
	}

	p := top - word
	block := make([]byte, 0, n)
	for _, s := range st.argv {
		block = append(append(block, s...), 0)
	}
	argvLen := len(block)
	for _, s := range st.envv {
		block = append(append(block, s...), 0)
	}
	envvLen := len(block) - argvLen
	block = append(append(block, st.execfn...), 0)
	p -= uintptr(len(block))
	if err := mem.CopyOut(p, block); err != nil {
		return l, fmt.Errorf("write strings at %#x: %w", p, err)
	}
	l.argvStart = p
	l.argvEnd = p + uintptr(argvLen)
	l.envvStart = l.argvEnd
	l.envvEnd = l.envvStart + uintptr(envvLen)
	var addrs stackAddrs
	addrs.execfn = l.envvEnd

	// Linux randomises this alignment step by up to 8 KiB; the loader
	// does not, so the layout is reproducible.
	p &^= 15
	p -= uintptr(len(platform) + 1)
	if err := mem.CopyOut(p, append([]byte(platform), 0)); err != nil {
		return l, fmt.Errorf("write platform string at %#x: %w", p, err)
	}
	addrs.platform = p
	p -= uintptr(len(st.random))
	if err := mem.CopyOut(p, st.random[:]); err != nil {
		return l, fmt.Errorf("write random bytes at %#x: %w", p, err)
	}
	addrs.random = p

	aux := auxv(addrs)
	if len(aux) > 64 {
		return l, fmt.Errorf("%d auxiliary vector entries: %w", len(aux), unix.EINVAL)
	}
	nwords := uintptr(1 + len(st.argv) + 1 + len(st.envv) + 1 + 2*len(aux))
	sp := (p - word*nwords) &^ 15
	frame := make([]byte, 0, word*nwords)
	le := binary.LittleEndian
	frame = le.AppendUint64(frame, uint64(len(st.argv)))
	q := uint64(l.argvStart)
	for _, s := range st.argv {
		frame = le.AppendUint64(frame, q)
		q += uint64(len(s)) + 1
	}
	frame = le.AppendUint64(frame, 0)
	for _, s := range st.envv {
		frame = le.AppendUint64(frame, q)
		q += uint64(len(s)) + 1
	}
	frame = le.AppendUint64(frame, 0)
	for _, a := range aux {
		frame = le.AppendUint64(le.AppendUint64(frame, a.Key), a.Value)
	}
	if err := mem.CopyOut(sp, frame); err != nil {
		return l, fmt.Errorf("write initial frame at %#x: %w", sp, err)
	}
	l.sp = sp
	l.auxv = aux
	return l, nil
}
