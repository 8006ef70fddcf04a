package proto

import (
	"bytes"
	"testing"
)

// checkDecode is the property every decoder must have: no panic, and a
// message that decodes re-encodes to exactly the input (the encoding is
// canonical, so a decoder cannot read more than the bytes hold).
func checkDecode(t *testing.T, b []byte) {
	tag, m, err := Decode(b)
	if err != nil {
		return
	}
	out, err := Encode(nil, tag, m)
	if err != nil {
		t.Fatalf("Encode of decoded %v: %v", m.Type(), err)
	}
	if !bytes.Equal(out, b) {
		t.Fatalf("re-encoding %v differs:\n in: %x\nout: %x", m.Type(), b, out)
	}
}

func FuzzDecode(f *testing.F) {
	for _, m := range sampleMessages() {
		b, err := Encode(nil, 1, m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(checkDecode)
}

// fuzzType fuzzes the body decoder of one message type.
func fuzzType(f *testing.F, typ MsgType) {
	for _, m := range sampleMessages() {
		if m.Type() != typ {
			continue
		}
		b, err := Encode(nil, 0, m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[headerSize:])
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, body []byte) {
		b := append([]byte{0, 0, 0, 0, byte(typ)}, body...)
		checkDecode(t, b)
	})
}

func FuzzRerror(f *testing.F)    { fuzzType(f, MsgRerror) }
func FuzzTattach(f *testing.F)   { fuzzType(f, MsgTattach) }
func FuzzRattach(f *testing.F)   { fuzzType(f, MsgRattach) }
func FuzzTwalk(f *testing.F)     { fuzzType(f, MsgTwalk) }
func FuzzRwalk(f *testing.F)     { fuzzType(f, MsgRwalk) }
func FuzzTwalkPath(f *testing.F) { fuzzType(f, MsgTwalkPath) }
func FuzzRwalkPath(f *testing.F) { fuzzType(f, MsgRwalkPath) }
func FuzzTwalkOpen(f *testing.F) { fuzzType(f, MsgTwalkOpen) }
func FuzzRwalkOpen(f *testing.F) { fuzzType(f, MsgRwalkOpen) }
func FuzzTstat(f *testing.F)     { fuzzType(f, MsgTstat) }
func FuzzRstat(f *testing.F)     { fuzzType(f, MsgRstat) }
func FuzzTopen(f *testing.F)     { fuzzType(f, MsgTopen) }
func FuzzRopen(f *testing.F)     { fuzzType(f, MsgRopen) }
func FuzzTreadlink(f *testing.F) { fuzzType(f, MsgTreadlink) }
func FuzzRreadlink(f *testing.F) { fuzzType(f, MsgRreadlink) }
func FuzzTgetdents(f *testing.F) { fuzzType(f, MsgTgetdents) }
func FuzzRgetdents(f *testing.F) { fuzzType(f, MsgRgetdents) }
func FuzzTstatfs(f *testing.F)   { fuzzType(f, MsgTstatfs) }
func FuzzRstatfs(f *testing.F)   { fuzzType(f, MsgRstatfs) }
func FuzzTclose(f *testing.F)    { fuzzType(f, MsgTclose) }
func FuzzRclose(f *testing.F)    { fuzzType(f, MsgRclose) }
func FuzzTdup(f *testing.F)      { fuzzType(f, MsgTdup) }
func FuzzRdup(f *testing.F)      { fuzzType(f, MsgRdup) }

func FuzzTcreate(f *testing.F)      { fuzzType(f, MsgTcreate) }
func FuzzRcreate(f *testing.F)      { fuzzType(f, MsgRcreate) }
func FuzzTmkdir(f *testing.F)       { fuzzType(f, MsgTmkdir) }
func FuzzRmkdir(f *testing.F)       { fuzzType(f, MsgRmkdir) }
func FuzzTmknod(f *testing.F)       { fuzzType(f, MsgTmknod) }
func FuzzRmknod(f *testing.F)       { fuzzType(f, MsgRmknod) }
func FuzzTsymlink(f *testing.F)     { fuzzType(f, MsgTsymlink) }
func FuzzRsymlink(f *testing.F)     { fuzzType(f, MsgRsymlink) }
func FuzzTlink(f *testing.F)        { fuzzType(f, MsgTlink) }
func FuzzRlink(f *testing.F)        { fuzzType(f, MsgRlink) }
func FuzzTunlink(f *testing.F)      { fuzzType(f, MsgTunlink) }
func FuzzRunlink(f *testing.F)      { fuzzType(f, MsgRunlink) }
func FuzzTrename(f *testing.F)      { fuzzType(f, MsgTrename) }
func FuzzRrename(f *testing.F)      { fuzzType(f, MsgRrename) }
func FuzzTsetattr(f *testing.F)     { fuzzType(f, MsgTsetattr) }
func FuzzRsetattr(f *testing.F)     { fuzzType(f, MsgRsetattr) }
func FuzzTgetxattr(f *testing.F)    { fuzzType(f, MsgTgetxattr) }
func FuzzRgetxattr(f *testing.F)    { fuzzType(f, MsgRgetxattr) }
func FuzzTsetxattr(f *testing.F)    { fuzzType(f, MsgTsetxattr) }
func FuzzRsetxattr(f *testing.F)    { fuzzType(f, MsgRsetxattr) }
func FuzzTlistxattr(f *testing.F)   { fuzzType(f, MsgTlistxattr) }
func FuzzRlistxattr(f *testing.F)   { fuzzType(f, MsgRlistxattr) }
func FuzzTremovexattr(f *testing.F) { fuzzType(f, MsgTremovexattr) }
func FuzzRremovexattr(f *testing.F) { fuzzType(f, MsgRremovexattr) }
func FuzzTfsync(f *testing.F)       { fuzzType(f, MsgTfsync) }
func FuzzRfsync(f *testing.F)       { fuzzType(f, MsgRfsync) }
func FuzzTfallocate(f *testing.F)   { fuzzType(f, MsgTfallocate) }
func FuzzRfallocate(f *testing.F)   { fuzzType(f, MsgRfallocate) }
func FuzzTbind(f *testing.F)        { fuzzType(f, MsgTbind) }
func FuzzRbind(f *testing.F)        { fuzzType(f, MsgRbind) }
func FuzzTconnect(f *testing.F)     { fuzzType(f, MsgTconnect) }
func FuzzRconnect(f *testing.F)     { fuzzType(f, MsgRconnect) }
func FuzzTtmpfile(f *testing.F)     { fuzzType(f, MsgTtmpfile) }
func FuzzRtmpfile(f *testing.F)     { fuzzType(f, MsgRtmpfile) }
