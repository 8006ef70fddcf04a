package sem

import (
	"encoding/binary"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// FuzzDo applies arrays of struct sembuf decoded from the input (with
// IPC_NOWAIT forced, so nothing blocks) and checks that each array is
// applied whole or not at all and that values stay within 0..SEMVMX.
func FuzzDo(f *testing.F) {
	f.Add([]byte{0, 0, 5, 0, 0, 0, 1, 0, 0xff, 0xff, 0, 0x10})
	f.Add([]byte{2, 0, 0xff, 0x7f, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewRegistry()
		root := auth.NewRootCredentials()
		id, err := r.Get(root, unix.IPC_PRIVATE, 3, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		le := binary.LittleEndian
		for len(data) >= sembufSizeForTest {
			n := int(data[0]%4) + 1
			data = data[1:]
			var ops []Op
			for ; n > 0 && len(data) >= 6; n-- {
				ops = append(ops, Op{Num: le.Uint16(data) % 4, Op: int16(le.Uint16(data[2:])), Flags: int16(le.Uint16(data[4:])) | unix.IPC_NOWAIT})
				data = data[6:]
			}
			if len(ops) == 0 {
				break
			}
			before, _ := r.GetAll(root, id)
			err := r.Do(blocker{}, root, 1, nil, id, ops, time.Time{}, false)
			after, _ := r.GetAll(root, id)
			if err != nil && !slices.Equal(before, after) {
				t.Fatalf("failed ops %v (%v) changed %v to %v", ops, err, before, after)
			}
			for _, v := range after {
				if v > SEMVMX {
					t.Fatalf("value %d past SEMVMX after %v", v, ops)
				}
			}
		}
		ProcessExited(1, nil)
		vals, _ := r.GetAll(root, id)
		for _, v := range vals {
			if v > SEMVMX {
				t.Fatalf("value %d past SEMVMX after exit", v)
			}
		}
	})
}

const sembufSizeForTest = 7
