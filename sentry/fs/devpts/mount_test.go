package devpts

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

func TestParseOptions(t *testing.T) {
	for _, tc := range []struct {
		data string
		want Options
		err  error
	}{
		{"", DefaultOptions(), nil},
		{"newinstance,ptmxmode=0666,mode=0620,gid=5", Options{PtmxMode: 0o666, Mode: 0o620, GID: 5, SetGID: true}, nil},
		{"ptmxmode=000,mode=600", Options{PtmxMode: 0, Mode: 0o600}, nil},
		{"uid=0,max=1024", Options{Mode: 0o620, SetUID: true}, nil},
		{"ptmxmode=0888", Options{}, unix.EINVAL},
		{"mode=01777", Options{}, unix.EINVAL},
		{"ptmxmode", Options{}, unix.EINVAL},
		{"gid=x", Options{}, unix.EINVAL},
		{"newinstance=1", Options{}, unix.EINVAL},
		{"size=1k", Options{}, unix.EINVAL},
	} {
		t.Run(tc.data, func(t *testing.T) {
			got, err := ParseOptions(tc.data, DefaultOptions())
			if err != tc.err {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if err == nil && got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func FuzzParseOptions(f *testing.F) {
	for _, s := range []string{"", "newinstance,ptmxmode=0666,mode=0620,gid=5", "mode=", "ptmxmode=7777,,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		o, err := ParseOptions(data, DefaultOptions())
		if err == nil && (o.Mode > 0o777 || o.PtmxMode > 0o777) {
			t.Fatalf("%q: mode bits out of range: %+v", data, o)
		}
	})
}

// TestFilesystem checks a mounted instance: type and magic, pts/ptmx with
// the ptmxmode given, and terminals with the mode given.
func TestFilesystem(t *testing.T) {
	ctx := fstest.NewContext()
	f, _ := NewFilesystem(nil, Options{PtmxMode: 0o666, Mode: 0o600})
	if f.Type() != "devpts" {
		t.Errorf("type %q", f.Type())
	}
	root := fs.NewMountNamespace(f, fs.MountFlags{}).Root()
	sfs, err := f.Impl().StatFS(ctx)
	if err != nil || sfs.Type != 0x1cd1 {
		t.Errorf("statfs type %#x, %v; want DEVPTS_SUPER_MAGIC", sfs.Type, err)
	}
	m, err := fs.Open(ctx, fs.Lookup{Root: root, Start: root, Path: "/ptmx"}, fs.OpenOptions{Flags: unix.O_RDWR | unix.O_NOCTTY})
	if err != nil {
		t.Fatal(err)
	}
	defer m.DecRef()
	st, err := m.Stat(ctx)
	if err != nil || st.Mode&0o777 != 0o666 || st.Rdev != PtmxDev {
		t.Errorf("ptmx mode %#o rdev %#x, %v", st.Mode, st.Rdev, err)
	}
	vd, err := fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: "/0"})
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := vd.Stat(ctx); st.Mode != unix.S_IFCHR|0o600 {
		t.Errorf("pts/0 mode %#o, want char 0600", st.Mode)
	}
}

// TestOwner: a new terminal belongs to its opener's filesystem user and
// group, or to the mount's uid= and gid=; its opener may open it again.
func TestOwner(t *testing.T) {
	for _, tc := range []struct {
		name     string
		data     string
		uid      auth.KUID
		gid      auth.KGID
		wantUID  auth.KUID
		wantGID  auth.KGID
		reopenOK bool
	}{
		{"root", "", 0, 0, 0, 0, true},
		{"user", "", 1000, 1000, 1000, 1000, true},
		{"gid option", "gid=5", 1000, 1000, 1000, 5, true},
		{"uid option", "uid=7,gid=5", 1000, 1000, 7, 5, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := ParseOptions("ptmxmode=0666,"+tc.data, DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			f, _ := NewFilesystem(nil, o)
			root := fs.NewMountNamespace(f, fs.MountFlags{}).Root()
			ctx := fstest.NewUserContext(tc.uid, tc.gid)
			m, err := fs.Open(ctx, fs.Lookup{Root: root, Start: root, Path: "/ptmx"}, fs.OpenOptions{Flags: unix.O_RDWR | unix.O_NOCTTY})
			if err != nil {
				t.Fatal(err)
			}
			defer m.DecRef()
			MasterTerminal(m).Unlock()
			vd, err := fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: "/0"})
			if err != nil {
				t.Fatal(err)
			}
			st, _ := vd.Stat(ctx)
			if st.UID != tc.wantUID || st.GID != tc.wantGID {
				t.Errorf("pts/0 owned by %d:%d, want %d:%d", st.UID, st.GID, tc.wantUID, tc.wantGID)
			}
			s, err := fs.Open(ctx, fs.Lookup{Root: root, Start: root, Path: "/0"}, fs.OpenOptions{Flags: unix.O_RDWR | unix.O_NOCTTY})
			if (err == nil) != tc.reopenOK {
				t.Errorf("opening pts/0 as its opener: %v, want success %v", err, tc.reopenOK)
			}
			if err == nil {
				s.DecRef()
			}
		})
	}
}
