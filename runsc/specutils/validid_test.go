package specutils

import (
	"math/rand/v2"
	"regexp"
	"testing"
)

// TestValidateIDMatchesRunc checks ValidateID's hand-written character
// check against runc's pattern, which it replaces, on random ids drawn
// from allowed, forbidden and non-ASCII characters.
func TestValidateIDMatchesRunc(t *testing.T) {
	runc := regexp.MustCompile(`^[\w+\-.]+$`)
	chars := []rune("aZ09_+-.x/ \x00\t:@é\u00a0ǅ٣")
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		b := make([]rune, 1+r.IntN(6))
		for i := range b {
			b[i] = chars[r.IntN(len(chars))]
		}
		id := string(b)
		if id == "." || id == ".." {
			continue // refused before the pattern
		}
		if got, want := ValidateID(id) == nil, runc.MatchString(id); got != want {
			t.Fatalf("ValidateID(%q) accepts: %v, runc's pattern: %v", id, got, want)
		}
	}
}
