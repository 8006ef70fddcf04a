package proto

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

var sampleAttr = Attr{
	Mode: unix.S_IFREG | 0644, Ino: 42, Dev: 0x803, Nlink: 1, UID: 1000, GID: 100,
	Rdev: 7, Size: 12345, Blksize: 4096, Blocks: 24,
	Atime: unix.Timespec{Sec: 1, Nsec: 2}, Mtime: unix.Timespec{Sec: -3, Nsec: 4},
	Ctime: unix.Timespec{Sec: 1 << 40, Nsec: 999999999},
}

var (
	sampleDirAttr  = Attr{Mode: unix.S_IFDIR | 0755, Ino: 43, Dev: 0x803, Nlink: 2}
	sampleLinkAttr = Attr{Mode: unix.S_IFLNK | 0777, Ino: 44, Dev: 0x803, Nlink: 1, Size: 33}
)

// sampleMessages has one message of every type, with non-zero fields.
func sampleMessages() []Message {
	var sfs unix.Statfs_t
	sfs.Type, sfs.Bsize, sfs.Blocks, sfs.Bfree, sfs.Bavail = 0xef53, 4096, 100, 50, 40
	sfs.Files, sfs.Ffree, sfs.Namelen, sfs.Frsize, sfs.Flags = 1000, 900, 255, 4096, 0x21
	sfs.Fsid.Val = [2]int32{-1, 7}
	return []Message{
		&Rerror{Errno: uint32(unix.ENOENT)},
		&Tattach{Version: Version, Mount: 3},
		&Rattach{Root: 1, Attr: sampleAttr},
		&Twalk{Dir: 1, Name: "etc"},
		&Rwalk{Node: 2, Attr: sampleAttr},
		&TwalkPath{Dir: 1, Names: []string{"usr", "lib", "x86_64-linux-gnu", "libc.so.6"}},
		&RwalkPath{Steps: []WalkStep{
			{Node: 2, Attr: sampleDirAttr},
			{Node: 3, Attr: sampleLinkAttr, Target: "../lib/x86_64-linux-gnu/libc.so.6"},
		}},
		&RwalkPath{Steps: []WalkStep{{Node: 4, Attr: sampleDirAttr}}, Errno: uint32(unix.ENOENT)},
		&TwalkOpen{Dir: 1, Names: []string{"etc", "ld.so.cache"}},
		&RwalkOpen{Steps: []WalkStep{{Node: 5, Attr: sampleDirAttr}, {Node: 6, Attr: sampleAttr}}, FD: -1},
		&Tstat{Node: 3},
		&Rstat{Attr: sampleAttr},
		&Topen{Node: 4, Flags: unix.O_RDONLY | unix.O_CLOEXEC},
		&Ropen{FD: -1},
		&Treadlink{Node: 5},
		&Rreadlink{Target: "../lib/x86_64-linux-gnu/libc.so.6"},
		&Tgetdents{Dir: 6, Offset: 0x7fffffffffffffff},
		&Rgetdents{Next: 99, EOF: true, Entries: []Dirent{
			{Name: "a", Ino: 1, Type: unix.DT_REG},
			{Name: "bin", Ino: 2, Type: unix.DT_LNK},
			{Name: strings.Repeat("n", NameMax), Ino: 3, Type: unix.DT_DIR},
		}},
		&Rgetdents{Next: 5},
		&Tstatfs{Node: 7},
		&Rstatfs{Statfs: sfs},
		&Tclose{Node: 8},
		&Rclose{},
		&Tdup{},
		&Rdup{FD: -1},
		&Tcreate{Dir: 1, Name: "new", Flags: unix.O_RDWR | unix.O_APPEND, Mode: 0640, UID: 1000, GID: NoID},
		&Rcreate{Node: 9, Attr: sampleAttr, FD: -1},
		&Tmkdir{Dir: 1, Name: "d", Mode: 01777, UID: 0, GID: 0},
		&Rmkdir{Node: 10, Attr: sampleAttr},
		&Tmknod{Dir: 1, Name: "fifo", Mode: unix.S_IFIFO | 0600, UID: NoID, GID: NoID},
		&Rmknod{Node: 11, Attr: sampleAttr},
		&Tsymlink{Dir: 1, Name: "l", Target: "../../etc/passwd", UID: 5, GID: 6},
		&Rsymlink{Node: 12, Attr: sampleAttr},
		&Tlink{Dir: 1, Name: "hard", Target: 3},
		&Rlink{Node: 13, Attr: sampleAttr},
		&Tunlink{Dir: 1, Name: "gone", Flags: unix.AT_REMOVEDIR},
		&Runlink{},
		&Trename{OldDir: 1, OldName: "a", NewDir: 2, NewName: "b", Flags: unix.RENAME_EXCHANGE},
		&Rrename{},
		&Tsetattr{Node: 4, Mask: SetattrMode | SetattrSize | SetattrMtime, Mode: 0755, UID: 1, GID: 2,
			Size: 1 << 33, Atime: unix.Timespec{Nsec: unix.UTIME_OMIT}, Mtime: unix.Timespec{Sec: 5, Nsec: unix.UTIME_NOW}},
		&Rsetattr{Attr: sampleAttr},
		&Tgetxattr{Node: 4, Name: "user.mime"},
		&Rgetxattr{Value: "text/plain\x00\xff"},
		&Tsetxattr{Node: 4, Name: "trusted.x", Value: strings.Repeat("v", 1000), Flags: unix.XATTR_CREATE},
		&Rsetxattr{},
		&Tlistxattr{Node: 4},
		&Rlistxattr{Names: []string{"user.a", "trusted.b"}},
		&Rlistxattr{},
		&Tremovexattr{Node: 4, Name: "user.a"},
		&Rremovexattr{},
		&Tfsync{Node: 4, DataOnly: true},
		&Rfsync{},
		&Tfallocate{Node: 4, Mode: unix.FALLOC_FL_KEEP_SIZE, Offset: 4096, Length: 1 << 20},
		&Rfallocate{},
		&Tbind{Dir: 1, Name: "sock", SockType: unix.SOCK_STREAM, Mode: 0755, UID: NoID, GID: NoID},
		&Rbind{Node: 14, Attr: sampleAttr, FD: -1},
		&Tconnect{Dir: 1, Name: "sock", SockType: unix.SOCK_SEQPACKET},
		&Rconnect{FD: -1},
		&Ttmpfile{Dir: 1, Flags: unix.O_RDWR | unix.O_EXCL, Mode: 0600, UID: 1, GID: NoID},
		&Rtmpfile{Node: 15, Attr: sampleAttr, FD: -1},
	}
}

