// Package e2e runs real programs from the host (static busybox, dynamic
// Debian binaries, python3) natively and under `runsc do --rootfs /`, and
// requires the same output and exit status from both. The native run
// happens in fresh namespaces with a read-only root (see test/internal/
// harness), so both runs see the same file system.
//
// The sandboxed half fails when runsc is missing or broken; only
// MOAT_NATIVE_ONLY=1 turns it into a skip.
package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat/test/internal/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }

// baseEnv is the whole environment of both runs.
var baseEnv = []string{
	"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
	"HOME=/root",
	"LANG=C",
	"LC_ALL=C",
	"TZ=UTC",
}

// program is one end-to-end case.
type program struct {
	name     string
	argv     []string
	env      []string // nil means baseEnv
	stdin    []byte
	wantExit int
	// check validates the native output on its own, so a broken host
	// setup is caught even when both runs agree.
	check func(t *testing.T, out string)
	// normalize, if set, maps an output before comparison.
	normalize func(string) string
	needs     string // a host file the case needs
}

func sortedLines(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n") + "\n"
}

const busyboxScript = `echo hello; for i in 1 2 3; do echo $i; done | busybox wc -l; ` +
	`busybox ls /bin | busybox head -3; (busybox sleep 0.2; echo late) & wait; ` +
	`trap "echo got-usr1" USR1; kill -USR1 $$; exit 7`

const pythonScript = `
import json, os, subprocess, threading
sums = [0] * 8
def work(i):
    sums[i] = sum(range(i * 10000))
threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
etc = os.listdir("/etc")
print(json.dumps({"sums": sums, "passwd_in_etc": "passwd" in etc, "n_etc": len(etc)}, sort_keys=True))
r = subprocess.run(["/bin/echo", "x"], capture_output=True, text=True)
print(r.returncode, r.stdout.strip())
print(json.loads('{"a": [1, 2, {"b": null}]}'))
print(os.getpid(), os.getcwd())
`

// pythonProcScript checks what Python learns about the sandbox from /proc
// and /sys (issue #3): CPU counts that agree, its descriptors, its status.
const pythonProcScript = `
import os, multiprocessing
n = os.cpu_count()
print("cpus", n == multiprocessing.cpu_count() == len(os.sched_getaffinity(0)), n > 0)
fd = os.open("/etc/passwd", os.O_RDONLY)
names = os.listdir("/proc/self/fd")
print("fds", all(str(i) in names for i in (0, 1, 2, fd)), os.readlink("/proc/self/fd/%d" % fd))
with open("/proc/cpuinfo") as f:
    print("cpuinfo", sum(1 for l in f if l.startswith("processor")) == n)
with open("/proc/self/status") as f:
    st = dict(l.rstrip("\n").split(":\t", 1) for l in f if ":\t" in l)
print("status", st["Name"], int(st["Pid"]) == os.getpid(), st["PPid"])
print("exe", os.readlink("/proc/self/exe"))
with open("/proc/meminfo") as f:
    print("meminfo", int(f.readline().split()[1]) > 0)
with open("/proc/self/comm") as f:
    print("comm", f.read().strip())
`

func programs() []program {
	return []program{
		{
			name:     "busybox_sh",
			argv:     []string{"/bin/busybox", "sh", "-c", busyboxScript},
			wantExit: 7,
			needs:    "/bin/busybox",
			check: func(t *testing.T, out string) {
				lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
				if len(lines) != 7 || lines[0] != "hello" || lines[1] != "3" ||
					lines[5] != "late" || lines[6] != "got-usr1" {
					t.Errorf("native busybox output unexpected:\n%s", out)
				}
			},
		},
		{
			name:  "busybox_cat_stdin",
			argv:  []string{"/bin/busybox", "cat"},
			stdin: []byte("line one\nline two\n\x00binary\xff\n"),
			needs: "/bin/busybox",
			check: func(t *testing.T, out string) {
				if out != "line one\nline two\n\x00binary\xff\n" {
					t.Errorf("native cat output %q", out)
				}
			},
		},
		{
			name:  "ls_la_etc",
			argv:  []string{"/bin/ls", "-la", "/etc"},
			needs: "/bin/ls",
			check: func(t *testing.T, out string) {
				if !strings.Contains(out, " passwd\n") || !strings.HasPrefix(out, "total ") {
					t.Errorf("native ls output unexpected:\n%s", out)
				}
			},
		},
		{
			name:      "env",
			argv:      []string{"/usr/bin/env"},
			env:       append(slices.Clone(baseEnv), "MOAT_E2E=value with spaces", "EMPTY="),
			needs:     "/usr/bin/env",
			normalize: sortedLines,
			check: func(t *testing.T, out string) {
				want := sortedLines(strings.Join(append(slices.Clone(baseEnv),
					"MOAT_E2E=value with spaces", "EMPTY="), "\n"))
				if sortedLines(out) != want {
					t.Errorf("native env output:\n%s\nwant (sorted):\n%s", out, want)
				}
			},
		},
		{
			name:  "sha256sum",
			argv:  []string{"/usr/bin/sha256sum", "/etc/passwd", "/etc/group"},
			needs: "/usr/bin/sha256sum",
			check: func(t *testing.T, out string) {
				if strings.Count(out, "\n") != 2 || !strings.Contains(out, "  /etc/passwd\n") {
					t.Errorf("native sha256sum output unexpected:\n%s", out)
				}
			},
		},
		{
			name: "dash_pipeline",
			argv: []string{"/bin/sh", "-c",
				`cd /etc && ls | sort | head -5; grep -c '^root:' passwd; echo "$(basename "$PWD")"; exit 3`},
			wantExit: 3,
			needs:    "/bin/sh",
			check: func(t *testing.T, out string) {
				if !strings.HasSuffix(out, "\n1\netc\n") {
					t.Errorf("native sh output unexpected:\n%s", out)
				}
			},
		},
		{
			name:  "python3",
			argv:  []string{"/usr/bin/python3", "-I", "-B", "-c", pythonScript},
			needs: "/usr/bin/python3",
			check: func(t *testing.T, out string) {
				if !strings.Contains(out, `"passwd_in_etc": true`) || !strings.Contains(out, "\n0 x\n") ||
					!strings.Contains(out, "\n1 /\n") {
					t.Errorf("native python output unexpected:\n%s", out)
				}
			},
		},
		{
			name:  "python3_proc",
			argv:  []string{"/usr/bin/python3", "-I", "-B", "-c", pythonProcScript},
			needs: "/usr/bin/python3",
			check: func(t *testing.T, out string) {
				if !strings.HasPrefix(out, "cpus True True\nfds True /etc/passwd\ncpuinfo True\nstatus python3 True 0\n") {
					t.Errorf("native python output unexpected:\n%s", out)
				}
			},
		},
	}
}

