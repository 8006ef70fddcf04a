package loader

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// pad returns s zero-padded to BINPRM_BUF_SIZE, or cut to it, as the
// loader sees a file's first bytes.
func pad(s string) []byte {
	b := make([]byte, binprmBufSize)
	copy(b, s)
	return b
}

func TestParseShebang(t *testing.T) {
	long := "/" + strings.Repeat("a", 300)
	for _, tc := range []struct {
		name string
		in   string
		want shebang
		err  unix.Errno
	}{
		{name: "plain", in: "#!/bin/sh\necho hi\n", want: shebang{Interp: "/bin/sh"}},
		{name: "argument", in: "#!/bin/sh -e\n", want: shebang{Interp: "/bin/sh", Arg: "-e", HasArg: true}},
		{name: "blanks around", in: "#! \t/bin/sh \t-x  y \t\n", want: shebang{Interp: "/bin/sh", Arg: "-x  y", HasArg: true}},
		{name: "tab separator", in: "#!/bin/sh\t-x\ty\t\n", want: shebang{Interp: "/bin/sh", Arg: "-x\ty", HasArg: true}},
		{name: "env -S", in: "#!/usr/bin/env -S python3 -u\n", want: shebang{Interp: "/usr/bin/env", Arg: "-S python3 -u", HasArg: true}},
		{name: "trailing blank only", in: "#!/bin/sh \n", want: shebang{Interp: "/bin/sh"}},
		{name: "no newline, short file", in: "#!/bin/sh", want: shebang{Interp: "/bin/sh"}},
		{name: "no newline, blank then EOF", in: "#!/bin/sh ", want: shebang{Interp: "/bin/sh", Arg: "", HasArg: true}},
		{name: "NUL ends argument", in: "#!/bin/sh -x\x00y\n", want: shebang{Interp: "/bin/sh", Arg: "-x", HasArg: true}},
		{name: "NUL after blank", in: "#!/bin/sh \x00zz\n", want: shebang{Interp: "/bin/sh", Arg: "", HasArg: true}},
		{name: "NUL keeps trailing blank", in: "#!/bin/sh 0 ", want: shebang{Interp: "/bin/sh", Arg: "0 ", HasArg: true}},
		{name: "NUL ends path", in: "#!/bin/sh\x00 -x\n", want: shebang{Interp: "/bin/sh"}},
		{name: "CR kept", in: "#!/bin/sh\r\n", want: shebang{Interp: "/bin/sh\r"}},
		{name: "other whitespace kept", in: "#!/bin/sh\v-x\n", want: shebang{Interp: "/bin/sh\v-x"}},
		{name: "relative", in: "#!interp arg\n", want: shebang{Interp: "interp", Arg: "arg", HasArg: true}},
		{name: "empty", in: "#!\n", err: unix.ENOEXEC},
		{name: "blanks", in: "#! \t \n", err: unix.ENOEXEC},
		// Linux then fails to open "" with EACCES; see TestLoadScriptErrors.
		{name: "only #!", in: "#!", want: shebang{Interp: ""}},
		{name: "blanks then EOF", in: "#!   ", want: shebang{Interp: ""}},
		{name: "all blanks, no newline", in: "#!" + strings.Repeat(" ", 300), err: unix.ENOEXEC},
		{name: "path truncated", in: "#!" + long, err: unix.ENOEXEC},
		{name: "path truncated after blanks", in: "#!   " + long, err: unix.ENOEXEC},
		{name: "newline past the buffer", in: "#!" + long + "\n", err: unix.ENOEXEC},
		{name: "argument truncated", in: "#!/bin/sh " + long, want: shebang{Interp: "/bin/sh", Arg: long[:binprmBufSize-1-len("#!/bin/sh ")], HasArg: true}},
		{name: "path fills the buffer but one", in: "#!" + long[:252] + " \x01", want: shebang{Interp: long[:252]}},
		{name: "not a script", in: "#/bin/sh\n", err: unix.ENOEXEC},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseShebang(pad(tc.in))
			if errnoOf(err) != tc.err {
				t.Fatalf("parseShebang: %+v %v, want error %v", got, err, tc.err)
			}
			if err == nil && got != tc.want {
				t.Errorf("parseShebang = %#v, want %#v", got, tc.want)
			}
		})
	}
}

// TestShebangMatchesLinux runs scripts natively with an interpreter that
// prints its argv and checks that the loader rewrites argv the same way.
func TestShebangMatchesLinux(t *testing.T) {
	printer := buildC(t, `#include <stdio.h>
int main(int argc, char **argv) { for (int i = 0; i < argc; i++) printf("%s%c", argv[i], 0); return 0; }
`)
	dir := t.TempDir()
	for i, line := range []string{
		"#!%s\n",
		"#!%s -x\n",
		"#! \t%s \t-x  y \t\n",
		"#!%s\t-x\ty\t\n",
		"#!%s ",
		"#!%s",
		"#!%s \x00zz\n",
		"#!%s -a\x00b\n",
		"#!%s " + strings.Repeat("z", 400),
		"#!%s\x00 -q\n",
		"#!%s 0 ",
	} {
		t.Run(fmt.Sprintf("%d", i), func(t *testing.T) {
			content := fmt.Sprintf(line, printer)
			script := filepath.Join(dir, fmt.Sprintf("s%d", i))
			if err := os.WriteFile(script, []byte(content), 0o755); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(script, "A", "B C").Output()
			if err != nil {
				t.Fatalf("native: %v", err)
			}
			native := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
			sb, err := parseShebang(pad(content))
			if err != nil {
				t.Fatalf("parseShebang: %v", err)
			}
			got := []string{sb.Interp}
			if sb.HasArg {
				got = append(got, sb.Arg)
			}
			got = append(got, script, "A", "B C")
			if !slices.Equal(got, native) {
				t.Errorf("argv %q, Linux %q", got, native)
			}
		})
	}
}

