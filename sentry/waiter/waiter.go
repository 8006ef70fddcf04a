// Package waiter lets a blocking operation wait for readiness events on
// objects such as pipes, eventfds, epoll instances and sockets.
//
// An object that can become ready embeds a Queue and calls Notify when its
// readiness changes; a waiter registers an Entry on the Queue and is called
// back (usually by a non-blocking send on a channel) when an event in its
// mask fires. Queue has one lock, mu; callbacks run with it held and must not
// block or take locks that are held while calling Notify's caller.
package waiter

import "sync"

// EventMask is a set of readiness events, with the bit values of poll(2).
type EventMask uint64

// Events, with the values Linux gives POLLIN and friends.
const (
	EventIn     EventMask = 0x001 // POLLIN
	EventPri    EventMask = 0x002 // POLLPRI
	EventOut    EventMask = 0x004 // POLLOUT
	EventErr    EventMask = 0x008 // POLLERR
	EventHUp    EventMask = 0x010 // POLLHUP
	EventNVal   EventMask = 0x020 // POLLNVAL
	EventRdNorm EventMask = 0x040 // POLLRDNORM
	EventRdBand EventMask = 0x080 // POLLRDBAND
	EventWrNorm EventMask = 0x100 // POLLWRNORM
	EventWrBand EventMask = 0x200 // POLLWRBAND
	EventMsg    EventMask = 0x400 // POLLMSG
	EventRdHUp  EventMask = 0x2000

	// AllEvents is every event a waiter can ask for.
	AllEvents EventMask = 0x3fff
)

// Waitable is implemented by objects that can report readiness.
type Waitable interface {
	// Readiness returns the subset of mask that is ready now.
	Readiness(mask EventMask) EventMask
	// EventRegister adds e to the object's queue.
	EventRegister(e *Entry)
	// EventUnregister removes e from the object's queue.
	EventUnregister(e *Entry)
}

// Entry is one registration on a Queue.
type Entry struct {
	// Mask is the set of events the entry is interested in. Err and HUp are
	// always delivered.
	Mask EventMask
	// Callback is called, with the queue's lock held, with the events that
	// fired. It must not block.
	Callback func(e *Entry, fired EventMask)

	q          *Queue
	prev, next *Entry
}

// NewChannelEntry returns an entry that sends on the returned channel (of
// capacity one, never blocking) when an event in mask fires.
func NewChannelEntry(mask EventMask) (*Entry, chan struct{}) {
	ch := make(chan struct{}, 1)
	e := &Entry{Mask: mask, Callback: func(*Entry, EventMask) {
		select {
		case ch <- struct{}{}:
		default:
		}
	}}
	return e, ch
}

// Queue is a list of waiters. The zero value is an empty queue.
type Queue struct {
	mu         sync.Mutex
	head, tail *Entry
}

// EventRegister adds e to q. An entry can be on one queue at a time.
func (q *Queue) EventRegister(e *Entry) {
	q.mu.Lock()
	e.q = q
	e.next = nil
	e.prev = q.tail
	if q.tail != nil {
		q.tail.next = e
	} else {
		q.head = e
	}
	q.tail = e
	q.mu.Unlock()
}

// EventUnregister removes e from q. It is a no-op if e is not on q.
func (q *Queue) EventUnregister(e *Entry) {
	q.mu.Lock()
	if e.q == q {
		if e.prev != nil {
			e.prev.next = e.next
		} else {
			q.head = e.next
		}
		if e.next != nil {
			e.next.prev = e.prev
		} else {
			q.tail = e.prev
		}
		e.prev, e.next, e.q = nil, nil, nil
	}
	q.mu.Unlock()
}

// Notify calls back every entry whose mask intersects mask. EventErr and
// EventHUp reach every entry.
func (q *Queue) Notify(mask EventMask) {
	q.mu.Lock()
	for e := q.head; e != nil; e = e.next {
		if fired := mask & (e.Mask | EventErr | EventHUp); fired != 0 {
			e.Callback(e, fired)
		}
	}
	q.mu.Unlock()
}

// IsEmpty reports whether q has no entries.
func (q *Queue) IsEmpty() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.head == nil
}
