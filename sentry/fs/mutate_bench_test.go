package fs_test

import (
	"fmt"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
)

// BenchmarkCreateUnlink measures the VFS side of open(O_CREAT|O_EXCL),
// close and unlink on the in-test memfs.
func BenchmarkCreateUnlink(b *testing.B) {
	f := newTFS(b)
	names := make([]string, 1000)
	for i := range names {
		names[i] = fmt.Sprintf("/w/f%d", i)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := names[i%len(names)]
		fd, err := f.open(p, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY, 0o644)
		if err != nil {
			b.Fatal(err)
		}
		fd.DecRef()
		if err := fs.Unlink(f.ctx, f.lk(p)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStatDeep measures a cached walk of a five-component path.
func BenchmarkStatDeep(b *testing.B) {
	f := newTFS(b)
	p := "/w"
	for i := 0; i < 4; i++ {
		p += "/d"
		if err := fs.Mkdir(f.ctx, f.lk(p), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		vd, err := fs.Resolve(f.ctx, f.lk(p))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := vd.Stat(f.ctx); err != nil {
			b.Fatal(err)
		}
	}
}
