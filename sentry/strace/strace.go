package strace

import (
	"strconv"
	"sync"
)

// Memory reads application memory for decoding pointer arguments. It may
// return fewer bytes than asked together with an error (a fault); the
// decoder then prints the address instead of the contents.
type Memory interface {
	CopyInBytes(addr uintptr, dst []byte) (int, error)
}

// retKind says how a syscall's successful return value prints.
type retKind uint8

const (
	retInt     retKind = iota // decimal
	retHex                    // an address: 0x7f...
	retOctal                  // umask: 022
	retNone                   // exit, exit_group: never returns, "= ?"
	retPoll                   // poll: revents after the count
	retPpoll                  // ppoll: revents and time left
	retSelect                 // select: ready sets and time left (timeval)
	retPselect                // pselect6: ready sets and time left (timespec)
	retFcntl                  // fcntl: F_GETFL/F_GETFD results decoded
	retSignal                 // rt_sigtimedwait: the signal's name
)

// sysInfo describes one system call for the decoder and the docs.
type sysInfo struct {
	name string
	args []ArgKind
	ret  retKind
	// fmt, if set, prints the arguments itself (calls whose argument
	// list depends on an argument, like futex or fcntl).
	fmt func(p *printer)
}

// byName maps names to numbers, built on first use: every runsc process
// links this package, few look a name up.
var byName = sync.OnceValue(func() map[string]uintptr {
	m := make(map[string]uintptr, len(table))
	for i := range table {
		if table[i].name != "" {
			m[table[i].name] = uintptr(i)
		}
	}
	return m
})

// Name returns the name of x86-64 system call sysno, or "" if the number
// is not assigned.
func Name(sysno uintptr) string {
	if sysno >= MaxSyscall {
		return ""
	}
	return table[sysno].name
}

// Number returns the number of the x86-64 system call named name.
func Number(name string) (uintptr, bool) {
	n, ok := byName()[name]
	return n, ok
}

// Signature returns the name of system call sysno and the kinds of its
// arguments in order, as the decoder treats them. An unassigned number
// has an empty name and no arguments. The slice must not be modified.
func Signature(sysno uintptr) (name string, args []ArgKind) {
	if sysno >= MaxSyscall {
		return "", nil
	}
	return table[sysno].name, table[sysno].args
}

// printer builds one strace line.
type printer struct {
	m     Memory
	sysno uintptr
	args  [6]uintptr
	ret   uintptr
	exit  bool // formatting after the call returned
	ok    bool // exit and the call succeeded (ret is not an errno)
	b     []byte
	n     int // arguments printed so far
	// scratch holds data read from application memory before it is
	// quoted into b; a read overwrites it.
	scratch [pathMax + 1]byte
}

var printers = sync.Pool{New: func() any { return &printer{b: make([]byte, 0, 256)} }}

func getPrinter(m Memory, args [6]uintptr) *printer {
	p := printers.Get().(*printer)
	p.m, p.sysno, p.args, p.ret, p.exit, p.ok, p.b, p.n = m, 0, args, 0, false, false, p.b[:0], 0
	return p
}

func putPrinter(p *printer) {
	p.m = nil
	if cap(p.b) > 64<<10 {
		p.b = make([]byte, 0, 256)
	}
	printers.Put(p)
}

// Entry formats system call sysno as it is entered, e.g.
// `openat(AT_FDCWD, "/etc/passwd", O_RDONLY|O_CLOEXEC)`. Arguments the
// call writes print as addresses.
func Entry(m Memory, sysno uintptr, args [6]uintptr) (s string) {
	defer func() {
		// Decoding is written not to panic (the fuzz tests check it);
		// should it anyway, the trace must not take the sandbox down.
		if r := recover(); r != nil {
			s = safeLine(sysno, args, false, 0)
		}
	}()
	return entryLine(m, sysno, args)
}

func entryLine(m Memory, sysno uintptr, args [6]uintptr) string {
	p := getPrinter(m, args)
	defer putPrinter(p)
	p.call(sysno)
	return string(p.b)
}

// Exit formats system call sysno after it returned ret (the raw value of
// rax: a negative errno on failure): the call with the arguments it wrote
// decoded, then " = " and the result, e.g. `read(3, "root:x:0:0"..., 832) = 832`
// or `openat(AT_FDCWD, "/x", O_RDONLY) = -1 ENOENT (No such file or directory)`.
// Arguments that are both read and written (select's fd sets, poll's
// array) show their contents after the call.
func Exit(m Memory, sysno uintptr, args [6]uintptr, ret uintptr) (s string) {
	defer func() {
		if r := recover(); r != nil {
			s = safeLine(sysno, args, true, ret)
		}
	}()
	return exitLine(m, sysno, args, ret)
}

