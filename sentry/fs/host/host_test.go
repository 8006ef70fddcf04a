package host

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
	"github.com/moat-sandbox/moat/sentry/syserror"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

func hostPipe(t *testing.T) (r, w *fs.FileDescription) {
	t.Helper()
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	r, err := NewFile(p[0], Options{})
	if err != nil {
		t.Fatal(err)
	}
	w, err = NewFile(p[1], Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r, w
}

func TestHostPipe(t *testing.T) {
	ctx := fstest.NewContext()
	r, w := hostPipe(t)
	defer r.DecRef()
	if !r.Readable() || r.Writable() || !w.Writable() {
		t.Fatal("access modes not taken from the host descriptor")
	}
	if st, _ := r.Stat(ctx); st.Type() != unix.S_IFIFO {
		t.Fatalf("mode %#o", st.Mode)
	}
	if r.Readiness(waiter.EventIn) != 0 {
		t.Fatal("empty pipe readable")
	}
	// Reopening (as /proc/self/fd/N does) gives a working description.
	if _, err := r.Dentry().Node().(fs.OpenNode).Open(ctx, r.VirtualDentry(), unix.O_WRONLY); err != unix.EACCES {
		t.Fatalf("reopen of read end for writing = %v, want EACCES", err)
	}
	w2, err := w.Dentry().Node().(fs.OpenNode).Open(ctx, w.VirtualDentry(), unix.O_WRONLY)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := mustStat(t, w), mustStat(t, w2); a.Ino != b.Ino {
		t.Errorf("reopen changed the inode number: %d vs %d", a.Ino, b.Ino)
	}
	w2.Write(ctx, []byte("re"))
	w2.DecRef()
	if n, _ := r.Read(ctx, make([]byte, 8)); n != 2 {
		t.Fatalf("read %d bytes written through the reopened end", n)
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		w.Write(ctx, []byte("from host"))
	}()
	buf := make([]byte, 32)
	n, err := fs.ReadBlocking(ctx, r, buf)
	if err != nil || string(buf[:n]) != "from host" {
		t.Fatalf("ReadBlocking = %q, %v", buf[:n], err)
	}
	if _, err := r.Read(ctx, buf); err != syserror.ErrWouldBlock {
		t.Fatalf("empty read = %v", err)
	}
	w.Write(ctx, []byte("abc"))
	if _, err := r.Ioctl(ctx, unix.TIOCINQ, fstest.MemBase); err != nil {
		t.Fatal(err)
	}
	var b [4]byte
	ctx.CopyInBytes(fstest.MemBase, b[:])
	if binary.LittleEndian.Uint32(b[:]) != 3 {
		t.Fatalf("FIONREAD = %v", b)
	}
	if _, err := r.Ioctl(ctx, unix.TCGETS, fstest.MemBase); err != unix.ENOTTY {
		t.Fatalf("TCGETS on pipe = %v", err)
	}
	w.DecRef()
	r.Read(ctx, buf)
	if n, err := r.Read(ctx, buf); n != 0 || err != nil {
		t.Fatalf("EOF read = %d, %v", n, err)
	}
	if r.Readiness(waiter.EventIn)&waiter.EventHUp == 0 {
		t.Fatal("no HUP after writer closed")
	}
}

func TestHostRegularFile(t *testing.T) {
	ctx := fstest.NewContext()
	p := filepath.Join(t.TempDir(), "out")
	hfd, err := unix.Open(p, unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	unix.Write(hfd, []byte("12345"))
	f, err := NewFile(hfd, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.DecRef()
	if f.Pollable() {
		t.Error("regular host file pollable")
	}
	if f.Offset() != 5 {
		t.Errorf("initial offset %d, want the host's 5", f.Offset())
	}
	f.Write(ctx, []byte("678"))
	// A duplicate of the host descriptor (stderr of "cmd >f 2>&1") shares
	// the offset.
	dup, err := unix.Dup(hfd)
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewFile(dup, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.DecRef()
	g.Write(ctx, []byte("9"))
	f.Write(ctx, []byte("0"))
	if data, _ := os.ReadFile(p); string(data) != "1234567890" {
		t.Errorf("file = %q", data)
	}
	if off, err := f.Seek(ctx, 0, unix.SEEK_SET); off != 0 || err != nil || g.Offset() != 0 {
		t.Errorf("seek = %d, %v; dup offset %d", off, err, g.Offset())
	}
	buf := make([]byte, 4)
	if n, _ := f.PRead(ctx, buf, 2); string(buf[:n]) != "3456" {
		t.Errorf("pread %q", buf[:n])
	}
}

func TestHostTTY(t *testing.T) {
	ctx := fstest.NewContext()
	master, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no ptmx: %v", err)
	}
	defer unix.Close(master)
	if err := unix.IoctlSetPointerInt(master, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(master, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	slave, err := unix.Open(filepath.Join("/dev/pts", strconv.Itoa(n)), unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	unix.IoctlSetWinsize(master, unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 80})
	f, err := NewFile(slave, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.DecRef()
	if st, _ := f.Stat(ctx); st.Type() != unix.S_IFCHR {
		t.Errorf("tty mode %#o", st.Mode)
	}
	if _, err := f.Ioctl(ctx, unix.TIOCGWINSZ, fstest.MemBase); err != nil {
		t.Fatal(err)
	}
	var ws [8]byte
	ctx.CopyInBytes(fstest.MemBase, ws[:])
	if binary.LittleEndian.Uint16(ws[0:]) != 24 || binary.LittleEndian.Uint16(ws[2:]) != 80 {
		t.Errorf("winsize %v", ws)
	}
	if _, err := f.Ioctl(ctx, unix.TCGETS, fstest.MemBase); err != nil {
		t.Fatal(err)
	}
	tio := make([]byte, termiosSize)
	ctx.CopyInBytes(fstest.MemBase, tio)
	tio[12] &^= byte(unix.ECHO) // clear ECHO in c_lflag
	ctx.CopyOutBytes(fstest.MemBase, tio)
	if _, err := f.Ioctl(ctx, unix.TCSETS, fstest.MemBase); err != nil {
		t.Fatal(err)
	}
	if got, _ := unix.IoctlGetTermios(master, unix.TCGETS); got.Lflag&unix.ECHO != 0 {
		t.Error("TCSETS did not reach the host tty")
	}
	ctx.CopyOutBytes(fstest.MemBase, []byte{7, 0, 0, 0})
	if _, err := f.Ioctl(ctx, unix.TIOCSPGRP, fstest.MemBase); err != nil {
		t.Fatal(err)
	}
	if f.Impl().(*File).TTY().ForegroundPgrp() != 7 {
		t.Error("TIOCSPGRP not kept")
	}
	// Output reaches the master.
	if n, err := fs.WriteBlocking(ctx, f, []byte("hi\n")); n != 3 || err != nil {
		t.Fatalf("write = %d, %v", n, err)
	}
}

func mustStat(t *testing.T, f *fs.FileDescription) fs.Stat {
	t.Helper()
	st, err := f.Stat(fstest.NewContext())
	if err != nil {
		t.Fatal(err)
	}
	return st
}
