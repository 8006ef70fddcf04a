package kernel

import (
	"errors"
	"testing"
	"time"
)

func TestExternalProcess(t *testing.T) {
	t.Run("exit is reported and the process reaped", func(t *testing.T) {
		e := newFreezeEnv(t)
		task := e.task(sysCount)
		p, err := e.k.registerExternal(task)
		if err != nil {
			t.Fatal(err)
		}
		if p.ThreadGroup().ParentID() != 0 {
			t.Errorf("parent %d, want none", p.ThreadGroup().ParentID())
		}
		p.Start()
		waitFor(t, "the process running", func() bool { return e.count(task.tid).Load() > 0 })
		if err := p.Signal(SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case <-p.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("Done not closed after the process died")
		}
		if st := p.Status(); !st.Signaled() || st.Signal() != SIGTERM {
			t.Errorf("status %#x, want killed by SIGTERM", uint32(st))
		}
		if tg := e.k.ThreadGroupByID(p.PID()); tg != nil {
			t.Errorf("pid %d is still in the table: not reaped", p.PID())
		}
	})
	t.Run("no process once init has exited", func(t *testing.T) {
		e := newFreezeEnv(t)
		e.k.mu.Lock()
		e.k.init.exited = true
		e.k.mu.Unlock()
		if _, err := e.k.CreateProcess(InitOptions{Path: "/bin/true"}); !errors.Is(err, ErrInitExited) {
			t.Errorf("CreateProcess after init's exit: %v, want ErrInitExited", err)
		}
		e.k.mu.Lock()
		e.k.init.exited = false
		e.k.mu.Unlock()
	})
}
