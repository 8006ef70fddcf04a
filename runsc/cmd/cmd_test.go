package cmd

import (
	"bytes"
	"context"
	"flag"
	"strings"
	"testing"

	"github.com/google/subcommands"
	"github.com/moat-sandbox/moat/runsc/boot"
)

func TestEnvList(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"A=b", true},
		{"A=", true},
		{"A=b=c", true},
		{"PATH=/bin:/usr/bin", true},
		{"A", false},
		{"=b", false},
		{"", false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			var l envList
			err := l.Set(tc.in)
			if (err == nil) != tc.ok {
				t.Fatalf("Set(%q) = %v, want ok=%v", tc.in, err, tc.ok)
			}
			if tc.ok && (len(l) != 1 || l[0] != tc.in) {
				t.Errorf("list holds %q", l)
			}
		})
	}
}

// topicCmd is a help topic that records how it was run.
type topicCmd struct {
	format string
	ran    bool
	args   []string
}

func (*topicCmd) Name() string               { return "testtopic" }
func (*topicCmd) Synopsis() string           { return "a test topic" }
func (*topicCmd) Usage() string              { return "testtopic [--format=F]\n" }
func (c *topicCmd) SetFlags(f *flag.FlagSet) { f.StringVar(&c.format, "format", "text", "") }
func (c *topicCmd) Execute(_ context.Context, f *flag.FlagSet, _ ...any) subcommands.ExitStatus {
	c.ran, c.args = true, f.Args()
	return subcommands.ExitSuccess
}

// execute runs runsc's command set on args, as main would, writing help
// and errors to out.
func execute(out *bytes.Buffer, args ...string) subcommands.ExitStatus {
	top := flag.NewFlagSet("runsc", flag.ContinueOnError)
	top.Parse(args)
	c := subcommands.NewCommander(top, "runsc")
	c.Output, c.Error = out, out
	HideInternal(c)
	c.Register(NewHelp(c), "")
	c.Register(new(Do), "")
	c.Register(new(Gofer), InternalGroup)
	c.Register(new(Boot), InternalGroup)
	return c.Execute(context.Background())
}

func TestHelpHidesInternalCommands(t *testing.T) {
	var out bytes.Buffer
	if st := execute(&out, "help"); st != subcommands.ExitSuccess {
		t.Fatalf("help: status %v", st)
	}
	text := out.String()
	if !strings.Contains(text, "do ") {
		t.Errorf("help lacks do:\n%s", text)
	}
	for _, hidden := range []string{"boot", "gofer"} {
		if strings.Contains(text, "\t"+hidden) {
			t.Errorf("help lists internal command %s:\n%s", hidden, text)
		}
	}
	out.Reset()
	if st := execute(&out, "help", "boot"); st != subcommands.ExitSuccess || !strings.Contains(out.String(), "--gofer-fd") {
		t.Errorf("help boot: status %v, output:\n%s", st, out.String())
	}
}

func TestHelpTopic(t *testing.T) {
	topic := &topicCmd{}
	RegisterHelpTopic(topic)
	defer func() {
		topicsMu.Lock()
		delete(topics, topic.Name())
		topicsMu.Unlock()
	}()
	var out bytes.Buffer
	if st := execute(&out, "help", "testtopic", "--format=json", "extra"); st != subcommands.ExitSuccess {
		t.Fatalf("status %v, output:\n%s", st, out.String())
	}
	if !topic.ran || topic.format != "json" || len(topic.args) != 1 || topic.args[0] != "extra" {
		t.Errorf("topic ran=%v format=%q args=%q", topic.ran, topic.format, topic.args)
	}
	if st := execute(&out, "help", "testtopic", "--bogus"); st != subcommands.ExitUsageError {
		t.Errorf("bad topic flag: status %v, want usage error", st)
	}
	if !strings.Contains(NewHelp(nil).Usage(), "testtopic") {
		t.Errorf("help usage does not list the topic")
	}
}

func TestInternalCommandsCheckTheirFlags(t *testing.T) {
	var out bytes.Buffer
	for _, args := range [][]string{
		{"gofer"},                   // no --root, no --conn-fd
		{"gofer", "--root", "/"},    // no --conn-fd
		{"boot", "--gofer-fd", "3"}, // no command
		{"boot", "--", "true"},      // no --gofer-fd
		{"do"},                      // no command
		{"boot", "--env", "NOEQUALS", "--gofer-fd", "3", "--", "true"},
	} {
		out.Reset()
		if st := execute(&out, args...); st != subcommands.ExitUsageError {
			t.Errorf("runsc %q: status %v, want usage error; output:\n%s", args, st, out.String())
		}
	}
}

func TestParseVolume(t *testing.T) {
	for _, tc := range []struct {
		in      string
		dst     string
		ro, bad bool
	}{
		{in: "/h:/c", dst: "/c"},
		{in: "/h:/c:ro", dst: "/c", ro: true},
		{in: "/h:/c:rw", dst: "/c"},
		{in: "/h:/c:rx", bad: true},
		{in: "/h:c", bad: true},
		{in: ":/c", bad: true},
		{in: "/h", bad: true},
		{in: "/h:/c:ro:x", bad: true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			m, err := parseVolume(tc.in)
			if (err != nil) != tc.bad {
				t.Fatalf("parseVolume(%q) = %+v, %v", tc.in, m, err)
			}
			if tc.bad {
				return
			}
			b := boot.Binds([]boot.SpecMount{m})
			if len(b) != 1 || b[0].Destination != tc.dst || b[0].ReadOnly != tc.ro || b[0].Source != "/h" {
				t.Errorf("parseVolume(%q) gives binds %+v", tc.in, b)
			}
		})
	}
}