func TestRoundTrip(t *testing.T) {
	for _, m := range sampleMessages() {
		t.Run(m.Type().String(), func(t *testing.T) {
			b, err := Encode(nil, 0xdeadbeef, m)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			tag, got, err := Decode(b)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if tag != 0xdeadbeef {
				t.Errorf("tag = %#x, want 0xdeadbeef", tag)
			}
			if !reflect.DeepEqual(got, m) {
				t.Errorf("Decode(Encode(m)) = %+v, want %+v", got, m)
			}
			// Every proper prefix is too short, never a panic or success.
			for i := 0; i < len(b); i++ {
				if _, _, err := Decode(b[:i]); err == nil {
					t.Fatalf("Decode of %d-byte prefix succeeded", i)
				}
			}
			// A trailing byte is refused.
			if _, _, err := Decode(append(b, 0)); !errors.Is(err, errTrailing) {
				t.Errorf("Decode with trailing byte: err = %v, want errTrailing", err)
			}
		})
	}
}

func TestEncodeAppends(t *testing.T) {
	prefix := []byte("xyz")
	b, err := Encode(prefix, 1, &Tstat{Node: 9})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, prefix) {
		t.Fatalf("Encode dropped the prefix: %q", b)
	}
	if _, m, err := Decode(b[3:]); err != nil || m.(*Tstat).Node != 9 {
		t.Fatalf("Decode = %v, %v", m, err)
	}
}

func TestEncodeErrors(t *testing.T) {
	many := make([]Dirent, MaxMessage/12+1)
	for i := range many {
		many[i] = Dirent{Name: "x", Type: unix.DT_REG}
	}
	tests := []struct {
		name string
		m    Message
		want error
	}{
		{"string over 64KiB", &Twalk{Name: strings.Repeat("a", 70000)}, errStringSize},
		{"message over MaxMessage", &Rgetdents{Entries: many}, errTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Encode([]byte{1}, 0, tt.m)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if len(b) != 1 {
				t.Errorf("failed Encode left %d bytes, want the original 1", len(b))
			}
		})
	}
}

