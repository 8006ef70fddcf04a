package devpts

import (
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/synth"
)

// This file makes devpts a file system of its own, mountable at /dev/pts
// (by a spec's mounts or mount(2)), with the options mount(8) documents.

// FSType is the file system's type name.
const FSType = "devpts"

// superMagic is statfs's f_type for devpts (DEVPTS_SUPER_MAGIC).
const superMagic = 0x1cd1

// Options are a devpts mount's options.
type Options struct {
	// PtmxMode is the permission bits of pts/ptmx (ptmxmode=, octal).
	PtmxMode uint32
	// Mode is the permission bits of new pseudo-terminals (mode=, octal).
	Mode uint32
	// UID and GID, when SetUID and SetGID, own new pseudo-terminals
	// (uid=, gid=); otherwise the opener of ptmx's filesystem user and
	// group do, as on Linux.
	UID, GID       uint32
	SetUID, SetGID bool
}

// DefaultOptions are the options of New's instance: pts/ptmx mode 0, as
// Linux's ptmxmode default, and terminals 0620, as container runtimes
// mount devpts (mode=0620).
func DefaultOptions() Options { return Options{PtmxMode: 0, Mode: 0o620} }

// ParseOptions applies the comma-separated mount data to o: ptmxmode=
// and mode= (octal, at most 0777), uid= and gid= (numbers) change it;
// newinstance and max= (a number) are accepted and change nothing (every
// mount is a new instance).
// Anything else is EINVAL, as Linux refuses bogus devpts options.
func ParseOptions(data string, o Options) (Options, error) {
	for _, opt := range strings.Split(data, ",") {
		if opt == "" {
			continue
		}
		key, val, hasVal := strings.Cut(opt, "=")
		switch key {
		case "ptmxmode", "mode":
			n, err := strconv.ParseUint(val, 8, 32)
			if !hasVal || err != nil || n > 0o777 {
				return o, unix.EINVAL
			}
			if key == "mode" {
				o.Mode = uint32(n)
			} else {
				o.PtmxMode = uint32(n)
			}
		case "uid", "gid", "max":
			n, err := strconv.ParseUint(val, 10, 32)
			if !hasVal || err != nil {
				return o, unix.EINVAL
			}
			switch key {
			case "uid":
				o.UID, o.SetUID = uint32(n), true
			case "gid":
				o.GID, o.SetGID = uint32(n), true
			}
		case "newinstance":
			if hasVal {
				return o, unix.EINVAL
			}
		default:
			return o, unix.EINVAL
		}
	}
	return o, nil
}

// NewFilesystem returns a new devpts instance as a file system: its root
// holds ptmx and a node per open pseudo-terminal. sig receives terminal
// signals (nil: none are sent).
func NewFilesystem(sig Signaller, o Options) (*fs.Filesystem, *Devpts) {
	dir, _, dp := newDevpts(sig, o)
	return synth.NewFilesystem(FSType, superMagic, dir, false), dp
}
