package futex

import (
	"testing"
)

func BenchmarkWakeNoWaiters(b *testing.B) {
	m := NewManager()
	as := newFakeAS(1, base, size)
	for b.Loop() {
		m.Wake(as, fa, true, BitsetMatchAny, 1)
	}
}

// BenchmarkPingPong measures a handoff between two goroutines that take
// turns through a futex word, sleeping on it when it is not their turn.
func BenchmarkPingPong(b *testing.B) {
	m := NewManager()
	as := newFakeAS(1, base, size)
	play := func(me uint32, turns int) {
		w := NewWaiter()
		for range turns {
			for {
				cur, _ := as.LoadUint32(fa)
				if cur == me {
					break
				}
				if m.WaitPrepare(w, as, fa, true, cur, BitsetMatchAny) == nil {
					<-w.C
					m.WaitComplete(w)
				}
			}
			as.SwapUint32(fa, 1-me)
			m.Wake(as, fa, true, BitsetMatchAny, 1)
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		play(1, b.N)
	}()
	b.ResetTimer()
	play(0, b.N)
	<-done
}
