package boot

import "testing"

func TestPasswdHome(t *testing.T) {
	const passwd = "root:x:0:0:root:/root:/bin/sh\n# comment\nbad line\nwww-data:x:33:33:www-data:/var/www:/bin/false\nnohome:x:7:7:::/bin/sh\n"
	for _, tc := range []struct {
		uid  uint32
		home string
		ok   bool
	}{
		{0, "/root", true},
		{33, "/var/www", true},
		{7, "", false},
		{1000, "", false},
	} {
		home, ok := passwdHome([]byte(passwd), tc.uid)
		if home != tc.home || ok != tc.ok {
			t.Errorf("uid %d: got %q, %v; want %q, %v", tc.uid, home, ok, tc.home, tc.ok)
		}
	}
}

func FuzzPasswdHome(f *testing.F) {
	f.Add([]byte("root:x:0:0:root:/root:/bin/sh\n"), uint32(0))
	f.Fuzz(func(t *testing.T, data []byte, uid uint32) {
		home, ok := passwdHome(data, uid)
		if ok && home == "" {
			t.Fatalf("ok with an empty home")
		}
	})
}
