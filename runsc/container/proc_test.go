package container

import (
	"os"
	"testing"
)

func TestParseStat(t *testing.T) {
	const rest = " 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 424242 20 21"
	tests := []struct {
		name      string
		stat      string
		wantState byte
		wantStart uint64
		wantErr   bool
	}{
		{"plain", "12 (sleep) S" + rest, 'S', 424242, false},
		{"comm with ) and spaces", "12 (a) Z 1 (b) R" + rest, 'R', 424242, false},
		{"zombie", "7 (x) Z" + rest, 'Z', 424242, false},
		{"no paren", "12 sleep S" + rest, 0, 0, true},
		{"short", "12 (sleep) S 1 2", 0, 0, true},
		{"bad start", "12 (sleep) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 x 20", 0, 0, true},
		{"empty", "", 0, 0, true},
		{"paren at end", "12 (sleep)", 0, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			state, start, err := parseStat([]byte(tc.stat))
			if (err != nil) != tc.wantErr || state != tc.wantState || start != tc.wantStart {
				t.Errorf("parseStat = %q, %d, %v; want %q, %d, error %v", state, start, err, tc.wantState, tc.wantStart, tc.wantErr)
			}
		})
	}
}

func TestProcStatSelf(t *testing.T) {
	p, err := newHostProcess(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if !p.alive() {
		t.Error("this process is not alive")
	}
	if (hostProcess{Pid: p.Pid, Start: p.Start + 1}).alive() {
		t.Error("a different start time still names this process")
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("12 (sleep) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 424242 20 21"))
	f.Add([]byte("1 ()) R 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0"))
	f.Fuzz(func(t *testing.T, b []byte) {
		parseStat(b) // must not panic
	})
}
