package kernel

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// errnoOf returns err's errno number, 0 for nil.
func errnoOf(err error) int {
	if err == nil {
		return 0
	}
	return int(err.(unix.Errno))
}

// TestSetIDMatchesLinux replays testdata/setid_linux.txt, the output of
// testdata/setid_probe.c on Linux: every set*id call of a grid of ids from
// several starting credentials, with the resulting ids, capabilities and
// dumpable flag. The kernel package's transitions must give the same.
func TestSetIDMatchesLinux(t *testing.T) {
	f, err := os.Open("testdata/setid_linux.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		t.Fatal("empty golden file")
	}
	var eff, perm uint64
	if _, err := fmt.Sscanf(sc.Text(), "initial caps %x %x", &eff, &perm); err != nil {
		t.Fatalf("header %q: %v", sc.Text(), err)
	}
	type start struct {
		r, e, s, gr, ge, gs uint32
		keep                bool
	}
	starts := map[string]start{
		"root":     {none, none, none, 10, 20, 30, false},
		"rootkeep": {none, none, none, 10, 20, 30, true},
		"user":     {1000, 2000, 3000, 1000, 2000, 3000, false},
		"euid0":    {1000, 0, 0, 10, 20, 30, false},
		"ruid0":    {0, 1000, 1000, 10, 20, 30, false},
		"suid0":    {1000, 1000, 0, 10, 20, 30, false},
	}
	id := func(s string) uint32 {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("bad id %q", s)
		}
		return uint32(v)
	}
	lines := 0
	for sc.Scan() {
		line := sc.Text()
		lines++
		w := strings.Fields(line)
		st, ok := starts[w[0]]
		if !ok {
			t.Fatalf("unknown start in %q", line)
		}
		c := auth.NewRootCredentials()
		c.EffectiveCaps, c.PermittedCaps = auth.CapSet(eff), auth.CapSet(perm)
		var err error
		if c, err = credsSetRESGID(c, st.gr, st.ge, st.gs); err != nil {
			t.Fatal(err)
		}
		if st.keep {
			c = c.Fork()
			c.KeepCaps = true
		}
		if st.r != none {
			if c, err = credsSetRESUID(c, st.r, st.e, st.s); err != nil {
				t.Fatal(err)
			}
		}
		a, b, cc := id(w[2]), id(w[3]), id(w[4])
		var n *auth.Credentials
		var ret int64
		switch w[1] {
		case "setuid":
			n, err = credsSetUID(c, a)
		case "setgid":
			n, err = credsSetGID(c, a)
		case "setreuid":
			n, err = credsSetREUID(c, a, b)
		case "setregid":
			n, err = credsSetREGID(c, a, b)
		case "setresuid":
			n, err = credsSetRESUID(c, a, b, cc)
		case "setresgid":
			n, err = credsSetRESGID(c, a, b, cc)
		case "setfsuid":
			var old uint32
			n, old = credsSetFSUID(c, a)
			ret = int64(old)
		case "setfsgid":
			var old uint32
			n, old = credsSetFSGID(c, a)
			ret = int64(old)
		default:
			t.Fatalf("unknown call in %q", line)
		}
		if err != nil {
			n, ret = c, -1
		} else if ret == 0 && n == nil {
			t.Fatalf("no credentials for %q", line)
		}
		dump := 1
		if privilegeDropped(c, n) {
			dump = 0
		}
		got := fmt.Sprintf("%s %s %s %s %s -> %d %d uid %d %d %d %d gid %d %d %d %d caps %x %x dump %d",
			w[0], w[1], w[2], w[3], w[4], ret, errnoOf(err),
			n.RealUID, n.EffectiveUID, n.SavedUID, n.FilesystemUID,
			n.RealGID, n.EffectiveGID, n.SavedGID, n.FilesystemGID,
			uint64(n.EffectiveCaps), uint64(n.PermittedCaps), dump)
		if got != line {
			t.Errorf("\nlinux: %s\nmoat:  %s", line, got)
		}
	}
	if lines < 3000 {
		t.Fatalf("only %d cases", lines)
	}
}
