package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

func TestOCIExec(t *testing.T) {
	e := newOCIEnv(t)
	e.setArgs("sh", "-c", "while :; do sleep 1; done")
	e.mustRun("run", "--detach", "--bundle", e.bundle, "a")
	tests := []struct {
		name       string
		args       []string
		code       int
		stdout     string
		stderrWant string
	}{
		{"echo", []string{"a", "echo", "hi"}, 0, "hi\n", ""},
		{"exit code", []string{"a", "sh", "-c", "exit 4"}, 4, "", ""},
		{"signal", []string{"a", "sh", "-c", "kill -TERM $$"}, 128 + 15, "", ""},
		{"env cwd user", []string{"--env", "A=1", "-e", "B=2", "--cwd", "/tmp", "--user", "1000:1001", "--additional-gids", "5,6", "a", "sh", "-c", `echo $A$B; pwd; cat /proc/self/status | grep -E "^(Uid|Gid|Groups)"`}, 0,
			"12\n/tmp\nUid:\t1000\t1000\t1000\t1000\nGid:\t1001\t1001\t1001\t1001\nGroups:\t5 6 \n", ""},
		{"container env kept", []string{"a", "sh", "-c", "echo $PATH"}, 0, "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n", ""},
		// The spec's effective set (AUDIT_WRITE, KILL, NET_BIND_SERVICE) plus
		// SYS_ADMIN, read by the shell itself: a grep's execve as a
		// non-root user would clear it.
		{"caps added", []string{"--user", "1000", "--cap", "CAP_SYS_ADMIN", "a", "sh", "-c", `while read -r k v; do [ "$k" = CapEff: ] && echo "$v"; done </proc/self/status; :`}, 0, "0000000020200420\n", ""},
		{"ignored flags", []string{"--process-label", "x", "--apparmor", "y", "--cgroup", "z", "a", "true"}, 0, "", ""},
		{"not found", []string{"a", "nosuch"}, 127, "", "executable file not found in $PATH"},
		{"missing container", []string{"nosuch", "true"}, 1, "", "does not exist"},
		{"no command", []string{"a"}, 1, "", "requires a container id"},
		{"preserve-fds", []string{"--preserve-fds", "2", "a", "true"}, 1, "", "--preserve-fds=2 is not supported"},
		{"bad user", []string{"--user", "root", "a", "true"}, 1, "", "invalid --user"},
		{"tty detach without socket", []string{"-t", "-d", "a", "true"}, 1, "", "cannot allocate tty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := e.run(append([]string{"exec"}, tc.args...)...)
			if code != tc.code {
				t.Errorf("status %d, want %d (stderr %q)", code, tc.code, stderr)
			}
			if tc.stdout != "" && stdout != tc.stdout {
				t.Errorf("stdout %q, want %q", stdout, tc.stdout)
			}
			if !strings.Contains(stderr, tc.stderrWant) {
				t.Errorf("stderr %q lacks %q", stderr, tc.stderrWant)
			}
		})
	}
	t.Run("process file", func(t *testing.T) {
		p := specs.Process{Args: []string{"sh", "-c", "echo $X; pwd"}, Env: []string{"X=from-file"}, Cwd: "/bin"}
		b, _ := json.Marshal(&p)
		file := filepath.Join(t.TempDir(), "process.json")
		os.WriteFile(file, b, 0o644)
		if out := e.mustRun("exec", "--process", file, "a"); out != "from-file\n/bin\n" {
			t.Errorf("stdout %q", out)
		}
	})
	t.Run("pid file without detach", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "pid")
		e.mustRun("exec", "--pid-file", file, "a", "true")
		if b, err := os.ReadFile(file); err != nil || len(b) == 0 || strings.Contains(string(b), "\n") {
			t.Errorf("pid file %q, %v", b, err)
		}
	})
	t.Run("paused", func(t *testing.T) {
		e.mustRun("pause", "a")
		if st := e.state("a"); st.Status != "paused" {
			t.Errorf("state %q after pause", st.Status)
		}
		if code, _, stderr := e.run("exec", "a", "true"); code != 1 || !strings.Contains(stderr, "cannot exec in a paused container") {
			t.Errorf("exec while paused: %d %q", code, stderr)
		}
		if code, _, stderr := e.run("pause", "a"); code != 1 || !strings.Contains(stderr, "already paused") {
			t.Errorf("second pause: %d %q", code, stderr)
		}
		e.mustRun("resume", "a")
		if st := e.state("a"); st.Status != "running" {
			t.Errorf("state %q after resume", st.Status)
		}
		if code, _, stderr := e.run("resume", "a"); code != 1 || !strings.Contains(stderr, "not paused") {
			t.Errorf("second resume: %d %q", code, stderr)
		}
	})
	t.Run("update without a cgroup", func(t *testing.T) {
		if code, _, stderr := e.run("update", "--pids-limit", "10", "a"); code != 1 || !strings.Contains(stderr, "no cgroup") {
			t.Errorf("update: %d %q", code, stderr)
		}
	})
	e.mustRun("delete", "--force", "a")
	if code, _, stderr := e.run("exec", "a", "true"); code != 1 || !strings.Contains(stderr, "does not exist") {
		t.Errorf("exec after delete: %d %q", code, stderr)
	}
}

