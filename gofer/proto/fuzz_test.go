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
