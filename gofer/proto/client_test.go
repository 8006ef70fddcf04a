package proto

import (
	"errors"
	"os"
	"reflect"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// pair returns a client and the raw Conn of its peer, which tests drive
// as a scripted gofer.
func pair(t *testing.T) (*Client, *Conn) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewClient(fds[0])
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewConn(fds[1])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Shutdown()
		s.Close()
	})
	return c, s
}

// recv reads the next request on the scripted side.
func recv(t *testing.T, s *Conn) (uint32, Message) {
	t.Helper()
	tag, m, err := s.ReadMessage(make([]byte, MaxMessage))
	if err != nil {
		t.Errorf("scripted gofer: %v", err)
		return 0, nil
	}
	return tag, m
}

func send(t *testing.T, s *Conn, tag uint32, m Message) {
	t.Helper()
	if err := s.WriteMessage(tag, m); err != nil {
		t.Errorf("scripted gofer: %v", err)
	}
}

// pipeFD returns the read end of a new pipe and the write end as a file.
func pipeFD(t *testing.T) (int, *os.File) {
	t.Helper()
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	w := os.NewFile(uintptr(p[1]), "pipe-w")
	t.Cleanup(func() { w.Close() })
	return p[0], w
}

// waitReaderClosed waits until every read end of w's pipe is closed, i.e.
// writing fails with EPIPE.
func waitReaderClosed(t *testing.T, w *os.File) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := unix.Write(int(w.Fd()), []byte{0}); err == unix.EPIPE {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("donated fd was never closed")
}

func isEIO(err error) bool { return errors.Is(err, unix.EIO) }

func TestClientCalls(t *testing.T) {
	c, s := pair(t)
	go func() {
		for i := 0; i < 7; i++ {
			tag, m := recv(t, s)
			switch m := m.(type) {
			case *Tattach:
				send(t, s, tag, &Rattach{Root: 1, Attr: sampleAttr})
			case *Twalk:
				if m.Name != "etc" || m.Dir != 1 {
					send(t, s, tag, &Rerror{Errno: uint32(unix.EBADMSG)})
					continue
				}
				send(t, s, tag, &Rwalk{Node: 2, Attr: sampleAttr})
			case *Tstat:
				send(t, s, tag, &Rerror{Errno: uint32(unix.ENOENT)})
			case *Treadlink:
				send(t, s, tag, &Rreadlink{Target: "/x"})
			case *Tstatfs:
				var sfs unix.Statfs_t
				sfs.Bsize = 512
				send(t, s, tag, &Rstatfs{Statfs: sfs})
			case *Tclose:
				send(t, s, tag, &Rclose{})
			case *Topen:
				fd, _ := pipeFD(t)
				if err := s.WriteMessage(tag, &Ropen{FD: fd}); err != nil {
					t.Error(err)
				}
				unix.Close(fd)
			}
		}
	}()
	root, attr, err := c.Attach()
	if err != nil || root != 1 || attr != sampleAttr {
		t.Fatalf("Attach = %v, %+v, %v", root, attr, err)
	}
	h, _, err := c.Walk(root, "etc")
	if err != nil || h != 2 {
		t.Fatalf("Walk = %v, %v", h, err)
	}
	if _, err := c.Stat(h); err != unix.ENOENT {
		t.Errorf("Stat error = %v, want bare ENOENT", err)
	}
	if s, err := c.Readlink(h); err != nil || s != "/x" {
		t.Errorf("Readlink = %q, %v", s, err)
	}
	if sfs, err := c.StatFS(h); err != nil || sfs.Bsize != 512 {
		t.Errorf("StatFS = %+v, %v", sfs, err)
	}
	fd, err := c.Open(h, unix.O_RDONLY)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		t.Errorf("donated fd: mode %o, %v; want a FIFO", st.Mode, err)
	}
	if fl, _ := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); fl&unix.FD_CLOEXEC == 0 {
		t.Error("donated fd is not close-on-exec")
	}
	unix.Close(fd)
	if err := c.Close(h); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestClientRejectsBadNames(t *testing.T) {
	c, _ := pair(t) // nothing answers: a request sent would hang
	tests := []struct {
		name string
		want error
	}{
		{"", unix.EINVAL},
		{".", unix.EINVAL},
		{"..", unix.EINVAL},
		{"a/b", unix.EINVAL},
		{"/", unix.EINVAL},
		{"a\x00b", unix.EINVAL},
		{string(make([]byte, NameMax+1)), unix.ENAMETOOLONG},
	}
	for _, tt := range tests {
		if _, _, err := c.Walk(1, tt.name); err != tt.want {
			t.Errorf("Walk(%q) error = %v, want %v", tt.name, err, tt.want)
		}
	}
}