// The exec proxy as containerd's shim sees it: a subreaper runs runsc
// exec --detach --pid-file, then waits for the pid in the file, which it
// has adopted, and gets the process's status. The test runs that
// subreaper as a child (this test binary again), so that the test
// process itself adopts nothing.
func TestExecDetachSubreaper(t *testing.T) {
	if os.Getenv("MOAT_TEST_SUBREAPER") != "" {
		subreaper()
		return
	}
	e := newOCIEnv(t)
	e.setArgs("sh", "-c", "while :; do sleep 1; done")
	e.mustRun("run", "--detach", "--bundle", e.bundle, "a")
	for _, tc := range []struct {
		name   string
		script string
		signal string // sent to the proxy once it runs
		want   string
	}{
		{"exit status", "sleep 0.3; exit 5", "", "exited 5"},
		{"signal passed on", "trap 'exit 9' USR1; while :; do sleep 0.05; done", "USR1", "exited 9"},
		{"killed by a passed-on signal", "sleep 100", "TERM", "exited 143"},
		{"proxy killed", "sleep 100", "KILL", "signaled 9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestExecDetachSubreaper$")
			cmd.Env = append(os.Environ(), "MOAT_TEST_SUBREAPER=1",
				"SR_RUNSC="+e.bin, "SR_ROOT="+e.root, "SR_PIDFILE="+filepath.Join(dir, "pid"),
				"SR_SCRIPT="+tc.script, "SR_SIGNAL="+tc.signal)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("subreaper: %v\n%s", err, out)
			}
			if !strings.Contains(string(out), "reaped: "+tc.want) {
				t.Errorf("subreaper said %q, want %q", out, tc.want)
			}
		})
	}
	// The process of the killed proxy went with it.
	deadline := time.Now().Add(10 * time.Second)
	for {
		out := e.mustRun("ps", "a")
		if !strings.Contains(out, "sleep 100") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the exec'd processes outlived their proxies:\n%s", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// subreaper is TestExecDetachSubreaper's child.
func subreaper() {
	fail := func(f string, a ...any) {
		fmt.Printf(f+"\n", a...)
		os.Exit(1)
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fail("prctl: %v", err)
	}
	pidFile := os.Getenv("SR_PIDFILE")
	cmd := exec.Command(os.Getenv("SR_RUNSC"), "--root", os.Getenv("SR_ROOT"), "exec", "--detach", "--pid-file", pidFile, "a", "sh", "-c", os.Getenv("SR_SCRIPT"))
	// Files, not pipes: the process keeps its stdio open, and a pipe
	// would hold up a reader waiting for runsc exec's output to end (as
	// it would with runc).
	out, err := os.CreateTemp("", "moat-subreaper-")
	if err != nil {
		fail("%v", err)
	}
	defer os.Remove(out.Name())
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		b, _ := os.ReadFile(out.Name())
		fail("runsc exec: %v\n%s", err, b)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		fail("pid file: %v", err)
	}
	pid, err := strconv.Atoi(string(b))
	if err != nil {
		fail("pid file %q", b)
	}
	if s := os.Getenv("SR_SIGNAL"); s != "" {
		time.Sleep(300 * time.Millisecond) // the trap is set
		sig := map[string]syscall.Signal{"USR1": unix.SIGUSR1, "TERM": unix.SIGTERM, "KILL": unix.SIGKILL}[s]
		if err := unix.Kill(pid, sig); err != nil {
			fail("kill %d: %v", pid, err)
		}
	}
	var ws unix.WaitStatus
	for {
		_, err = unix.Wait4(pid, &ws, 0, nil)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		fail("wait4 %d: %v", pid, err)
	}
	if ws.Signaled() {
		fmt.Printf("reaped: signaled %d\n", ws.Signal())
	} else {
		fmt.Printf("reaped: exited %d\n", ws.ExitStatus())
	}
	os.Exit(0)
}

