package host

import (
	"fmt"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/waiter"
)

// notifier is the one goroutine that waits, with a Sentry-side epoll, for
// readiness of every pollable host descriptor, and wakes their queues.
type notifier struct {
	once sync.Once
	epfd int
	err  error

	mu     sync.Mutex
	queues map[int32]*waiter.Queue
}

var theNotifier notifier

func (n *notifier) start() error {
	n.once.Do(func() {
		n.epfd, n.err = unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if n.err != nil {
			n.err = fmt.Errorf("host: epoll_create1: %w", n.err)
			return
		}
		n.queues = make(map[int32]*waiter.Queue)
		go n.loop()
	})
	return n.err
}

// add watches fd, edge-triggered, waking q. EPERM means the descriptor
// cannot be polled (a regular file).
func (n *notifier) add(fd int, q *waiter.Queue) error {
	if err := n.start(); err != nil {
		return err
	}
	n.mu.Lock()
	n.queues[int32(fd)] = q
	n.mu.Unlock()
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLPRI | unix.EPOLLET, Fd: int32(fd)}
	if err := unix.EpollCtl(n.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		n.mu.Lock()
		delete(n.queues, int32(fd))
		n.mu.Unlock()
		return err
	}
	return nil
}

// remove stops watching fd (before it is closed).
func (n *notifier) remove(fd int) {
	unix.EpollCtl(n.epfd, unix.EPOLL_CTL_DEL, fd, nil)
	n.mu.Lock()
	delete(n.queues, int32(fd))
	n.mu.Unlock()
}

func (n *notifier) loop() {
	events := make([]unix.EpollEvent, 64)
	for {
		k, err := unix.EpollWait(n.epfd, events, -1)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			panic(fmt.Sprintf("host: epoll_wait: %v", err))
		}
		for _, ev := range events[:k] {
			n.mu.Lock()
			q := n.queues[ev.Fd]
			n.mu.Unlock()
			if q != nil {
				q.Notify(waiter.EventMask(ev.Events) & waiter.AllEvents)
			}
		}
	}
}
