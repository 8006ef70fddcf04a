package hostrand

import (
	"bytes"
	"strconv"
	"testing"
)

func TestRead(t *testing.T) {
	for _, n := range []int{0, 1, 16, 256, 257, 4096, 1 << 20} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			a, b := make([]byte, n), make([]byte, n)
			Read(a)
			Read(b)
			if n >= 16 && bytes.Equal(a, b) {
				t.Errorf("two reads of %d bytes are equal", n)
			}
			if n >= 256 && bytes.Count(a, []byte{0}) > n/16 {
				t.Errorf("%d of %d bytes are zero: buffer not filled", bytes.Count(a, []byte{0}), n)
			}
		})
	}
}
