package linux

import (
	"testing"

	"github.com/moat-sandbox/moat/sentry/fs"
)

type plainImpl struct {
	fs.FileDefaults
	fs.NotPollable
}

type directImpl struct{ plainImpl }

func (directImpl) DirectIO() {}

func TestDirect(t *testing.T) {
	tests := []struct {
		name  string
		impl  fs.FileImpl
		opts  fs.FDOptions
		total uint64
		want  bool
	}{
		{"regular data", directImpl{}, fs.FDOptions{}, 4096, true},
		{"zero length reaches the file itself", directImpl{}, fs.FDOptions{}, 0, false},
		{"records (timerfd, signalfd) are not split", plainImpl{}, fs.FDOptions{ImplOffset: true}, 8, false},
		{"other files keep the bounce buffer", plainImpl{}, fs.FDOptions{}, 4096, false},
		{"streams", directImpl{}, fs.FDOptions{Stream: true}, 4096, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := fs.NewFileDescription(tc.impl, fs.VirtualDentry{}, 0, tc.opts)
			if got := direct(f, tc.total); got != tc.want {
				t.Fatalf("direct = %v, want %v", got, tc.want)
			}
		})
	}
}