// scriptFS builds an opener with a test ELF at /bin/sh and the given
// scripts.
func scriptFS(scripts map[string]string) *mapOpener {
	op := &mapOpener{files: map[string]File{"/bin/sh": newBytesFile(newTestELF().bytes())}}
	for name, content := range scripts {
		op.files[name] = newBytesFile([]byte(content))
	}
	return op
}

func TestLoadScript(t *testing.T) {
	op := scriptFS(map[string]string{
		"/usr/bin/tool": "#!/bin/sh -e\nexit 0\n",
	})
	m := newFakeMem()
	args := testArgs(op.files["/usr/bin/tool"])
	args.Filename = "/usr/bin/tool"
	args.Argv = []string{"tool", "a", "b"}
	res, err := Load(m, op, args)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := []string{"/bin/sh", "-e", "/usr/bin/tool", "a", "b"}
	if !slices.Equal(res.Argv, want) || res.ExeFilename != "/bin/sh" || res.Entry != 0x401000 {
		t.Errorf("result %+v", res)
	}
	// AT_EXECFN stays the path given to execve.
	checkStack(t, m, res, args, want)
}

func TestLoadScriptChain(t *testing.T) {
	for n := 1; n <= maxRewrites+1; n++ {
		t.Run(fmt.Sprintf("%d scripts", n), func(t *testing.T) {
			scripts := map[string]string{"/s0": "#!/bin/sh\n"}
			for i := 1; i < n; i++ {
				scripts[fmt.Sprintf("/s%d", i)] = fmt.Sprintf("#!/s%d\n", i-1)
			}
			op := scriptFS(scripts)
			top := fmt.Sprintf("/s%d", n-1)
			m := newFakeMem()
			args := testArgs(op.files[top])
			args.Filename = "./run"
			args.Argv = []string{"run", "x"}
			res, err := Load(m, op, args)
			if n > maxRewrites {
				if errnoOf(err) != unix.ELOOP {
					t.Fatalf("Load: %v, want ELOOP", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			// Like Linux: /bin/sh /s0 /s1 ... ./run x.
			want := []string{"/bin/sh"}
			for i := 0; i < n-1; i++ {
				want = append(want, fmt.Sprintf("/s%d", i))
			}
			want = append(want, "./run", "x")
			if !slices.Equal(res.Argv, want) {
				t.Errorf("argv %q, want %q", res.Argv, want)
			}
			checkStack(t, m, res, args, want)
		})
	}
}

func TestLoadScriptErrors(t *testing.T) {
	big := strings.Repeat("x", maxArgStrlen-1)
	for _, tc := range []struct {
		name   string
		script string
		argv   []string
		envv   []string
		want   unix.Errno
	}{
		{name: "missing interpreter", script: "#!/nope\n", want: unix.ENOENT},
		{name: "no interpreter", script: "#!  \n", want: unix.ENOEXEC},
		{name: "interpreter is text", script: "#!/text\n", want: unix.ENOEXEC},
		{name: "truncated path", script: "#!/" + strings.Repeat("p", 400), want: unix.ENOEXEC},
		// 15 big strings fit in 2 MiB; the rewrite adds more bytes
		// than it removes and goes over.
		{name: "rewrite exceeds limit", script: "#!/bin/sh " + strings.Repeat("y", 200) + "\n", argv: append([]string{"a"}, slices.Repeat([]string{big}, 15)...), envv: []string{strings.Repeat("e", 130825)}, want: unix.E2BIG},
		{name: "limit without rewrite", script: "\x7fELF", argv: append([]string{"a"}, slices.Repeat([]string{big}, 15)...), envv: []string{strings.Repeat("e", 130825)}, want: unix.ENOEXEC},
		{name: "empty interpreter", script: "#!", want: unix.EACCES},
		{name: "NUL interpreter", script: "#!\x00/bin/sh\n", want: unix.EACCES},
		{name: "empty argv", script: "#!/bin/sh\n", argv: []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			op := scriptFS(map[string]string{"/script": tc.script, "/text": "hello\n"})
			args := testArgs(op.files["/script"])
			args.Filename = "/script"
			if tc.argv != nil {
				args.Argv = tc.argv
			}
			if tc.envv != nil {
				args.Envv = tc.envv
			}
			res, err := Load(newFakeMem(), op, args)
			if errnoOf(err) != tc.want {
				t.Fatalf("Load: %v, want %v", err, tc.want)
			}
			if err == nil && len(args.Argv) == 0 && !slices.Equal(res.Argv, []string{"/bin/sh", "/script"}) {
				t.Errorf("argv %q", res.Argv)
			}
		})
	}
}
