package kernel

import (
	"testing"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/mm"
)

// TestSignalInitSenders checks how much of init's protection each way of
// signalling init from outside the sandbox gets: SignalInit (runsc do)
// none, SignalInitFromAncestor (OCI kill) Linux's for a signal from an
// ancestor PID namespace, and a sender inside the namespace all of it.
func TestSignalInitSenders(t *testing.T) {
	const (
		dropped = iota // neither pending nor killing init
		pending        // queued for init
		killed         // init's group exits at once
	)
	type sender struct {
		name string
		send func(k *Kernel, s Signal) error
	}
	senders := []sender{
		{"host forced", (*Kernel).SignalInit},
		{"ancestor", (*Kernel).SignalInitFromAncestor},
		{"inside", func(k *Kernel, s Signal) error {
			return k.init.SendSignal(NewSignalInfo(s, SI_USER))
		}},
	}
	tests := []struct {
		name    string
		sig     Signal
		handler uint64 // init's action for sig
		blocked bool
		want    [3]int // by senders' order
	}{
		{"TERM default", SIGTERM, SIG_DFL, false, [3]int{pending, dropped, dropped}},
		{"USR1 default", SIGUSR1, SIG_DFL, false, [3]int{pending, dropped, dropped}},
		{"INT default", SIGINT, SIG_DFL, false, [3]int{pending, dropped, dropped}},
		{"TERM handled", SIGTERM, 0x1000, false, [3]int{pending, pending, pending}},
		{"TERM ignored", SIGTERM, SIG_IGN, false, [3]int{dropped, dropped, dropped}},
		{"TERM default blocked", SIGTERM, SIG_DFL, true, [3]int{pending, pending, pending}},
		{"KILL", SIGKILL, SIG_DFL, false, [3]int{killed, killed, dropped}},
		{"STOP", SIGSTOP, SIG_DFL, false, [3]int{pending, pending, dropped}},
	}
	for _, tc := range tests {
		for i, snd := range senders {
			t.Run(tc.name+"/"+snd.name, func(t *testing.T) {
				mf, err := mm.NewMemoryFile()
				if err != nil {
					t.Fatal(err)
				}
				k := NewTestKernel(mf)
				initTask := k.NewTestTask(nil, mm.New(nil, mf), auth.NewRootCredentials())
				initTask.pctx = idleContext{}
				if k.init != initTask.tg {
					t.Fatal("the first test task is not init")
				}
				if tc.handler != SIG_DFL {
					if _, err := initTask.SigAction(tc.sig, &SigAction{Handler: tc.handler}); err != nil {
						t.Fatal(err)
					}
				}
				if tc.blocked {
					initTask.SetSignalMask(SignalSetOf(tc.sig))
				}
				if err := snd.send(k, tc.sig); err != nil {
					t.Fatalf("send: %v", err)
				}
				k.mu.Lock()
				got := dropped
				switch {
				case initTask.tg.groupExiting:
					got = killed
				case initTask.tg.pending.set&SignalSetOf(tc.sig) != 0:
					got = pending
				}
				reaches := false
				if q := initTask.tg.pending.queues[tc.sig]; len(q) > 0 {
					reaches = q[0].reachesInit
				}
				k.mu.Unlock()
				if got != tc.want[i] {
					t.Errorf("outcome %d, want %d (0 dropped, 1 pending, 2 killed)", got, tc.want[i])
				}
				// Only SignalInit's signals survive a later reset to the
				// default action; the others are dropped at dequeue.
				if got == pending && reaches != (snd.name == "host forced") {
					t.Errorf("reachesInit %v for a %s sender", reaches, snd.name)
				}
				if k.initSignalFrom != fromInside {
					t.Errorf("initSignalFrom left at %d", k.initSignalFrom)
				}
			})
		}
	}
}
