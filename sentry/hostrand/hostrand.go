// Package hostrand reads the host kernel's random pool for the Sentry
// (the application's getrandom, AT_RANDOM, /proc's boot_id). It holds no
// state and no locks.
//
// It replaces crypto/rand there: importing crypto/rand brought the whole
// FIPS 140 module, math/big and math/rand into every runsc process, whose
// package initialisation each paid at start-up, for what is one
// getrandom(2) call.
package hostrand

import "golang.org/x/sys/unix"

// Read fills b from the host's getrandom(2) pool, blocking only until the
// host's pool is initialised (as crypto/rand does). Like crypto/rand.Read
// it cannot fail: an unexpected error panics.
func Read(b []byte) {
	for len(b) > 0 {
		n, err := unix.Getrandom(b, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			panic("hostrand: getrandom: " + err.Error())
		}
		b = b[n:]
	}
}
