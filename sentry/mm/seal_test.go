package mm

import (
	"testing"

	"golang.org/x/sys/unix"
)

func TestGrowSealShortWrites(t *testing.T) {
	for _, tc := range []struct {
		name string
		size int64
		off  int64
		n    int
		want int
		err  error
	}{
		{"inside", pageSize, pageSize - 2, 2, 2, nil},
		{"crossing a page end at EOF", pageSize, pageSize - 1, 3, 1, nil},
		{"at EOF", pageSize, pageSize, 3, 0, unix.EPERM},
		{"past EOF", pageSize, 2 * pageSize, 3, 0, unix.EPERM},
		{"crossing EOF inside a page", pageSize / 2, pageSize/2 - 1, 3, 0, unix.EPERM},
		{"whole pages then EOF mid-page", pageSize + pageSize/2, 10, 2 * pageSize, pageSize - 10, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, _ := newTestObject(t, tc.size)
			if err := o.AddSeals(unix.F_SEAL_GROW, false); err != nil {
				t.Fatal(err)
			}
			n, err := o.WriteAt(make([]byte, tc.n), tc.off)
			if n != tc.want || err != tc.err {
				t.Fatalf("WriteAt = %d, %v; want %d, %v", n, err, tc.want, tc.err)
			}
		})
	}
}
