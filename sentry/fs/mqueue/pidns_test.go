package mqueue

import (
	"fmt"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs/fstest"
)

// nsReader is a reader in a nested PID namespace that sees root id 10
// as 3 and nothing else.
type nsReader struct{ *fstest.Context }

func (nsReader) PIDFromRoot(pid int32) int32 {
	if pid == 10 {
		return 3
	}
	return 0
}

// TestStatusNotifyPIDPerReader checks that the status line's NOTIFY_PID
// is the registered process's id as the reader's namespace numbers it.
func TestStatusNotifyPIDPerReader(t *testing.T) {
	ctx := fstest.NewContext()
	ns := NewNamespace()
	f := mustOpen(t, ctx, ns, "q", unix.O_RDWR|unix.O_CREAT, &Attr{MaxMsg: 8, MsgSize: 4})
	defer f.DecRef()
	for _, tc := range []struct {
		name string
		pid  int32
		want string
	}{
		{"visible", 10, "NOTIFY_PID:3 "},
		{"invisible", 11, "NOTIFY_PID:0 "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := SetNotify(f, nil, "owner"); err != nil {
				t.Fatal(err)
			}
			if err := SetNotify(f, &Notification{Notify: SigevNone, Owner: "owner", PID: tc.pid}, "owner"); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 128)
			n, err := f.Impl().(*File).Read(nsReader{ctx}, f, buf, 0)
			if err != nil || !strings.Contains(string(buf[:n]), tc.want) {
				t.Errorf("status %q, %v; want %q", buf[:n], err, tc.want)
			}
			if got := f.Impl().(*File).Queue().Status(); !strings.Contains(got, fmt.Sprintf("NOTIFY_PID:%d ", tc.pid)) {
				t.Errorf("untranslated status %q", got)
			}
		})
	}
}