func TestClientOutOfOrderResponses(t *testing.T) {
	c, s := pair(t)
	const n = 8
	go func() {
		var tags []uint32
		var nodes []Handle
		for i := 0; i < n; i++ {
			tag, m := recv(t, s)
			tags = append(tags, tag)
			nodes = append(nodes, m.(*Tstat).Node)
		}
		for i := n - 1; i >= 0; i-- {
			send(t, s, tags[i], &Rstat{Attr: Attr{Ino: uint64(nodes[i])}})
		}
	}()
	var wg sync.WaitGroup
	for i := 1; i <= n; i++ {
		wg.Go(func() {
			a, err := c.Stat(Handle(i))
			if err != nil || a.Ino != uint64(i) {
				t.Errorf("Stat(%d) = ino %d, %v", i, a.Ino, err)
			}
		})
	}
	wg.Wait()
}

func TestClientBadResponses(t *testing.T) {
	tests := []struct {
		name  string
		reply func(t *testing.T, s *Conn, tag uint32) *os.File // returns a pipe writer if an fd was donated
	}{
		{"wrong type", func(t *testing.T, s *Conn, tag uint32) *os.File {
			send(t, s, tag, &Rclose{})
			return nil
		}},
		{"undecodable", func(t *testing.T, s *Conn, tag uint32) *os.File {
			b, _ := Encode(nil, tag, &Rstat{})
			sendRaw(t, s, b[:len(b)-1], nil)
			return nil
		}},
		{"fd on a message without one", func(t *testing.T, s *Conn, tag uint32) *os.File {
			fd, w := pipeFD(t)
			b, _ := Encode(nil, tag, &Rstat{})
			sendRaw(t, s, b, unix.UnixRights(fd))
			unix.Close(fd)
			return w
		}},
		{"two fds", func(t *testing.T, s *Conn, tag uint32) *os.File {
			fd, w := pipeFD(t)
			b, _ := Encode(nil, tag, &Rstat{})
			sendRaw(t, s, b, unix.UnixRights(fd, fd))
			unix.Close(fd)
			return w
		}},
		{"oversized", func(t *testing.T, s *Conn, tag uint32) *os.File {
			b, _ := Encode(nil, tag, &Rstat{})
			sendRaw(t, s, append(b, make([]byte, MaxMessage)...), nil)
			return nil
		}},
		{"Ropen when Rstat expected", func(t *testing.T, s *Conn, tag uint32) *os.File {
			fd, w := pipeFD(t)
			send(t, s, tag, &Ropen{FD: fd})
			unix.Close(fd)
			return w
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, s := pair(t)
			done := make(chan *os.File, 1)
			go func() {
				tag, _ := recv(t, s)
				done <- tt.reply(t, s, tag)
			}()
			_, err := c.Stat(1)
			if !isEIO(err) {
				t.Fatalf("Stat error = %v, want EIO", err)
			}
			if w := <-done; w != nil {
				waitReaderClosed(t, w)
			}
			// The connection still works.
			go func() {
				tag, _ := recv(t, s)
				send(t, s, tag, &Rstat{Attr: Attr{Ino: 5}})
			}()
			if a, err := c.Stat(1); err != nil || a.Ino != 5 {
				t.Fatalf("Stat after bad response = %+v, %v", a, err)
			}
		})
	}
}

func sendRaw(t *testing.T, s *Conn, b, oob []byte) {
	t.Helper()
	err := s.rc.Write(func(fd uintptr) bool {
		err := unix.Sendmsg(int(fd), b, oob, nil, unix.MSG_NOSIGNAL)
		if err != nil && err != unix.EAGAIN {
			t.Errorf("sendmsg: %v", err)
		}
		return err != unix.EAGAIN
	})
	if err != nil {
		t.Error(err)
	}
}