func exitLine(m Memory, sysno uintptr, args [6]uintptr, ret uintptr) string {
	p := getPrinter(m, args)
	defer putPrinter(p)
	p.exit = true
	p.ret = ret
	p.ok = !isErrno(ret)
	p.call(sysno)
	p.result(sysno)
	return string(p.b)
}

// safeLine is the raw line printed if decoding ever panicked; it reads no
// memory.
func safeLine(sysno uintptr, args [6]uintptr, exit bool, ret uintptr) string {
	p := &printer{args: args}
	if name, kinds := Signature(sysno); name != "" {
		p.str(name)
		p.b = append(p.b, '(')
		for i := range kinds {
			if i > 0 {
				p.str(", ")
			}
			p.hex(uint64(args[i]))
		}
		p.b = append(p.b, ')')
	} else {
		p.unknown(sysno)
	}
	if exit {
		p.str(" = ")
		p.b = strconv.AppendInt(p.b, int64(ret), 10)
	}
	return string(p.b)
}

// isErrno reports whether a raw return value is a negated errno.
func isErrno(ret uintptr) bool {
	r := int64(ret)
	return r < 0 && r >= -4095
}

// call prints name(args).
func (p *printer) call(sysno uintptr) {
	if sysno >= MaxSyscall || table[sysno].name == "" {
		p.unknown(sysno)
		return
	}
	info := &table[sysno]
	p.sysno = sysno
	p.str(info.name)
	p.b = append(p.b, '(')
	if info.fmt != nil {
		info.fmt(p)
	} else {
		for i, k := range info.args {
			p.arg(i, k)
		}
	}
	p.b = append(p.b, ')')
}

// unknown prints a call to an unknown syscall with six hex arguments.
func (p *printer) unknown(sysno uintptr) {
	p.str("syscall_0x")
	p.b = strconv.AppendUint(p.b, uint64(sysno), 16)
	p.b = append(p.b, '(')
	for i := range p.args {
		if i > 0 {
			p.str(", ")
		}
		p.hex(uint64(p.args[i]))
	}
	p.b = append(p.b, ')')
}

// result prints " = ret" with its decoration.
func (p *printer) result(sysno uintptr) {
	var rk retKind
	if sysno < MaxSyscall {
		rk = table[sysno].ret
	}
	if rk == retNone {
		p.str(" = ?")
		return
	}
	p.str(" = ")
	if !p.ok {
		p.errno(uint64(-int64(p.ret)))
		return
	}
	r := int64(p.ret)
	switch rk {
	case retHex:
		p.hex(uint64(r))
	case retOctal:
		p.octal(uint64(r))
	case retPoll, retPpoll:
		p.int(r)
		p.pollResult(r, rk == retPpoll)
	case retSelect, retPselect:
		p.int(r)
		p.selectResult(r, rk == retPselect)
	case retFcntl:
		p.fcntlResult(r)
	case retSignal:
		p.int(r)
		if r > 0 && r <= maxSignal {
			p.str(" (")
			p.signal(uint64(r))
			p.b = append(p.b, ')')
		}
	default:
		p.int(r)
	}
}

// Low-level output helpers.

func (p *printer) str(s string) { p.b = append(p.b, s...) }

func (p *printer) int(v int64) { p.b = strconv.AppendInt(p.b, v, 10) }

func (p *printer) uint(v uint64) { p.b = strconv.AppendUint(p.b, v, 10) }

// hex prints 0 as "0" and anything else as 0x...
func (p *printer) hex(v uint64) {
	if v == 0 {
		p.b = append(p.b, '0')
		return
	}
	p.b = append(p.b, "0x"...)
	p.b = strconv.AppendUint(p.b, v, 16)
}

// ptr prints 0 as NULL and anything else as 0x...
func (p *printer) ptr(v uint64) {
	if v == 0 {
		p.str("NULL")
		return
	}
	p.hex(v)
}

// octal prints v as C's "%#03o": 0644, 022, 000.
func (p *printer) octal(v uint64) {
	p.b = append(p.b, '0')
	if v < 010 {
		p.b = append(p.b, '0')
	}
	p.b = strconv.AppendUint(p.b, v, 8)
}

// sep starts the next argument.
func (p *printer) sep() {
	if p.n > 0 {
		p.str(", ")
	}
	p.n++
}

// read fills dst from application memory, reporting whether all of it
// could be read.
func (p *printer) read(addr uint64, dst []byte) bool {
	if addr == 0 || p.m == nil {
		return false
	}
	n, err := p.m.CopyInBytes(uintptr(addr), dst)
	return err == nil && n == len(dst)
}

// readSome reads up to len(dst) bytes and returns how many it got.
func (p *printer) readSome(addr uint64, dst []byte) int {
	if addr == 0 || p.m == nil || len(dst) == 0 {
		return 0
	}
	n, _ := p.m.CopyInBytes(uintptr(addr), dst)
	if n < 0 {
		return 0
	}
	if n > len(dst) {
		n = len(dst)
	}
	return n
}
