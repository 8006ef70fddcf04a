package strace

import (
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Kernel-internal restart codes a syscall may end with when a signal
// interrupts it; strace shows them with "?" since the application never
// sees them.
var restartCodes = sync.OnceValue(func() map[uint64][2]string {
	return map[uint64][2]string{
		512: {"ERESTARTSYS", "To be restarted if SA_RESTART is set"},
		513: {"ERESTARTNOINTR", "To be restarted"},
		514: {"ERESTARTNOHAND", "To be restarted if no handler"},
		515: {"ENOIOCTLCMD", "No ioctl command"},
		516: {"ERESTART_RESTARTBLOCK", "Interrupted by signal"},
		517: {"EPROBE_DEFER", "Driver probe deferral"},
		518: {"EOPENSTALE", "Open stale"},
		519: {"ENOPARAM", "No parameter"},
		521: {"EBADHANDLE", "Bad handle"},
		522: {"ENOTSYNC", "Not synchronized"},
		523: {"EBADCOOKIE", "Bad cookie"},
		524: {"ENOTSUPP", "Not supported"},
		525: {"ETOOSMALL", "Too small"},
		526: {"ESERVERFAULT", "Server fault"},
		527: {"EBADTYPE", "Bad type"},
		528: {"EJUKEBOX", "Request initiated, but will not complete before timeout"},
		529: {"EIOCBQUEUED", "iocb queued, will get completion event"},
		530: {"ERECALLCONFLICT", "Conflict with recalled state"},
	}
})

// errnoNames overrides the names x/sys/unix picks where the kernel's
// (and strace's) preferred alias differs.
var errnoNames = sync.OnceValue(func() map[uint64]string {
	return map[uint64]string{
		95:  "EOPNOTSUPP",
		117: "EUCLEAN",
	}
})

// errnoTexts fills in texts Go's syscall package lacks.
var errnoTexts = sync.OnceValue(func() map[uint64]string {
	return map[uint64]string{
		133: "Memory page has hardware error",
	}
})

// errnoName returns the symbolic name of errno e, or "" if it has none.
func errnoName(e uint64) string {
	if n, ok := errnoNames()[e]; ok {
		return n
	}
	if e >= 134 {
		// x/sys/unix names 134 EFTYPE, which Linux does not have.
		return ""
	}
	return unix.ErrnoName(syscall.Errno(e))
}

// ErrnoString returns errno e as strace prints it after "-1 ":
// "ENOENT (No such file or directory)".
func ErrnoString(e uint64) string {
	p := &printer{}
	p.errnoText(e)
	return string(p.b)
}

// errno prints a failed call's result: "-1 ENOENT (No such file or
// directory)", or "? ERESTARTSYS (...)" for the kernel's restart codes.
func (p *printer) errno(e uint64) {
	if rc, ok := restartCodes()[e]; ok {
		p.str("? ")
		p.str(rc[0])
		p.str(" (")
		p.str(rc[1])
		p.b = append(p.b, ')')
		return
	}
	p.str("-1 ")
	p.errnoText(e)
}

// errnoText prints "ENAME (Text)".
func (p *printer) errnoText(e uint64) {
	if rc, ok := restartCodes()[e]; ok {
		p.str(rc[0])
		p.str(" (")
		p.str(rc[1])
		p.b = append(p.b, ')')
		return
	}
	name := errnoName(e)
	if name == "" {
		p.str("E??? (errno ")
		p.uint(e)
		p.b = append(p.b, ')')
		return
	}
	p.str(name)
	p.str(" (")
	text, ok := errnoTexts()[e]
	if !ok {
		text = unix.Errno(e).Error()
	}
	// Go's texts are glibc's strerror with the first letter lowered.
	if text != "" && text[0] >= 'a' && text[0] <= 'z' {
		p.b = append(p.b, text[0]-'a'+'A')
		text = text[1:]
	}
	p.str(text)
	p.b = append(p.b, ')')
}
