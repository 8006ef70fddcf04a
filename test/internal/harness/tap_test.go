package harness

import (
	"testing"
)

func TestParseTAP(t *testing.T) {
	out := []byte(`1..4
ok 1 - first
not ok 2 - second # a.c:12: open("/x"): expected -1 (ENOENT) got 3 (no error)
# child 7: a.c:40: expected x (errno 0)
ok 3 - third # SKIP no such clock
ok 4 - fourth # note with # inside
garbage line
# moattest: pass 2 fail 1 skip 1
`)
	tap, err := ParseTAP(out)
	if err != nil {
		t.Fatalf("ParseTAP: %v", err)
	}
	if tap.Planned != 4 {
		t.Errorf("Planned = %d, want 4", tap.Planned)
	}
	want := []CaseResult{
		{1, "first", Pass, ""},
		{2, "second", Fail, `a.c:12: open("/x"): expected -1 (ENOENT) got 3 (no error)`},
		{3, "third", Skip, "no such clock"},
		{4, "fourth", Pass, "note with # inside"},
	}
	if len(tap.Cases) != len(want) {
		t.Fatalf("got %d cases, want %d: %+v", len(tap.Cases), len(want), tap.Cases)
	}
	for i, w := range want {
		if tap.Cases[i] != w {
			t.Errorf("case %d = %+v, want %+v", i, tap.Cases[i], w)
		}
	}
	if len(tap.Comments) != 2 {
		t.Errorf("comments = %q, want 2", tap.Comments)
	}
	if got := tap.Lookup("nope"); got.Status != Missing {
		t.Errorf("Lookup(nope).Status = %v, want missing", got.Status)
	}
}

func TestParseTAPErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
	}{
		{"bad plan", "1..x\n"},
		{"no dash", "ok 1 first\n"},
		{"bad number", "ok x - first\n"},
		{"empty name", "ok 1 -  # hm\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ParseTAP([]byte(tc.in)); err == nil {
				t.Errorf("ParseTAP(%q) succeeded, want an error", tc.in)
			}
		})
	}
}

func FuzzParseTAP(f *testing.F) {
	f.Add([]byte("1..2\nok 1 - a\nnot ok 2 - b # why\n"))
	f.Add([]byte("ok 1 - a # SKIP x\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tap, err := ParseTAP(b)
		if err != nil {
			return
		}
		for _, c := range tap.Cases {
			if c.Name == "" {
				t.Errorf("parsed a case with an empty name from %q", b)
			}
		}
	})
}
