package boot

import (
	"reflect"
	"testing"
)

func TestBinds(t *testing.T) {
	mounts := []SpecMount{
		{Destination: "/proc", Type: "proc", Source: "proc"},
		{Destination: "/etc/hosts", Type: "bind", Source: "/var/lib/c/hosts", Options: []string{"rbind", "rprivate"}},
		{Destination: "/tmp", Type: "tmpfs", Source: "tmpfs"},
		{Destination: "/data/", Type: "none", Source: "/srv/data", Options: []string{"bind", "ro", "nosuid"}},
		{Destination: "/dev/mqueue", Type: "bind", Source: "/dev/mqueue", Options: []string{"rbind"}},
		{Destination: "/sys", Type: "none", Source: "/sys", Options: []string{"rbind", "ro"}},
		{Destination: "/sys/fs/cgroup", Type: "bind", Source: "/sys/fs/cgroup"},
		{Destination: "/dev/shm", Type: "bind", Source: "/host/shm", Options: []string{"rbind"}},
		{Destination: "/dev/termination-log", Type: "bind", Source: "/k/log"},
		{Destination: "data/sub", Type: "bind", Source: "/srv/sub", Options: []string{"rbind", "ro", "rw"}},
		{Destination: "/rro", Type: "bind", Source: "/srv/rro", Options: []string{"rbind", "rro", "rnoexec"}},
	}
	want := []Bind{
		{Index: 1, Source: "/var/lib/c/hosts", Destination: "/etc/hosts", Recursive: true, Attach: 1},
		{Index: 3, Source: "/srv/data", Destination: "/data", ReadOnly: true, Attach: 2},
		{Index: 8, Source: "/k/log", Destination: "/dev/termination-log", Attach: 3},
		{Index: 9, Source: "/srv/sub", Destination: "/data/sub", Recursive: true, Attach: 4},
		{Index: 10, Source: "/srv/rro", Destination: "/rro", ReadOnly: true, Recursive: true, Attach: 5},
	}
	if got := Binds(mounts); !reflect.DeepEqual(got, want) {
		t.Errorf("Binds =\n%+v\nwant\n%+v", got, want)
	}
	if got := Binds(nil); got != nil {
		t.Errorf("Binds(nil) = %v", got)
	}
}

func TestVolume(t *testing.T) {
	for _, tc := range []struct {
		ro   bool
		want Bind
	}{
		{false, Bind{Source: "/h", Destination: "/c", Recursive: true, Attach: 1}},
		{true, Bind{Source: "/h", Destination: "/c", ReadOnly: true, Recursive: true, Attach: 1}},
	} {
		m := Volume("/h", "/c", tc.ro)
		if !IsBind(m) {
			t.Errorf("Volume(ro=%v) is no bind: %+v", tc.ro, m)
		}
		if got := Binds([]SpecMount{m}); len(got) != 1 || got[0] != tc.want {
			t.Errorf("Binds(Volume(ro=%v)) = %+v, want %+v", tc.ro, got, tc.want)
		}
	}
}
