package isolate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/moat-sandbox/moat/gofer"
	"github.com/moat-sandbox/moat/gofer/proto"
	"golang.org/x/sys/unix"
)

func init() { children["gofer-write"] = childGoferWrite }

// TestGoferWriteFilter runs a read-write gofer under its filter in kill
// mode and makes every kind of change through it: a call missing from the
// allowlist kills the child.
func TestGoferWriteFilter(t *testing.T) {
	ws, out := runChild(t, "gofer-write", nil)
	if m := regexp.MustCompile(`dir=(\S+)`).FindStringSubmatch(out); m != nil {
		os.RemoveAll(m[1])
	}
	wantExit0(t, ws, out)
}

func childGoferWrite() error {
	dir, err := os.MkdirTemp("", "moat-gofer-write-")
	if err != nil {
		return err
	}
	fmt.Printf("dir=%s\n", dir)
	if err := os.WriteFile(filepath.Join(dir, "file"), []byte("content"), 0644); err != nil {
		return err
	}
	// A listener to connect to (listen is no gofer call).
	lfd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	if err := unix.Bind(lfd, &unix.SockaddrUnix{Name: filepath.Join(dir, "listener")}); err != nil {
		return err
	}
	if err := unix.Listen(lfd, 8); err != nil {
		return err
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	srv, err := gofer.NewServer(dir, false)
	if err != nil {
		return err
	}
	srv.AllowHostUDS()
	if err := Install(GoferWriteFilter(ModeKill, os.Getpid())); err != nil {
		return err
	}
	go srv.ServeConn(fds[0])
	c, err := proto.NewClient(fds[1])
	if err != nil {
		return err
	}
	root, _, err := c.Attach()
	if err != nil {
		return err
	}
	const no = proto.NoID
	steps := []struct {
		name string
		do   func() error
	}{
		{"create", func() error {
			_, _, fd, err := c.Create(root, "new", unix.O_RDWR, 0600, 0, 0)
			if err == nil {
				unix.Close(fd)
			}
			return err
		}},
		{"mkdir", func() error { _, _, err := c.Mkdir(root, "d", 0700, 0, 0); return err }},
		{"mknod", func() error { _, _, err := c.Mknod(root, "fifo", unix.S_IFIFO|0600, no, no); return err }},
		{"mknod device", func() error {
			_, _, err := c.Mknod(root, "null", unix.S_IFCHR|0600, no, no)
			if err != unix.EPERM {
				return fmt.Errorf("got %v, want EPERM", err)
			}
			return nil
		}},
		{"symlink", func() error { _, _, err := c.Symlink(root, "l", "new", 0, 0); return err }},
		{"link", func() error {
			h, _, err := c.Walk(root, "file")
			if err == nil {
				_, _, err = c.Link(root, "hard", h)
			}
			return err
		}},
		{"rename", func() error { return c.Rename(root, "hard", root, "hard2", unix.RENAME_NOREPLACE) }},
		{"open write", func() error {
			h, _, err := c.Walk(root, "file")
			if err != nil {
				return err
			}
			fd, err := c.Open(h, unix.O_RDWR|unix.O_TRUNC|unix.O_APPEND)
			if err == nil {
				unix.Close(fd)
			}
			return err
		}},
		{"setattr", func() error {
			h, _, err := c.Walk(root, "file")
			if err != nil {
				return err
			}
			_, err = c.Setattr(proto.Tsetattr{Node: h, Mask: proto.SetattrMode | proto.SetattrUID |
				proto.SetattrGID | proto.SetattrSize | proto.SetattrAtime | proto.SetattrMtime,
				Mode: 0640, Size: 10, Mtime: unix.Timespec{Nsec: unix.UTIME_NOW}})
			return err
		}},
		{"xattrs", func() error {
			h, _, err := c.Walk(root, "file")
			if err != nil {
				return err
			}
			if err := c.Setxattr(h, "user.a", "v", 0); err != nil && err != unix.EOPNOTSUPP {
				return err
			}
			if _, err := c.Getxattr(h, "user.a"); err != nil && err != unix.EOPNOTSUPP {
				return err
			}
			if _, err := c.Listxattr(h); err != nil {
				return err
			}
			if err := c.Removexattr(h, "user.a"); err != nil && err != unix.EOPNOTSUPP {
				return err
			}
			return nil
		}},
		{"fsync fallocate", func() error {
			h, _, err := c.Walk(root, "file")
			if err != nil {
				return err
			}
			if err := c.Fsync(h, true); err != nil {
				return err
			}
			return c.Fallocate(h, 0, 0, 4096)
		}},
		{"bind", func() error {
			_, _, fd, err := c.Bind(root, "sock", unix.SOCK_DGRAM, 0700, no, no)
			if err == nil {
				unix.Close(fd)
			}
			return err
		}},
		{"connect", func() error {
			fd, err := c.Connect(root, "listener", unix.SOCK_STREAM)
			if err == nil {
				unix.Close(fd)
			}
			return err
		}},
		{"tmpfile", func() error {
			h, _, fd, err := c.Tmpfile(root, unix.O_RDWR, 0600, 0, 0)
			if err != nil {
				return err
			}
			unix.Close(fd)
			_, _, err = c.Link(root, "was-tmp", h)
			return err
		}},
		{"unlink", func() error { return c.Unlink(root, "hard2", 0) }},
		{"rmdir", func() error { return c.Unlink(root, "d", unix.AT_REMOVEDIR) }},
	}
	var errs []error
	for _, s := range steps {
		if err := s.do(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.name, err))
		}
	}
	c.Shutdown()
	return errors.Join(errs...)
}
