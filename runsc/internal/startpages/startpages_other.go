//go:build !amd64

package startpages

// imageBase is 0 where this package does not know the executable's
// layout: Release then does nothing.
const imageBase = 0
