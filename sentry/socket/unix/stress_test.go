package unix

import (
	"fmt"
	"math/rand"
	"sync"
	"testing"
	"time"

	sys "golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/socket"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

// TestConcurrentOperations runs sends, receives, polls, shutdowns,
// connects, accepts and closes on shared sockets from many goroutines at
// once: under -race it finds data races, and a deadlock hangs the test.
func TestConcurrentOperations(t *testing.T) {
	ctx := newCtx()
	ns := NewNamespace()
	const workers = 8
	deadline := time.Now().Add(500 * time.Millisecond)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(seed int64) {
			defer wg.Done()
			r := rand.New(rand.NewSource(seed))
			types := []int{sys.SOCK_STREAM, sys.SOCK_DGRAM, sys.SOCK_SEQPACKET}
			for time.Now().Before(deadline) {
				typ := types[r.Intn(len(types))]
				fa, fb := NewPair(ctx, ns, typ, sys.O_NONBLOCK)
				a, b := fa.Impl().(*Socket), fb.Impl().(*Socket)
				var inner sync.WaitGroup
				for _, s := range []*Socket{a, b} {
					inner.Add(1)
					go func(s *Socket, seed int64) {
						defer inner.Done()
						r := rand.New(rand.NewSource(seed))
						buf := make([]byte, 64)
						for i := 0; i < 50; i++ {
							switch r.Intn(6) {
							case 0, 1:
								o := socket.SendOptions{}
								if r.Intn(4) == 0 {
									fa.IncRef()
									o.Control.Rights = []*fs.FileDescription{fa}
								}
								s.SendMsg(ctx, buf[:r.Intn(64)], o)
							case 2, 3:
								res, _ := s.RecvMsg(ctx, buf, socket.RecvOptions{Flags: r.Intn(2) * sys.MSG_PEEK})
								res.Control.Release()
							case 4:
								s.Readiness(waiter.AllEvents)
							case 5:
								s.Shutdown(ctx, r.Intn(3))
							}
						}
					}(s, r.Int63())
				}
				inner.Wait()
				fa.DecRef()
				fb.DecRef()

				name := abstract(fmt.Sprintf("l%d", seed))
				lf := New(ctx, ns, sys.SOCK_STREAM, 0)
				l := lf.Impl().(*Socket)
				if err := l.Bind(ctx, name); err == nil {
					l.Listen(ctx, r.Intn(3))
					var clients []*fs.FileDescription
					for i := 0; i < 4; i++ {
						cf := New(ctx, ns, sys.SOCK_STREAM, 0)
						cf.Impl().(*Socket).Connect(ctx, name, false)
						clients = append(clients, cf)
						if r.Intn(2) == 0 {
							if af, _, err := l.Accept(ctx, 0, false); err == nil {
								af.Impl().(*Socket).SendMsg(ctx, []byte("hi"), socket.SendOptions{})
								af.DecRef()
							}
						}
					}
					lf.DecRef()
					for _, cf := range clients {
						cf.Impl().(*Socket).RecvMsg(ctx, make([]byte, 8), socket.RecvOptions{})
						cf.DecRef()
					}
				} else {
					lf.DecRef()
				}
			}
		}(int64(w))
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("workers did not finish: deadlock?")
	}
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if len(ns.abstract) != 0 {
		t.Errorf("abstract names left after every socket closed: %v", ns.abstract)
	}
}