// raw builds a message from a header and body fields.
func raw(tag uint32, t MsgType, fields ...any) []byte {
	b := binary.LittleEndian.AppendUint32(nil, tag)
	b = append(b, byte(t))
	for _, f := range fields {
		switch v := f.(type) {
		case uint8:
			b = append(b, v)
		case uint16:
			b = binary.LittleEndian.AppendUint16(b, v)
		case uint32:
			b = binary.LittleEndian.AppendUint32(b, v)
		case uint64:
			b = binary.LittleEndian.AppendUint64(b, v)
		case string:
			b = append(b, v...)
		default:
			panic("raw: bad field type")
		}
	}
	return b
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, errShort},
		{"header only part", []byte{1, 2, 3}, errShort},
		{"unknown type", raw(1, 200), errUnknown},
		{"type zero", raw(1, 0), errUnknown},
		{"Rerror errno 0", raw(1, MsgRerror, uint32(0)), errBadValue},
		{"Rerror errno too big", raw(1, MsgRerror, uint32(5000)), errBadValue},
		{"Twalk name longer than body", raw(1, MsgTwalk, uint64(1), uint16(10), "abc"), errShort},
		{"Rgetdents bad bool", raw(1, MsgRgetdents, uint64(0), uint8(2), uint32(0)), errBadValue},
		{"Rgetdents huge count", raw(1, MsgRgetdents, uint64(0), uint8(0), uint32(0xffffffff)), errShort},
		{"Rgetdents count beyond body", raw(1, MsgRgetdents, uint64(0), uint8(0), uint32(2),
			uint64(1), uint8(unix.DT_REG), uint16(1), "a"), errShort},
		{"Rgetdents name with slash", raw(1, MsgRgetdents, uint64(0), uint8(0), uint32(1),
			uint64(1), uint8(unix.DT_REG), uint16(3), "a/b"), errBadValue},
		{"Rgetdents dot-dot", raw(1, MsgRgetdents, uint64(0), uint8(0), uint32(1),
			uint64(1), uint8(unix.DT_DIR), uint16(2), ".."), errBadValue},
		{"Rgetdents empty name", raw(1, MsgRgetdents, uint64(0), uint8(0), uint32(1),
			uint64(1), uint8(unix.DT_DIR), uint16(0), uint64(0)), errBadValue},
		{"Rgetdents bad type", raw(1, MsgRgetdents, uint64(0), uint8(0), uint32(1),
			uint64(1), uint8(3), uint16(1), "a"), errBadValue},
		{"Rreadlink empty", raw(1, MsgRreadlink, uint16(0)), errBadValue},
		{"Rreadlink NUL", raw(1, MsgRreadlink, uint16(3), "a\x00b"), errBadValue},
		{"Rreadlink too long", raw(1, MsgRreadlink, uint16(PathMax), strings.Repeat("a", PathMax)), errBadValue},
		{"Tclose trailing", raw(1, MsgTclose, uint64(1), uint8(0)), errTrailing},
		{"Tsetattr unknown mask bit", raw(1, MsgTsetattr, uint64(1), uint32(1<<6), uint32(0), uint32(0),
			uint32(0), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0)), errBadValue},
		{"Tfsync bad bool", raw(1, MsgTfsync, uint64(1), uint8(7)), errBadValue},
		{"Rlistxattr huge count", raw(1, MsgRlistxattr, uint32(0xffffffff)), errShort},
		{"Rlistxattr empty name", raw(1, MsgRlistxattr, uint32(1), uint16(0), uint8(0)), errBadValue},
		{"Rlistxattr NUL in name", raw(1, MsgRlistxattr, uint32(1), uint16(3), "a\x00b"), errBadValue},
		{"too large", make([]byte, MaxMessage+1), errTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, m, err := Decode(tt.b)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Decode = %v, %v; want error %v", m, err, tt.want)
			}
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %T is not a *DecodeError", err)
			}
			if want := len(tt.b) >= headerSize && len(tt.b) <= MaxMessage; de.HasTag != want {
				t.Errorf("HasTag = %v, want %v", de.HasTag, want)
			}
		})
	}
}

func TestValidName(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"a", true},
		{"...", true},
		{".hidden", true},
		{strings.Repeat("x", NameMax), true},
		{"", false},
		{".", false},
		{"..", false},
		{"a/b", false},
		{"/", false},
		{"a\x00", false},
		{strings.Repeat("x", NameMax+1), false},
	}
	for _, tt := range tests {
		if got := ValidName(tt.name); got != tt.want {
			t.Errorf("ValidName(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestIsRequest(t *testing.T) {
	for _, m := range sampleMessages() {
		want := strings.HasPrefix(m.Type().String(), "T")
		if got := IsRequest(m.Type()); got != want {
			t.Errorf("IsRequest(%v) = %v, want %v", m.Type(), got, want)
		}
	}
}

func TestMaxRequest(t *testing.T) {
	b, err := Encode(nil, ^uint32(0), &Twalk{Dir: ^Handle(0), Name: strings.Repeat("n", NameMax)})
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > MaxRequest {
		t.Fatalf("longest Twalk is %d bytes, MaxRequest is %d", len(b), MaxRequest)
	}
	for _, m := range sampleMessages() {
		if b, _ := Encode(nil, 0, m); IsRequest(m.Type()) && len(b) > MaxRequest {
			t.Errorf("%v is %d bytes, more than MaxRequest", m.Type(), len(b))
		}
	}
}
