package unix

import (
	"encoding/binary"
	"testing"

	sys "golang.org/x/sys/unix"
)

// nsCtx is a task of a nested PID namespace: its process has root id root
// and sees the root ids in view under other numbers (absent: invisible).
type nsCtx struct {
	testCtx
	root int32
	view map[int32]int32
}

func (c nsCtx) RootThreadGroupID() int32 { return c.root }
func (c nsCtx) ThreadGroupID() int32     { return c.view[c.root] }
func (c nsCtx) PIDFromRoot(pid int32) int32 {
	return c.view[pid]
}

// TestPeerCredPIDPerNamespace checks that SO_PEERCRED keeps the creator's
// root pid and reports it as the reader's namespace numbers it.
func TestPeerCredPIDPerNamespace(t *testing.T) {
	outside := nsCtx{testCtx: newCtx(), root: 10, view: map[int32]int32{10: 10, 20: 20}}
	inside := nsCtx{testCtx: newCtx(), root: 20, view: map[int32]int32{20: 1}}
	fa, fb := NewPair(outside, NewNamespace(), sys.SOCK_STREAM, 0)
	defer fa.DecRef()
	defer fb.DecRef()
	for _, tc := range []struct {
		name   string
		reader nsCtx
		want   int32
	}{
		{"creator's own namespace", outside, 10},
		{"creator invisible to the reader", inside, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := sockOf(t, fb).GetSockOpt(tc.reader, sys.SOL_SOCKET, sys.SO_PEERCRED, 12)
			if err != nil {
				t.Fatal(err)
			}
			if got := int32(binary.LittleEndian.Uint32(v)); got != tc.want {
				t.Errorf("SO_PEERCRED pid = %d, want %d", got, tc.want)
			}
		})
	}
	// A pair made inside keeps the root id, not the namespace's 1.
	ga, gb := NewPair(inside, NewNamespace(), sys.SOCK_STREAM, 0)
	defer ga.DecRef()
	defer gb.DecRef()
	v, err := sockOf(t, ga).GetSockOpt(outside, sys.SOL_SOCKET, sys.SO_PEERCRED, 12)
	if err != nil || int32(binary.LittleEndian.Uint32(v)) != 20 {
		t.Errorf("SO_PEERCRED of an inside pair from outside = %v, %v; want pid 20", v, err)
	}
}