func TestPrograms(t *testing.T) {
	for _, p := range programs() {
		t.Run(p.name, func(t *testing.T) { runProgram(t, p) })
	}
}

// runProgram runs p natively and sandboxed and compares the two runs.
func runProgram(t *testing.T, p program) {
	if _, err := os.Stat(p.needs); err != nil {
		t.Fatalf("%s is missing on this host (run scripts/setup-deps.sh): %v", p.needs, err)
	}
	env := p.env
	if env == nil {
		env = baseEnv
	}
	spec := harness.Spec{Argv: p.argv, Env: env, Stdin: p.stdin, Timeout: 60 * time.Second}
	if spec.Stdin == nil {
		spec.Stdin = []byte{}
	}
	native := harness.RunNative(spec)
	if native.Err != nil || native.ExitCode != p.wantExit {
		t.Fatalf("native run: want exit %d, got %s\nstdout:\n%s", p.wantExit, native, native.Stdout)
	}
	p.check(t, string(native.Stdout))

	runsc := harness.RequireRunsc(t)
	sandbox := harness.RunSandbox(runsc, spec)
	if sandbox.Err != nil || sandbox.ExitCode != p.wantExit {
		t.Errorf("sandboxed run: want exit %d, got %s\ncommand: %s", p.wantExit, sandbox,
			strings.Join(harness.SandboxArgv(runsc, spec), " "))
	}
	nout, sout := string(native.Stdout), string(sandbox.Stdout)
	if p.normalize != nil {
		nout, sout = p.normalize(nout), p.normalize(sout)
	}
	if nout != sout {
		t.Errorf("output differs:\n%s", diff(nout, sout))
	}
}

// TestRunscDoExitStatus checks the exit-status contract of `runsc do` with
// a static program: the status of the command is runsc's status.
func TestRunscDoExitStatus(t *testing.T) {
	for _, code := range []int{0, 1, 42, 255} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			spec := harness.Spec{
				Argv: []string{"/bin/busybox", "sh", "-c", fmt.Sprintf("exit %d", code)},
				Env:  baseEnv,
			}
			native := harness.RunNative(spec)
			if native.ExitCode != code {
				t.Fatalf("native: want exit %d, got %s", code, native)
			}
			runsc := harness.RequireRunsc(t)
			if got := harness.RunSandbox(runsc, spec); got.ExitCode != code {
				t.Errorf("sandboxed: want exit %d, got %s", code, got)
			}
		})
	}
}

// TestRunscDoCwd checks --cwd against the native working directory.
func TestRunscDoCwd(t *testing.T) {
	spec := harness.Spec{Argv: []string{"/bin/busybox", "pwd"}, Env: baseEnv, Dir: "/usr/share"}
	native := harness.RunNative(spec)
	if string(native.Stdout) != "/usr/share\n" {
		t.Fatalf("native pwd: %q (%s)", native.Stdout, native)
	}
	runsc := harness.RequireRunsc(t)
	if got := harness.RunSandbox(runsc, spec); string(got.Stdout) != "/usr/share\n" || got.ExitCode != 0 {
		t.Errorf("sandboxed pwd: %q (%s)", got.Stdout, got)
	}
}

// TestRunscBinaryRuns checks that the runsc binary itself starts: a
// broken build shows up here first, with its own message.
func TestRunscBinaryRuns(t *testing.T) {
	runsc := harness.RequireRunsc(t)
	out, err := exec.Command(runsc, "--help").CombinedOutput()
	if err != nil && !strings.Contains(string(out), "do") {
		t.Fatalf("%s --help: %v\n%s", filepath.Base(runsc), err, out)
	}
}

// diff shows the first differing line of two outputs with context.
func diff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < max(len(al), len(bl)); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y || i >= len(al) || i >= len(bl) {
			return fmt.Sprintf("line %d:\n  native:  %q\n  sandbox: %q\nnative output:\n%s\nsandbox output:\n%s",
				i+1, x, y, clip(a), clip(b))
		}
	}
	return "(equal)"
}

func clip(s string) string {
	if len(s) > 3000 {
		return s[:3000] + "..."
	}
	return s
}
