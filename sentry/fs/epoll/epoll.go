// Package epoll implements epoll instances (epoll_create1, epoll_ctl,
// epoll_wait): interest lists of (file, descriptor) pairs, level- and
// edge-triggered reporting, EPOLLONESHOT, nested epoll instances with
// Linux's loop and depth checks, and removal of a file from every interest
// list when its last reference goes.
//
// Lock order: EventPoll.mu (interest list; held while asking targets for
// readiness), then a target's own locks, then waiter.Queue.mu of a target,
// then EventPoll.readyMu (the ready list, taken by wake-up callbacks).
// Nested instances: the outer's mu before the inner's.
package epoll

import (
	"encoding/binary"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/waiter"
)

// Event is one struct epoll_event.
type Event struct {
	Events uint32
	Data   uint64
}

// Control bits of an event mask that are not readiness events.
const (
	privateBits   = unix.EPOLLWAKEUP | unix.EPOLLONESHOT | unix.EPOLLET | unix.EPOLLEXCLUSIVE
	exclusiveOK   = unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLERR | unix.EPOLLHUP | unix.EPOLLWAKEUP | unix.EPOLLET | unix.EPOLLEXCLUSIVE
	maxNests      = 4
	readinessBits = ^uint32(privateBits)
)

type key struct {
	file *fs.FileDescription
	fd   int32
}

type item struct {
	ep     *EventPoll
	key    key
	events atomic.Uint32
	data   atomic.Uint64
	entry  waiter.Entry

	// Guarded by ep.readyMu.
	ready      bool
	prev, next *item
}

// EventPoll is an epoll instance.
type EventPoll struct {
	fs.FileDefaults
	queue waiter.Queue

	// params are the busy-poll parameters of EPIOCSPARAMS (struct
	// epoll_params), kept for EPIOCGPARAMS; the Sentry does not busy
	// poll. Guarded by mu.
	params [8]byte

	mu    sync.Mutex
	items map[key]*item

	readyMu    sync.Mutex
	head, tail *item
}

// New returns a new epoll file (flags: 0 or EPOLL_CLOEXEC, which the
// caller applies).
func New() *fs.FileDescription {
	ep := &EventPoll{items: make(map[key]*item)}
	return fs.NewAnonFile("eventpoll", ep, unix.O_RDWR, fs.FDOptions{Stream: true})
}

// FromFile returns the epoll instance of f, or nil if f is not one.
func FromFile(f *fs.FileDescription) *EventPoll {
	ep, _ := f.Impl().(*EventPoll)
	return ep
}

// Preconditions: ep.readyMu is locked.
func (ep *EventPoll) pushReady(it *item) {
	if it.ready {
		return
	}
	it.ready = true
	it.prev, it.next = ep.tail, nil
	if ep.tail != nil {
		ep.tail.next = it
	} else {
		ep.head = it
	}
	ep.tail = it
}

// pushReadyFront is pushReady at the head of the list.
//
// Preconditions: ep.readyMu is locked.
func (ep *EventPoll) pushReadyFront(it *item) {
	if it.ready {
		return
	}
	it.ready = true
	it.prev, it.next = nil, ep.head
	if ep.head != nil {
		ep.head.prev = it
	} else {
		ep.tail = it
	}
	ep.head = it
}

// Preconditions: ep.readyMu is locked.
func (ep *EventPoll) removeReady(it *item) {
	if !it.ready {
		return
	}
	if it.prev != nil {
		it.prev.next = it.next
	} else {
		ep.head = it.next
	}
	if it.next != nil {
		it.next.prev = it.prev
	} else {
		ep.tail = it.prev
	}
	it.ready, it.prev, it.next = false, nil, nil
}

func (ep *EventPoll) markReady(it *item) {
	if it.events.Load()&readinessBits == 0 {
		return // EPOLLONESHOT already fired
	}
	ep.readyMu.Lock()
	ep.pushReady(it)
	ep.readyMu.Unlock()
	ep.queue.Notify(waiter.EventIn | waiter.EventRdNorm)
}

func waiterMask(events uint32) waiter.EventMask {
	return waiter.EventMask(events&readinessBits) | waiter.EventErr | waiter.EventHUp
}

// reaches reports whether target's interest lists lead to ep, or nest too
// deep.
func (ep *EventPoll) reaches(target *EventPoll, depth int) bool {
	if target == ep || depth > maxNests {
		return true
	}
	target.mu.Lock()
	var inner []*EventPoll
	for k := range target.items {
		if e := FromFile(k.file); e != nil {
			inner = append(inner, e)
		}
	}
	target.mu.Unlock()
	for _, e := range inner {
		if ep.reaches(e, depth+1) {
			return true
		}
	}
	return false
}

