// Package gofertest serves a gofer.Server in-process for tests: the
// socket pair, the serving goroutine, the client, and the shutdown at the
// test's end, which every test of a gofer-backed file system needs.
package gofertest

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/gofer"
	"github.com/moat-sandbox/moat/gofer/proto"
)

// Serve serves srv on one end of a new SOCK_SEQPACKET pair and returns a
// client on the other. When the test ends, the client shuts down, the
// serving goroutine is waited for and srv is closed.
func Serve(t testing.TB, srv *gofer.Server) *proto.Client {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		srv.Close()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		srv.ServeConn(fds[1])
		close(done)
	}()
	client, err := proto.NewClient(fds[0])
	if err != nil {
		unix.Close(fds[0])
		<-done
		srv.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		client.Shutdown()
		<-done
		srv.Close()
	})
	return client
}

// ServeDir serves the tree at dir, read-only if readOnly, as Serve.
func ServeDir(t testing.TB, dir string, readOnly bool) *proto.Client {
	t.Helper()
	srv, err := gofer.NewServer(dir, readOnly)
	if err != nil {
		t.Fatal(err)
	}
	return Serve(t, srv)
}
