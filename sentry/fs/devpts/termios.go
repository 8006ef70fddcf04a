package devpts

import (
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// termiosSize is the size of the kernel's struct termios.
const termiosSize = 36

// Termios is struct termios: the terminal's modes.
type Termios struct {
	Iflag, Oflag, Cflag, Lflag uint32
	Line                       uint8
	CC                         [19]uint8
}

// defaultTermios is what a new pseudo-terminal starts with (Linux's
// tty_std_termios).
func defaultTermios() Termios {
	t := Termios{
		Iflag: unix.ICRNL | unix.IXON,
		Oflag: unix.OPOST | unix.ONLCR,
		Cflag: unix.B38400 | unix.CS8 | unix.CREAD | unix.HUPCL,
		Lflag: unix.ISIG | unix.ICANON | unix.ECHO | unix.ECHOE | unix.ECHOK | unix.ECHOCTL | unix.ECHOKE | unix.IEXTEN,
	}
	cc := map[int]uint8{
		unix.VINTR: 3, unix.VQUIT: 0x1c, unix.VERASE: 0x7f, unix.VKILL: 0x15, unix.VEOF: 4,
		unix.VMIN: 1, unix.VSTART: 0x11, unix.VSTOP: 0x13, unix.VSUSP: 0x1a, unix.VREPRINT: 0x12,
		unix.VDISCARD: 0xf, unix.VWERASE: 0x17, unix.VLNEXT: 0x16,
	}
	for i, v := range cc {
		t.CC[i] = v
	}
	return t
}

func (t *Termios) marshal() []byte {
	b := make([]byte, 0, termiosSize)
	b = binary.LittleEndian.AppendUint32(b, t.Iflag)
	b = binary.LittleEndian.AppendUint32(b, t.Oflag)
	b = binary.LittleEndian.AppendUint32(b, t.Cflag)
	b = binary.LittleEndian.AppendUint32(b, t.Lflag)
	b = append(b, t.Line)
	return append(b, t.CC[:]...)
}

func unmarshalTermios(b []byte) Termios {
	t := Termios{
		Iflag: binary.LittleEndian.Uint32(b[0:]),
		Oflag: binary.LittleEndian.Uint32(b[4:]),
		Cflag: binary.LittleEndian.Uint32(b[8:]),
		Lflag: binary.LittleEndian.Uint32(b[12:]),
		Line:  b[16],
	}
	copy(t.CC[:], b[17:termiosSize])
	return t
}
