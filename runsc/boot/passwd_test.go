package boot

import "testing"

func TestPasswdUser(t *testing.T) {
	const passwd = "root:x:0:0:root:/root:/bin/sh\n# comment\nbad line\nwww-data:x:33:33:www-data:/var/www:/bin/false\nnohome:x:7:7:::/bin/sh\nshort:x:8\n"
	for _, tc := range []struct {
		uid        uint32
		name, home string
		ok         bool
	}{
		{0, "root", "/root", true},
		{33, "www-data", "/var/www", true},
		{7, "nohome", "", true},
		{8, "short", "", true},
		{1000, "", "", false},
	} {
		name, home, ok := PasswdUser([]byte(passwd), tc.uid)
		if name != tc.name || home != tc.home || ok != tc.ok {
			t.Errorf("uid %d: got %q, %q, %v; want %q, %q, %v", tc.uid, name, home, ok, tc.name, tc.home, tc.ok)
		}
	}
}

func FuzzPasswdUser(f *testing.F) {
	f.Add([]byte("root:x:0:0:root:/root:/bin/sh\n"), uint32(0))
	f.Fuzz(func(t *testing.T, data []byte, uid uint32) {
		name, home, ok := PasswdUser(data, uid)
		if !ok && (name != "" || home != "") {
			t.Fatalf("no entry but %q, %q", name, home)
		}
	})
}
