package sandbox

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// NewConsole makes a pseudo-terminal for a container whose process asks
// for one (process.terminal) and sends its master over the unix socket at
// consoleSocket, as runc does (one SCM_RIGHTS message whose data is the
// master's name): the caller (containerd, docker) then owns the terminal.
// rows and cols, when not zero, set its window size. It returns the
// replica, which becomes the sandbox's stdio and controlling terminal.
func NewConsole(consoleSocket string, rows, cols uint16) (*os.File, error) {
	mfd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("console: opening /dev/ptmx: %w", err)
	}
	master := os.NewFile(uintptr(mfd), "/dev/ptmx")
	defer master.Close() // the socket's receiver holds its own copy
	if err := unix.IoctlSetPointerInt(mfd, unix.TIOCSPTLCK, 0); err != nil {
		return nil, fmt.Errorf("console: unlockpt: %w", err)
	}
	n, err := unix.IoctlGetUint32(mfd, unix.TIOCGPTN)
	if err != nil {
		return nil, fmt.Errorf("console: ptsname: %w", err)
	}
	name := fmt.Sprintf("/dev/pts/%d", n)
	sfd, err := unix.Open(name, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("console: opening %s: %w", name, err)
	}
	replica := os.NewFile(uintptr(sfd), name)
	if rows != 0 || cols != 0 {
		if err := unix.IoctlSetWinsize(sfd, unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols}); err != nil {
			replica.Close()
			return nil, fmt.Errorf("console: setting the window size: %w", err)
		}
	}
	if err := sendFD(consoleSocket, master); err != nil {
		replica.Close()
		return nil, err
	}
	return replica, nil
}

// sendFD sends f over the unix stream socket at path.
func sendFD(path string, f *os.File) error {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("console socket: %w", err)
	}
	defer unix.Close(fd)
	if err := withShortPath(path, func(p string) error {
		return unix.Connect(fd, &unix.SockaddrUnix{Name: p})
	}); err != nil {
		return fmt.Errorf("connecting to the console socket %s: %w", path, err)
	}
	rights := unix.UnixRights(int(f.Fd()))
	if err := unix.Sendmsg(fd, []byte(f.Name()), rights, nil, 0); err != nil {
		return fmt.Errorf("sending the console to %s: %w", path, err)
	}
	return nil
}