// Add implements EPOLL_CTL_ADD of file (open as descriptor fd).
func (ep *EventPoll) Add(ctx fs.Context, fd int32, file *fs.FileDescription, ev Event) error {
	if !file.Pollable() {
		return unix.EPERM
	}
	events := ev.Events
	if events&unix.EPOLLWAKEUP != 0 && !ctx.Credentials().HasCapability(unix.CAP_BLOCK_SUSPEND) {
		events &^= unix.EPOLLWAKEUP
	}
	target := FromFile(file)
	if events&unix.EPOLLEXCLUSIVE != 0 && (target != nil || events&^exclusiveOK != 0) {
		return unix.EINVAL
	}
	if target != nil && ep.reaches(target, 1) {
		return unix.ELOOP
	}
	events |= unix.EPOLLERR | unix.EPOLLHUP
	k := key{file, fd}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if _, ok := ep.items[k]; ok {
		return unix.EEXIST
	}
	it := &item{ep: ep, key: k}
	it.events.Store(events)
	it.data.Store(ev.Data)
	it.entry.Mask = waiterMask(events)
	it.entry.Callback = func(*waiter.Entry, waiter.EventMask) { ep.markReady(it) }
	ep.items[k] = it
	file.EventRegister(&it.entry)
	file.AddReleaseHook(it, func() { ep.forget(it) })
	if file.Readiness(waiterMask(events)) != 0 {
		ep.markReady(it)
	}
	return nil
}

// Modify implements EPOLL_CTL_MOD.
func (ep *EventPoll) Modify(ctx fs.Context, fd int32, file *fs.FileDescription, ev Event) error {
	events := ev.Events
	if events&unix.EPOLLEXCLUSIVE != 0 {
		return unix.EINVAL
	}
	if events&unix.EPOLLWAKEUP != 0 && !ctx.Credentials().HasCapability(unix.CAP_BLOCK_SUSPEND) {
		events &^= unix.EPOLLWAKEUP
	}
	events |= unix.EPOLLERR | unix.EPOLLHUP
	ep.mu.Lock()
	defer ep.mu.Unlock()
	it, ok := ep.items[key{file, fd}]
	if !ok {
		return unix.ENOENT
	}
	if it.events.Load()&unix.EPOLLEXCLUSIVE != 0 {
		return unix.EINVAL
	}
	file.EventUnregister(&it.entry)
	it.events.Store(events)
	it.data.Store(ev.Data)
	it.entry.Mask = waiterMask(events)
	file.EventRegister(&it.entry)
	if file.Readiness(waiterMask(events)) != 0 {
		ep.markReady(it)
	}
	return nil
}

// Delete implements EPOLL_CTL_DEL.
func (ep *EventPoll) Delete(fd int32, file *fs.FileDescription) error {
	ep.mu.Lock()
	it, ok := ep.items[key{file, fd}]
	if !ok {
		ep.mu.Unlock()
		return unix.ENOENT
	}
	ep.removeLocked(it)
	ep.mu.Unlock()
	file.RemoveReleaseHook(it)
	return nil
}

// Preconditions: ep.mu is locked.
func (ep *EventPoll) removeLocked(it *item) {
	delete(ep.items, it.key)
	it.key.file.EventUnregister(&it.entry)
	ep.readyMu.Lock()
	ep.removeReady(it)
	ep.readyMu.Unlock()
}

// forget drops it when its file is released.
func (ep *EventPoll) forget(it *item) {
	ep.mu.Lock()
	if ep.items[it.key] == it {
		ep.removeLocked(it)
	}
	ep.mu.Unlock()
}

// collect returns up to max ready events, re-queueing level-triggered
// items.
func (ep *EventPoll) collect(max int) []Event {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	ep.readyMu.Lock()
	var list []*item
	for it := ep.head; it != nil; {
		nx := it.next
		it.ready, it.prev, it.next = false, nil, nil
		list = append(list, it)
		it = nx
	}
	ep.head, ep.tail = nil, nil
	ep.readyMu.Unlock()

	var out []Event
	var requeue, left []*item
	for i, it := range list {
		if len(out) == max {
			left = list[i:]
			break
		}
		events := it.events.Load()
		if events&readinessBits == 0 || ep.items[it.key] != it {
			continue
		}
		r := it.key.file.Readiness(waiterMask(events))
		if r == 0 {
			continue
		}
		out = append(out, Event{Events: uint32(r), Data: it.data.Load()})
		switch {
		case events&unix.EPOLLONESHOT != 0:
			it.events.Store(events & privateBits)
		case events&unix.EPOLLET == 0:
			requeue = append(requeue, it)
		}
	}
	if len(left)+len(requeue) > 0 {
		// As Linux: what was not looked at goes back to the front,
		// the level-triggered items just reported after it, so that a
		// small maxevents takes turns through the ready items.
		ep.readyMu.Lock()
		for i := len(requeue) - 1; i >= 0; i-- {
			ep.pushReadyFront(requeue[i])
		}
		for i := len(left) - 1; i >= 0; i-- {
			ep.pushReadyFront(left[i])
		}
		ep.readyMu.Unlock()
	}
	return out
}