func TestClientUnaskedFDClosed(t *testing.T) {
	c, s := pair(t)
	fd, w := pipeFD(t)
	send(t, s, 12345, &Ropen{FD: fd}) // no call has this tag
	unix.Close(fd)
	waitReaderClosed(t, w)
	_ = c
}

func TestClientGoferHangsUp(t *testing.T) {
	c, s := pair(t)
	errc := make(chan error, 1)
	go func() {
		_, err := c.Stat(1)
		errc <- err
	}()
	recv(t, s)
	s.Close()
	if err := <-errc; !isEIO(err) {
		t.Errorf("pending Stat error = %v, want EIO", err)
	}
	if _, err := c.Stat(1); !isEIO(err) {
		t.Errorf("later Stat error = %v, want EIO", err)
	}
	var errno unix.Errno
	if _, err := c.Stat(1); !errors.As(err, &errno) {
		t.Errorf("error %v does not hold a unix.Errno", err)
	}
}

func TestClientShutdown(t *testing.T) {
	c, s := pair(t)
	errc := make(chan error, 1)
	go func() {
		_, err := c.Stat(1)
		errc <- err
	}()
	recv(t, s)
	c.Shutdown()
	c.Shutdown() // idempotent
	if err := <-errc; !isEIO(err) {
		t.Errorf("pending Stat error = %v, want EIO", err)
	}
	if _, _, err := c.Attach(); !isEIO(err) {
		t.Errorf("Attach after Shutdown error = %v, want EIO", err)
	}
	// The peer sees the hang-up.
	if _, _, err := s.ReadMessage(make([]byte, MaxMessage)); err == nil {
		t.Error("peer read a message after Shutdown")
	}
}

func TestClientGetdentsPaging(t *testing.T) {
	c, s := pair(t)
	pages := []*Rgetdents{
		{Next: 10, Entries: []Dirent{{Name: "a", Ino: 1, Type: unix.DT_REG}}},
		{Next: 20, Entries: []Dirent{{Name: "b", Ino: 2, Type: unix.DT_DIR}, {Name: "c", Ino: 3}}},
		{Next: 30, EOF: true},
	}
	go func() {
		want := uint64(0)
		for _, p := range pages {
			tag, m := recv(t, s)
			if off := m.(*Tgetdents).Offset; off != want {
				t.Errorf("Tgetdents offset = %d, want %d", off, want)
			}
			send(t, s, tag, p)
			want = p.Next
		}
	}()
	got, err := c.Getdents(1)
	if err != nil {
		t.Fatal(err)
	}
	want := append(append([]Dirent{}, pages[0].Entries...), pages[1].Entries...)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Getdents = %+v, want %+v", got, want)
	}

	// A page that is empty but not the end would loop forever.
	go func() {
		tag, _ := recv(t, s)
		send(t, s, tag, &Rgetdents{Next: 0})
	}()
	if _, err := c.Getdents(1); !isEIO(err) {
		t.Errorf("Getdents with empty page: error = %v, want EIO", err)
	}
}

func TestNewClientRejectsStream(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[1])
	if _, err := NewClient(fds[0]); err == nil {
		t.Fatal("NewClient accepted a SOCK_STREAM socket")
	}
	if _, err := unix.FcntlInt(uintptr(fds[0]), unix.F_GETFD, 0); err != unix.EBADF {
		t.Errorf("NewClient did not close the fd it refused: %v", err)
	}
}

func TestClientConcurrent(t *testing.T) {
	c, s := pair(t)
	go func() {
		buf := make([]byte, MaxMessage)
		for {
			tag, m, err := s.ReadMessage(buf)
			if err != nil {
				return
			}
			go send(t, s, tag, &Rstat{Attr: Attr{Ino: uint64(m.(*Tstat).Node)}})
		}
	}()
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Go(func() {
			for i := 0; i < 200; i++ {
				h := Handle(g*1000 + i)
				a, err := c.Stat(h)
				if err != nil || a.Ino != uint64(h) {
					t.Errorf("Stat(%d) = %d, %v", h, a.Ino, err)
					return
				}
			}
		})
	}
	wg.Wait()
}
