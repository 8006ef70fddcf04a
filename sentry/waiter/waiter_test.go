package waiter

import "testing"

func TestNotifyReachesMatchingEntries(t *testing.T) {
	var q Queue
	in, inCh := NewChannelEntry(EventIn)
	out, outCh := NewChannelEntry(EventOut)
	q.EventRegister(in)
	q.EventRegister(out)
	q.Notify(EventIn)
	select {
	case <-inCh:
	default:
		t.Fatal("EventIn waiter not woken")
	}
	select {
	case <-outCh:
		t.Fatal("EventOut waiter woken by EventIn")
	default:
	}
	q.Notify(EventHUp)
	if len(inCh) != 1 || len(outCh) != 1 {
		t.Fatal("EventHUp must reach every waiter")
	}
	q.EventUnregister(in)
	q.EventUnregister(in) // second removal is a no-op
	<-inCh
	q.Notify(EventIn | EventOut)
	if len(inCh) != 0 {
		t.Fatal("unregistered entry was woken")
	}
	q.EventUnregister(out)
	if !q.IsEmpty() {
		t.Fatal("queue not empty")
	}
}