// Wait implements epoll_wait: up to max events, waiting until one is
// ready, the deadline passes (then none) or the task is interrupted
// (syserror.ErrInterrupted). A deadline in the past does not wait.
func (ep *EventPoll) Wait(ctx fs.Context, max int, deadline time.Time, hasDeadline bool) ([]Event, error) {
	if evs := ep.collect(max); len(evs) > 0 || (hasDeadline && !time.Now().Before(deadline)) {
		return evs, nil
	}
	e, ch := waiter.NewChannelEntry(waiter.EventIn)
	ep.queue.EventRegister(e)
	defer ep.queue.EventUnregister(e)
	for {
		if evs := ep.collect(max); len(evs) > 0 {
			return evs, nil
		}
		if err := ctx.BlockOn(ch, deadline, hasDeadline); err != nil {
			if err == unix.ETIMEDOUT {
				return ep.collect(max), nil
			}
			return nil, err
		}
	}
}

// Readiness implements waiter.Waitable: readable (POLLIN|POLLRDNORM, as
// Linux's ep_eventpoll_poll) when an item is ready.
func (ep *EventPoll) Readiness(mask waiter.EventMask) waiter.EventMask {
	const readable = waiter.EventIn | waiter.EventRdNorm
	if mask&readable == 0 {
		return 0
	}
	ep.readyMu.Lock()
	var list []*item
	for it := ep.head; it != nil; it = it.next {
		list = append(list, it)
	}
	ep.readyMu.Unlock()
	for _, it := range list {
		events := it.events.Load()
		if events&readinessBits != 0 && it.key.file.Readiness(waiterMask(events)) != 0 {
			return mask & readable
		}
	}
	return 0
}

// EventRegister implements waiter.Waitable.
func (ep *EventPoll) EventRegister(e *waiter.Entry) { ep.queue.EventRegister(e) }

// EventUnregister implements waiter.Waitable.
func (ep *EventPoll) EventUnregister(e *waiter.Entry) { ep.queue.EventUnregister(e) }

// Release implements fs.FileImpl: drops every registration.
func (ep *EventPoll) Release() {
	ep.mu.Lock()
	items := make([]*item, 0, len(ep.items))
	for _, it := range ep.items {
		items = append(items, it)
	}
	for _, it := range items {
		ep.removeLocked(it)
	}
	ep.mu.Unlock()
	for _, it := range items {
		it.key.file.RemoveReleaseHook(it)
	}
}

// The epoll ioctls (Linux 6.9+).
const (
	epiocSParams = 0x40088a01 // _IOW(0x8A, 1, struct epoll_params)
	epiocGParams = 0x80088a02 // _IOR(0x8A, 2, struct epoll_params)
	// napiPollWeight bounds busy_poll_budget without CAP_NET_ADMIN.
	napiPollWeight = 64
)

// Ioctl implements fs.FileImpl.Ioctl: EPIOCSPARAMS and EPIOCGPARAMS, and
// EINVAL for every other request, as Linux's epoll.
func (ep *EventPoll) Ioctl(ctx fs.Context, _ *fs.FileDescription, cmd uint32, arg uintptr) (uintptr, error) {
	switch cmd {
	case epiocSParams:
		var p [8]byte
		if _, err := ctx.CopyInBytes(arg, p[:]); err != nil {
			return 0, unix.EFAULT
		}
		usecs := binary.LittleEndian.Uint32(p[0:])
		budget := binary.LittleEndian.Uint16(p[4:])
		prefer, pad := p[6], p[7]
		if pad != 0 || usecs > math.MaxInt32 || prefer > 1 {
			return 0, unix.EINVAL
		}
		if budget > napiPollWeight && !ctx.Credentials().HasCapability(unix.CAP_NET_ADMIN) {
			return 0, unix.EPERM
		}
		ep.mu.Lock()
		ep.params = p
		ep.mu.Unlock()
		return 0, nil
	case epiocGParams:
		ep.mu.Lock()
		p := ep.params
		ep.mu.Unlock()
		if _, err := ctx.CopyOutBytes(arg, p[:]); err != nil {
			return 0, unix.EFAULT
		}
		return 0, nil
	}
	return 0, unix.EINVAL
}
