package harness

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
)

// Known is a parsed known-differences file: cases allowed to fail in the
// sandbox while passing natively. Each line reads
//
//	program:case   reason, ending with the issue   #12
//
// and "program:*" covers every case of a program. Blank lines and lines
// starting with '#' are comments.
type Known struct {
	entries map[string]string // "program:case" -> reason
}

// ParseKnown parses a known-differences file.
func ParseKnown(data []byte) (*Known, error) {
	k := &Known{entries: map[string]string{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, reason, _ := strings.Cut(line, " ")
		if k2, r2, ok := strings.Cut(line, "\t"); ok && len(k2) < len(key) {
			key, reason = k2, r2
		}
		reason = strings.TrimSpace(reason)
		prog, cs, ok := strings.Cut(key, ":")
		if !ok || prog == "" || cs == "" {
			return nil, fmt.Errorf("line %d: %q: want program:case", n, key)
		}
		if reason == "" {
			return nil, fmt.Errorf("line %d: %s: a reason (and issue) is required", n, key)
		}
		if _, dup := k.entries[key]; dup {
			return nil, fmt.Errorf("line %d: %s listed twice", n, key)
		}
		k.entries[key] = reason
	}
	return k, sc.Err()
}

// Reason returns why program:name may differ, and whether it is listed,
// either by name or by "program:*".
func (k *Known) Reason(program, name string) (string, bool) {
	if r, ok := k.entries[program+":"+name]; ok {
		return r, true
	}
	r, ok := k.entries[program+":*"]
	return r, ok
}

// Exact reports whether program:name is listed by its own name.
func (k *Known) Exact(program, name string) bool {
	_, ok := k.entries[program+":"+name]
	return ok
}

// Keys returns every listed "program:case".
func (k *Known) Keys() []string {
	var keys []string
	for key := range k.entries {
		keys = append(keys, key)
	}
	return keys
}
