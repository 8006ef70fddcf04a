package shim

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// stdinProcess returns the I/O of a process without a terminal whose
// stdin is a new fifo, started (its copy waits for a writer), the fifo,
// and the process's end of its stdin, which the test reads as the
// process would.
func stdinProcess(t *testing.T) (*processIO, string, *os.File) {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "stdin")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := newProcessIO(context.Background(), nil, "c", "ns", StdioSpec{Stdin: fifo})
	if err != nil {
		t.Fatal(err)
	}
	child := p.child.Stdin
	p.child.Stdin = nil
	p.childStarted()
	return p, fifo, child
}

// TestCloseStdinKeepsWrittenData checks that CloseIO after a client has
// written stdin and closed its end of the fifo hands the process all of
// it, then its end: closing the process's end at once lost what the copy
// had not moved yet.
func TestCloseStdinKeepsWrittenData(t *testing.T) {
	for i := range 20 {
		p, fifo, child := stdinProcess(t)
		// The client: write, close, then CloseIO at once.
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.WriteString("twelve bytes"); err != nil {
			t.Fatal(err)
		}
		w.Close()
		p.CloseStdin()
		got := make(chan string, 1)
		go func() {
			b, _ := io.ReadAll(child)
			got <- string(b)
		}()
		select {
		case s := <-got:
			if s != "twelve bytes" {
				t.Fatalf("run %d: the process read %q, want %q", i, s, "twelve bytes")
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("run %d: the process's stdin did not end", i)
		}
		child.Close()
		p.Close()
	}
}

// TestCloseStdinWithoutWriter checks that CloseIO before any client
// opened the fifo ends the process's stdin.
func TestCloseStdinWithoutWriter(t *testing.T) {
	p, _, child := stdinProcess(t)
	defer p.Close()
	defer child.Close()
	time.Sleep(10 * time.Millisecond) // let the copy wait for a writer
	p.CloseStdin()
	got := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(child)
		got <- err
	}()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the process's stdin did not end")
	}
}