func TestParseUser(t *testing.T) {
	for _, tc := range []struct {
		in       string
		uid, gid uint32
		ok       bool
	}{
		{"1000", 1000, 0, true},
		{"1000:1001", 1000, 1001, true},
		{"0:0", 0, 0, true},
		{"root", 0, 0, false},
		{"1000:", 0, 0, false},
		{":5", 0, 0, false},
		{"-1", 0, 0, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			uid, gid, err := parseUser(tc.in)
			if (err == nil) != tc.ok || tc.ok && (uid != tc.uid || gid != tc.gid) {
				t.Errorf("parseUser(%q) = %d, %d, %v", tc.in, uid, gid, err)
			}
		})
	}
}

func TestParseBytes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1024", 1024, true}, {"1k", 1024, true}, {"512m", 512 << 20, true}, {"512MB", 512 << 20, true},
		{"2g", 2 << 30, true}, {"1.5k", 1536, true}, {"1t", 1 << 40, true}, {"-1", -1, true},
		{"", 0, false}, {"m", 0, false}, {"-2", 0, false}, {"12x", 0, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseBytes(tc.in)
			if (err == nil) != tc.ok || tc.ok && got != tc.want {
				t.Errorf("parseBytes(%q) = %d, %v", tc.in, got, err)
			}
		})
	}
}

func TestUpdateBuild(t *testing.T) {
	i64 := func(v int64) *int64 { return &v }
	u64 := func(v uint64) *uint64 { return &v }
	for _, tc := range []struct {
		name  string
		u     Update
		stdin string
		want  specs.LinuxResources
		err   string
	}{
		{"flags", Update{memory: "256m", pidsLimit: "50", cpuShares: "512", cpuQuota: "-1", cpusetCpus: "0"}, "",
			specs.LinuxResources{Memory: &specs.LinuxMemory{Limit: i64(256 << 20)}, Pids: &specs.LinuxPids{Limit: i64(50)},
				CPU: &specs.LinuxCPU{Shares: u64(512), Quota: i64(-1), Cpus: "0"}}, ""},
		{"stdin then flags", Update{resources: "-", pidsLimit: "7"}, `{"pids":{"limit":3},"cpu":{"period":50000}}`,
			specs.LinuxResources{Pids: &specs.LinuxPids{Limit: i64(7)}, CPU: &specs.LinuxCPU{Period: u64(50000)}}, ""},
		{"bad json", Update{resources: "-"}, `{`, specs.LinuxResources{}, "parsing the resources"},
		{"bad number", Update{cpuPeriod: "x"}, "", specs.LinuxResources{}, "invalid value for --cpu-period"},
		{"negative period", Update{cpuPeriod: "-1"}, "", specs.LinuxResources{}, "invalid value for --cpu-period"},
		{"rdt", Update{l3CacheSchema: "L3:0=f"}, "", specs.LinuxResources{}, "Intel RDT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := tc.u.build(strings.NewReader(tc.stdin))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(r)
			want, _ := json.Marshal(&tc.want)
			if string(got) != string(want) {
				t.Errorf("resources %s, want %s", got, want)
			}
		})
	}
}

func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"1024", "1k", "512MB", "-1", "1.5g", "", "b", "1e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := parseBytes(s)
		if err == nil && v < -1 {
			t.Errorf("parseBytes(%q) = %d: below -1", s, v)
		}
	})
}

func FuzzParseUser(f *testing.F) {
	for _, s := range []string{"0", "1000:1000", "root", ":", "1:2:3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		uid, gid, err := parseUser(s)
		if err != nil {
			return
		}
		// What parses reads back the same from its canonical form.
		canon := strconv.FormatUint(uint64(uid), 10)
		if strings.Contains(s, ":") {
			canon += ":" + strconv.FormatUint(uint64(gid), 10)
		}
		u2, g2, err := parseUser(canon)
		if err != nil || u2 != uid || g2 != gid {
			t.Errorf("parseUser(%q) = %d, %d; its canonical form %q gives %d, %d, %v", s, uid, gid, canon, u2, g2, err)
		}
	})
}
