package harness

import (
	"strings"
	"testing"
)

func TestParseKnown(t *testing.T) {
	k, err := ParseKnown([]byte(`# comment
pipe:pipe_capacity   pipe buffer is smaller   #12

exec:*	exec not done yet #3
`))
	if err != nil {
		t.Fatalf("ParseKnown: %v", err)
	}
	for _, tc := range []struct {
		prog, name string
		want       bool
		exact      bool
	}{
		{"pipe", "pipe_capacity", true, true},
		{"pipe", "other", false, false},
		{"exec", "anything", true, false},
		{"dev", "null", false, false},
	} {
		t.Run(tc.prog+"/"+tc.name, func(t *testing.T) {
			_, ok := k.Reason(tc.prog, tc.name)
			if ok != tc.want {
				t.Errorf("Reason ok = %v, want %v", ok, tc.want)
			}
			if got := k.Exact(tc.prog, tc.name); got != tc.exact {
				t.Errorf("Exact = %v, want %v", got, tc.exact)
			}
		})
	}
	if r, _ := k.Reason("pipe", "pipe_capacity"); r != "pipe buffer is smaller   #12" {
		t.Errorf("reason = %q", r)
	}
}

func TestParseKnownErrors(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"no colon", "pipe reason #1\n"},
		{"no reason", "pipe:x\n"},
		{"empty case", "pipe: reason\n"},
		{"duplicate", "a:b r\na:b r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ParseKnown([]byte(tc.in)); err == nil {
				t.Errorf("ParseKnown(%q) succeeded, want an error", tc.in)
			}
		})
	}
}

func FuzzParseKnown(f *testing.F) {
	f.Add([]byte("pipe:x reason #1\n"))
	f.Add([]byte("# c\nexec:*\twhy\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := ParseKnown(b)
		if err != nil {
			return
		}
		for _, key := range k.Keys() {
			prog, name, ok := strings.Cut(key, ":")
			if !ok || prog == "" || name == "" {
				t.Errorf("accepted a bad key %q from %q", key, b)
			}
			if r, _ := k.Reason(prog, name); r == "" {
				t.Errorf("empty reason for %q", key)
			}
		}
	})
}
