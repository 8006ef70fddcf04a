package linux

import (
	"bytes"
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
)

func testStat() fs.Stat {
	return fs.Stat{
		Mode: unix.S_IFREG | 0o640, Nlink: 3, UID: 1000, GID: 100, Ino: 0x1234567890,
		Dev: unix.Mkdev(8, 1), Rdev: unix.Mkdev(136, 4), Size: 1 << 40, Blocks: 99, Blksize: 4096,
		Atime: unix.Timespec{Sec: 1, Nsec: 2}, Mtime: unix.Timespec{Sec: 3, Nsec: 4},
		Ctime: unix.Timespec{Sec: 5, Nsec: 6}, Btime: unix.Timespec{Sec: 7, Nsec: 8}, HasBtime: true,
	}
}

// The encodings must match the layouts x/sys/unix gives the kernel's
// structs.
func TestMarshalStat(t *testing.T) {
	st := testStat()
	var got unix.Stat_t
	if err := binary.Read(bytes.NewReader(marshalStat(&st)), binary.LittleEndian, &got); err != nil {
		t.Fatal(err)
	}
	want := unix.Stat_t{
		Dev: st.Dev, Ino: st.Ino, Nlink: 3, Mode: st.Mode, Uid: 1000, Gid: 100, Rdev: st.Rdev,
		Size: 1 << 40, Blksize: 4096, Blocks: 99, Atim: st.Atime, Mtim: st.Mtime, Ctim: st.Ctime,
	}
	if got != want {
		t.Errorf("stat decoded as %+v\nwant %+v", got, want)
	}
}

func TestMarshalStatx(t *testing.T) {
	st := testStat()
	b := marshalStatx(&st, 7)
	if len(b) != 256 {
		t.Fatalf("statx is %d bytes", len(b))
	}
	var got unix.Statx_t
	if err := binary.Read(bytes.NewReader(b), binary.LittleEndian, &got); err != nil {
		t.Fatal(err)
	}
	if got.Mode != uint16(st.Mode) || got.Nlink != 3 || got.Uid != 1000 || got.Ino != st.Ino || got.Size != 1<<40 ||
		got.Rdev_major != 136 || got.Rdev_minor != 4 || got.Dev_major != 8 || got.Dev_minor != 1 || got.Mnt_id != 7 ||
		got.Mtime.Sec != 3 || got.Mtime.Nsec != 4 || got.Btime.Sec != 7 || got.Mask&unix.STATX_BTIME == 0 || got.Blksize != 4096 {
		t.Errorf("statx decoded as %+v", got)
	}
}

func TestMarshalStatfs(t *testing.T) {
	s := fs.StatFS{Type: 0x9fa0, Bsize: 4096, Blocks: 10, Bfree: 5, Bavail: 4, Files: 3, Ffree: 2, NameLen: 255}
	var got unix.Statfs_t
	if err := binary.Read(bytes.NewReader(marshalStatfs(&s, nil)), binary.LittleEndian, &got); err != nil {
		t.Fatal(err)
	}
	if got.Type != 0x9fa0 || got.Bsize != 4096 || got.Blocks != 10 || got.Bavail != 4 || got.Namelen != 255 || got.Frsize != 4096 || got.Flags != 0x20 {
		t.Errorf("statfs decoded as %+v", got)
	}
}

func TestDirents(t *testing.T) {
	d := fs.Dirent{Name: "hello", Ino: 42, Type: unix.DT_REG, NextOff: 3}
	b := appendDirent(nil, d, false)
	// Parse it the way glibc does: unix.ParseDirent.
	var names []string
	consumed, _, names := unix.ParseDirent(b, -1, names)
	if consumed != len(b) || len(names) != 1 || names[0] != "hello" {
		t.Errorf("dirent64 parsed as %d %v (len %d)", consumed, names, len(b))
	}
	if len(b)%8 != 0 || b[18] != unix.DT_REG || binary.LittleEndian.Uint64(b[8:]) != 3 {
		t.Errorf("dirent64 bytes %v", b)
	}
	old := appendDirent(nil, d, true)
	reclen := int(binary.LittleEndian.Uint16(old[16:]))
	if reclen != len(old) || old[reclen-1] != unix.DT_REG || string(old[18:23]) != "hello" || old[23] != 0 {
		t.Errorf("old dirent bytes %v", old)
	}
}
