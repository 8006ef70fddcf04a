package futex

import (
	"fmt"
	"time"
)

// The kernel's FUTEX_WAIT: queue, block until woken, timed out or
// interrupted, then dequeue and ask whether a wake ended the wait.
func ExampleManager_WaitPrepare() {
	m := NewManager()
	as := newFakeAS(1, 0x10000, 0x1000) // the task's address space
	const addr = 0x10040
	w := NewWaiter() // one per task, reused

	// Another thread wakes us soon.
	go func() {
		time.Sleep(time.Millisecond)
		for {
			if n, _ := m.Wake(as, addr, true, BitsetMatchAny, 1); n == 1 {
				return
			}
		}
	}()

	if err := m.WaitPrepare(w, as, addr, true, 0, BitsetMatchAny); err != nil {
		fmt.Println(err) // EAGAIN if *addr != 0: return it to the application
		return
	}
	interrupt := make(chan struct{}) // the task's signal channel
	select {
	case <-w.C:
	case <-time.After(10 * time.Second): // the timeout, if any
	case <-interrupt:
	}
	m.WaitComplete(w)
	if w.Woken() {
		fmt.Println("woken: futex returns 0")
	} else {
		fmt.Println("not woken: ETIMEDOUT, or ERESTARTSYS for a signal")
	}
	// Output: woken: futex returns 0
}
