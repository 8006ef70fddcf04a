package docker

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// runtime is the runtime the cases ask Docker for: runsc, or with
// MOAT_DOCKER_RUNTIME=runc the host's runc, to check the cases
// themselves against the reference runtime.
func runtime() string {
	if r := os.Getenv("MOAT_DOCKER_RUNTIME"); r != "" {
		return r
	}
	return runtimeName
}

// runArgs is the start of every `docker run` of a case.
func runArgs(opts ...string) []string {
	return append([]string{"run", "--runtime=" + runtime(), "--network=none"}, opts...)
}

// runCase is one `docker run --rm` and what it must give.
type runCaseSpec struct {
	name       string
	opts       []string // docker run options
	cmd        []string // the image's command
	stdin      string
	wantCode   int
	wantStdout *string // exact, when set
	stdoutHas  []string
	stderrHas  []string
}

func str(s string) *string { return &s }

// seqLines is "1\n2\n...\nn\n".
func seqLines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(strconv.Itoa(i))
		b.WriteByte('\n')
	}
	return b.String()
}

var runCases = []runCaseSpec{
	{name: "echo", cmd: []string{"echo", "hello", "world"}, wantStdout: str("hello world\n")},
	{name: "exit_status", cmd: []string{"sh", "-c", "echo before; exit 3"}, wantCode: 3, wantStdout: str("before\n")},
	{name: "stdout_and_stderr", cmd: []string{"sh", "-c", "echo out; echo err >&2"}, wantStdout: str("out\n"), stderrHas: []string{"err\n"}},
	{name: "init_is_pid_1", cmd: []string{"sh", "-c", "echo $$ $PPID"}, wantStdout: str("1 0\n")},
	{name: "missing_executable", cmd: []string{"nosuchcmd"}, wantCode: 127, stderrHas: []string{"executable file not found"}},
	{name: "missing_path", cmd: []string{"/bin/nosuch"}, wantCode: 127, stderrHas: []string{"no such file or directory"}},
	{name: "not_executable", cmd: []string{"/etc/passwd"}, wantCode: 126, stderrHas: []string{"permission denied"}},
	{name: "env", opts: []string{"-e", "FOO=bar baz", "-e", "EMPTY="}, cmd: []string{"sh", "-c", `echo "$FOO|$EMPTY|$PATH|${#HOSTNAME}"`}, wantStdout: str("bar baz||/bin|12\n")},
	{name: "workdir", opts: []string{"-w", "/tmp"}, cmd: []string{"pwd"}, wantStdout: str("/tmp\n")},
	{name: "workdir_created", opts: []string{"-w", "/new/dir"}, cmd: []string{"sh", "-c", "pwd; touch f && ls"}, wantStdout: str("/new/dir\nf\n")},
	{name: "user_numeric", opts: []string{"-u", "65534:65534"}, cmd: []string{"id"}, wantStdout: str("uid=65534(nobody) gid=65534(nobody) groups=65534(nobody)\n")},
	{name: "user_name", opts: []string{"-u", "nobody"}, cmd: []string{"sh", "-c", "id; touch /x"}, wantCode: 1, stdoutHas: []string{"uid=65534(nobody) gid=65534(nobody)"}, stderrHas: []string{"Permission denied"}},
	{name: "user_group_add", opts: []string{"-u", "65534", "--group-add", "0"}, cmd: []string{"id", "-G"}, wantStdout: str("65534 0\n")},
	{name: "root_writable", cmd: []string{"sh", "-c", "echo x > /x && cat /x"}, wantStdout: str("x\n")},
	{name: "read_only", opts: []string{"--read-only"}, cmd: []string{"sh", "-c", "touch /x; echo $?; touch /tmp/x; echo $?"}, wantStdout: str("1\n1\n"), stderrHas: []string{"Read-only file system"}},
	{name: "read_only_with_tmpfs", opts: []string{"--read-only", "--tmpfs", "/tmp"}, cmd: []string{"sh", "-c", "touch /x 2>/dev/null; echo $?; touch /tmp/x && echo ok"}, wantStdout: str("1\nok\n")},
	{name: "tmpfs", opts: []string{"--tmpfs", "/scratch:size=1m"}, cmd: []string{"sh", "-c", `echo hi > /scratch/f && cat /scratch/f && grep " /scratch " /proc/mounts | cut -d" " -f3`}, wantStdout: str("hi\ntmpfs\n")},
	{name: "hostname", opts: []string{"--hostname", "myhost"}, cmd: []string{"sh", "-c", "hostname; uname -n"}, wantStdout: str("myhost\nmyhost\n")},
	{name: "stdin", opts: []string{"-i"}, cmd: []string{"cat"}, stdin: "line1\nline2\n", wantStdout: str("line1\nline2\n")},
	{name: "stdin_large", opts: []string{"-i"}, cmd: []string{"sh", "-c", "wc -l; echo done"}, stdin: seqLines(20000), wantStdout: str("20000\ndone\n")},
	{name: "stdout_large", cmd: []string{"seq", "1", "20000"}, wantStdout: str(seqLines(20000))},
	{name: "cap_drop_all", opts: []string{"--cap-drop", "ALL"}, cmd: []string{"chown", "1", "/tmp"}, wantCode: 1, stderrHas: []string{"Operation not permitted"}},
	{name: "cap_drop_one", opts: []string{"--cap-drop", "CHOWN"}, cmd: []string{"sh", "-c", "touch /f; chown 1 /f; echo $?; chmod 600 /f && echo chmod-ok"}, wantStdout: str("1\nchmod-ok\n")},
	{name: "ulimit", opts: []string{"--ulimit", "nofile=100:200"}, cmd: []string{"sh", "-c", "ulimit -n; ulimit -Hn"}, wantStdout: str("100\n200\n")},
	{name: "etc_hostname", opts: []string{"--hostname", "h1"}, cmd: []string{"cat", "/etc/hostname"}, wantStdout: str("h1\n")},
	{name: "etc_hosts", opts: []string{"--hostname", "h1"}, cmd: []string{"cat", "/etc/hosts"}, stdoutHas: []string{"127.0.0.1\tlocalhost"}},
	{name: "etc_resolv_conf", cmd: []string{"test", "-f", "/etc/resolv.conf"}},
}

// TestDocker runs every case against one private dockerd.
func TestDocker(t *testing.T) {
	d := startDaemon(t)
	known := loadKnown(t)
	for _, tc := range runCases {
		runCase(t, known, tc.name, func(c *check) { d.checkRun(c, tc) })
	}
	for _, tc := range []struct {
		name string
		fn   func(*daemon, *check)
	}{
		{"rm_removes_container", (*daemon).rmRemovesContainer},
		{"no_rm_keeps_state", (*daemon).noRmKeepsState},
		{"tty", (*daemon).tty},
		{"interactive_tty", (*daemon).interactiveTTY},
		{"interactive_ctrl_c", (*daemon).interactiveCtrlC},
		{"detached_logs_stop", (*daemon).detachedLogsStop},
		{"stop_timeout_kills", (*daemon).stopTimeoutKills},
		{"stop_init_default_term", (*daemon).stopInitDefaultTerm},
		{"kill_signals", (*daemon).killSignals},
		{"exec", (*daemon).exec},
		{"exec_tty", (*daemon).execTTY},
		{"pause_unpause", (*daemon).pauseUnpause},
		{"top", (*daemon).top},
		{"bind_mount", (*daemon).bindMount},
	} {
		runCase(t, known, tc.name, func(c *check) { tc.fn(d, c) })
	}
}

// checkRun runs tc with --rm and checks its output and status.
func (d *daemon) checkRun(c *check, tc runCaseSpec) {
	args := append(runArgs(append([]string{"--rm"}, tc.opts...)...), image)
	r := d.docker(c, tc.stdin, append(args, tc.cmd...)...)
	if r.err != nil || r.code != tc.wantCode {
		c.Fatalf("want exit %d, got %s", tc.wantCode, r)
	}
	if tc.wantStdout != nil && r.stdout != *tc.wantStdout {
		c.Errorf("stdout %q, want %q (%s)", clip(r.stdout), clip(*tc.wantStdout), r.args)
	}
	for _, s := range tc.stdoutHas {
		if !strings.Contains(r.stdout, s) {
			c.Errorf("stdout lacks %q: %s", s, r)
		}
	}
	for _, s := range tc.stderrHas {
		if !strings.Contains(r.stderr, s) {
			c.Errorf("stderr lacks %q: %s", s, r)
		}
	}
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:150] + "..." + s[len(s)-150:]
	}
	return s
}

// must runs docker with args and ends the case unless it succeeds.
func (d *daemon) must(c *check, args ...string) string {
	c.Helper()
	r := d.docker(c, "", args...)
	if r.err != nil || r.code != 0 {
		c.Fatalf("%s", r)
	}
	return strings.TrimSpace(r.stdout)
}

// detached starts a container with run -d, removed when the case ends.
func (d *daemon) detached(c *check, opts []string, cmd ...string) string {
	c.Helper()
	id := d.must(c, append(append(runArgs(append([]string{"-d"}, opts...)...), image), cmd...)...)
	c.t.Cleanup(func() { d.docker(c, "", "rm", "-f", id) })
	return id
}

// inspect returns the container's inspect field per Go template format.
func (d *daemon) inspect(c *check, id, format string) string {
	c.Helper()
	return d.must(c, "inspect", "-f", format, id)
}

// waitState waits for the container's .State.Status to be want.
func (d *daemon) waitState(c *check, id, want string) {
	c.Helper()
	var got string
	if waitFor(20*time.Second, func() bool { got = d.inspect(c, id, "{{.State.Status}}"); return got == want }) != nil {
		c.Fatalf("container state %q, want %q", got, want)
	}
}

// waitLogs waits for the container's output to contain want.
func (d *daemon) waitLogs(c *check, id, want string) string {
	c.Helper()
	var logs string
	if waitFor(20*time.Second, func() bool {
		r := d.docker(c, "", "logs", id)
		logs = r.stdout + r.stderr
		return strings.Contains(logs, want)
	}) != nil {
		c.Fatalf("logs never showed %q; they are %q", want, clip(logs))
	}
	return logs
}

func (d *daemon) rmRemovesContainer(c *check) {
	d.must(c, append(runArgs("--rm", "--name", "moat-rm"), image, "true")...)
	if out := d.must(c, "ps", "-aq", "--filter", "name=moat-rm"); out != "" {
		c.Errorf("run --rm left container %q", out)
	}
}

// noRmKeepsState: without --rm, an exited container stays, with its exit
// code, its output, and no runsc state once removed.
func (d *daemon) noRmKeepsState(c *check) {
	r := d.docker(c, "", append(runArgs("--name", "moat-keep"), image, "sh", "-c", "echo kept; exit 7")...)
	c.t.Cleanup(func() { d.docker(c, "", "rm", "-f", "moat-keep") })
	if r.code != 7 || r.stdout != "kept\n" {
		c.Fatalf("want exit 7 and kept: %s", r)
	}
	if got := d.inspect(c, "moat-keep", "{{.State.Status}} {{.State.ExitCode}} {{.State.Running}} {{.State.Pid}}"); got != "exited 7 false 0" {
		c.Errorf("inspect state %q, want \"exited 7 false 0\"", got)
	}
	if logs := d.must(c, "logs", "moat-keep"); logs != "kept" {
		c.Errorf("logs %q, want kept", logs)
	}
	if r := d.docker(c, "", "start", "-a", "moat-keep"); r.code != 7 || r.stdout != "kept\n" {
		c.Errorf("start -a of the stopped container: %s", r)
	}
	d.must(c, "rm", "moat-keep")
}

// tty: -t gives the process a terminal (whose output processing turns
// "\n" into "\r\n").
func (d *daemon) tty(c *check) {
	r := d.docker(c, "", append(runArgs("--rm", "-t"), image, "sh", "-c", `[ -t 0 ] && [ -t 1 ] && [ -t 2 ] && echo on-a-tty; tty`)...)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "on-a-tty\r\n") {
		c.Fatalf("want on-a-tty\\r\\n: %s", r)
	}
	if !strings.Contains(r.stdout, "/dev/pts/") {
		c.Errorf("tty(1) does not name a /dev/pts device: %q", r.stdout)
	}
}

// interactiveTTY drives `docker run -it ... sh` through a pty, as a user
// at a terminal: commands, a window resize, and the exit status.
func (d *daemon) interactiveTTY(c *check) {
	p := d.startOnPTY(c, "moat-it", append(runArgs("--rm", "-it", "--name", "moat-it"), image, "sh")...)
	defer p.close()
	p.expect(c, "# ")
	p.send("echo $((6*7))\r")
	p.expect(c, "42")
	p.expect(c, "# ")
	p.resizeSeen(c, 33, 101)
	p.send("exit 5\r")
	if code := p.wait(c); code != 5 {
		c.Errorf("docker run -it exited %d, want 5; output %q", code, p.output())
	}
}

// interactiveCtrlC: ^C typed at `docker run -it ... sh` interrupts the
// shell's foreground job, not the shell.
func (d *daemon) interactiveCtrlC(c *check) {
	p := d.startOnPTY(c, "moat-it-ctrl-c", append(runArgs("--rm", "-it", "--name", "moat-it-ctrl-c"), image, "sh")...)
	defer p.close()
	p.expect(c, "# ")
	p.send("sleep 30\r")
	time.Sleep(time.Second) // let sleep start
	p.send("\x03")
	p.expect(c, "# ")
	p.send("echo status $?\r")
	p.expect(c, "status 130")
	p.send("exit 5\r")
	if code := p.wait(c); code != 5 {
		c.Errorf("docker run -it exited %d, want 5; output %q", code, p.output())
	}
}

// detachedLogsStop: run -d, ps, inspect, logs, then stop: the container's
// SIGTERM handler runs and its status is the container's.
func (d *daemon) detachedLogsStop(c *check) {
	id := d.detached(c, []string{"--name", "moat-detached"}, "sh", "-c", `trap 'echo stopping; exit 42' TERM; echo started; while true; do sleep 0.1; done`)
	d.waitLogs(c, id, "started")
	if out := d.must(c, "ps", "-q", "--no-trunc", "--filter", "name=moat-detached"); out != id {
		c.Errorf("docker ps shows %q, want %q", out, id)
	}
	st := d.inspect(c, id, "{{.State.Status}} {{.State.Running}} {{.State.Pid}}")
	if f := strings.Fields(st); len(f) != 3 || f[0] != "running" || f[1] != "true" || f[2] == "0" {
		c.Errorf("inspect of a running container: %q", st)
	}
	d.must(c, "stop", "-t", "20", id)
	if got := d.inspect(c, id, "{{.State.Status}} {{.State.ExitCode}}"); got != "exited 42" {
		c.Errorf("after stop: %q, want exited 42", got)
	}
	if logs := d.must(c, "logs", id); logs != "started\nstopping" {
		c.Errorf("logs %q, want started and stopping", logs)
	}
	if out := d.must(c, "ps", "-q", "--filter", "name=moat-detached"); out != "" {
		c.Errorf("docker ps still shows the stopped container: %q", out)
	}
}

// stopTimeoutKills: a process ignoring SIGTERM is killed after the stop
// timeout.
func (d *daemon) stopTimeoutKills(c *check) {
	id := d.detached(c, nil, "sh", "-c", `trap '' TERM; echo started; while true; do sleep 0.1; done`)
	d.waitLogs(c, id, "started")
	start := time.Now()
	d.must(c, "stop", "-t", "1", id)
	if el := time.Since(start); el < time.Second {
		c.Errorf("stop took %v, less than its 1s timeout", el)
	}
	if got := d.inspect(c, id, "{{.State.Status}} {{.State.ExitCode}}"); got != "exited 137" {
		c.Errorf("after stop: %q, want exited 137", got)
	}
}

// stopInitDefaultTerm: a container's init gets no signal it has no
// handler for, from outside either, except SIGKILL (Linux's rule for a
// PID namespace's init): `docker stop` of a shell loop waits for the
// timeout and kills it, as with runc.
func (d *daemon) stopInitDefaultTerm(c *check) {
	id := d.detached(c, nil, "sh", "-c", `echo started; while true; do sleep 0.1; done`)
	d.waitLogs(c, id, "started")
	d.must(c, "stop", "-t", "1", id)
	if got := d.inspect(c, id, "{{.State.Status}} {{.State.ExitCode}}"); got != "exited 137" {
		c.Errorf("after stop: %q, want exited 137 (init ignores SIGTERM without a handler)", got)
	}
}

// killSignals: docker kill -s delivers the signal, docker kill kills.
func (d *daemon) killSignals(c *check) {
	id := d.detached(c, nil, "sh", "-c", `trap 'echo got-usr1' USR1; trap 'echo got-hup' HUP; echo started; while true; do sleep 0.1; done`)
	d.waitLogs(c, id, "started")
	d.must(c, "kill", "-s", "USR1", id)
	d.waitLogs(c, id, "got-usr1")
	d.must(c, "kill", "-s", "SIGHUP", id)
	d.waitLogs(c, id, "got-hup")
	if got := d.inspect(c, id, "{{.State.Status}}"); got != "running" {
		c.Errorf("after handled signals: %q, want running", got)
	}
	d.must(c, "kill", id)
	d.waitState(c, id, "exited")
	if got := d.inspect(c, id, "{{.State.ExitCode}} {{.State.OOMKilled}}"); got != "137 false" {
		c.Errorf("after kill: %q, want 137 false", got)
	}
	if r := d.docker(c, "", "kill", id); r.code == 0 {
		c.Errorf("kill of a stopped container succeeded: %s", r)
	}
}

// exec: docker exec runs more processes in a running container.
func (d *daemon) exec(c *check) {
	id := d.detached(c, nil, "sh", "-c", `echo from-init > /tmp/f; echo started; exec sleep 1000`)
	d.waitLogs(c, id, "started")
	for _, tc := range []struct {
		opts, cmd []string
		stdin     string
		wantCode  int
		want      string
	}{
		{cmd: []string{"cat", "/tmp/f"}, want: "from-init\n"},
		{cmd: []string{"sh", "-c", "exit 4"}, wantCode: 4},
		{opts: []string{"-e", "A=b", "-w", "/tmp", "-u", "65534"}, cmd: []string{"sh", "-c", `echo "$A $(pwd) $(id -u)"`}, want: "b /tmp 65534\n"},
		{opts: []string{"-i"}, cmd: []string{"cat"}, stdin: "via stdin\n", want: "via stdin\n"},
		{cmd: []string{"sh", "-c", `ps -o pid,comm | grep -q "^ *1 sleep" && echo sees-init; [ $$ != 1 ] && echo not-pid-1`}, want: "sees-init\nnot-pid-1\n"},
		// Docker's status for any exec the runtime cannot start.
		{cmd: []string{"nosuchcmd"}, wantCode: 126},
	} {
		args := append(append(append([]string{"exec"}, tc.opts...), id), tc.cmd...)
		r := d.docker(c, tc.stdin, args...)
		if r.err != nil || r.code != tc.wantCode || (tc.want != "" && r.stdout != tc.want) {
			c.Errorf("want exit %d and %q: %s", tc.wantCode, tc.want, r)
		}
	}
	if got := d.inspect(c, id, "{{.State.Status}}"); got != "running" {
		c.Errorf("after the execs the container is %q", got)
	}
}

// execTTY: docker exec -t gives the new process a terminal; -it drives it.
func (d *daemon) execTTY(c *check) {
	id := d.detached(c, nil, "sh", "-c", `echo started; while true; do sleep 0.1; done`)
	d.waitLogs(c, id, "started")
	r := d.docker(c, "", "exec", "-t", id, "sh", "-c", `[ -t 0 ] && [ -t 1 ] && echo on-a-tty`)
	if r.code != 0 || r.stdout != "on-a-tty\r\n" {
		c.Errorf("exec -t: %s", r)
	}
	p := d.startOnPTY(c, "", "exec", "-it", id, "sh")
	defer p.close()
	p.expect(c, "# ")
	p.send("echo $((6*7))\r")
	p.expect(c, "42")
	p.expect(c, "# ")
	p.resizeSeen(c, 35, 103)
	p.send("exit 3\r")
	if code := p.wait(c); code != 3 {
		c.Errorf("docker exec -it exited %d, want 3; output %q", code, p.output())
	}
}

// pauseUnpause: a paused container makes no progress and shows as paused.
func (d *daemon) pauseUnpause(c *check) {
	id := d.detached(c, nil, "sh", "-c", `i=0; while true; do i=$((i+1)); echo $i; sleep 0.05; done`)
	d.waitLogs(c, id, "3\n")
	d.must(c, "pause", id)
	if got := d.inspect(c, id, "{{.State.Status}} {{.State.Paused}}"); got != "paused true" {
		c.Errorf("after pause: %q, want paused true", got)
	}
	time.Sleep(300 * time.Millisecond) // output already on its way
	before := d.must(c, "logs", id)
	time.Sleep(700 * time.Millisecond)
	if after := d.must(c, "logs", id); after != before {
		c.Errorf("a paused container went on writing: %d lines, then %d", strings.Count(before, "\n"), strings.Count(after, "\n"))
	}
	d.must(c, "unpause", id)
	if got := d.inspect(c, id, "{{.State.Status}} {{.State.Paused}}"); got != "running false" {
		c.Errorf("after unpause: %q, want running false", got)
	}
	if waitFor(10*time.Second, func() bool { return d.must(c, "logs", id) != before }) != nil {
		c.Errorf("the unpaused container makes no progress")
	}
}

// bindMount: -v binds a host directory, read-write and read-only.
func (d *daemon) bindMount(c *check) {
	host := filepath.Join(d.dir, "bind")
	if err := os.MkdirAll(host, 0o755); err != nil {
		c.Fatalf("%v", err)
	}
	if err := os.WriteFile(filepath.Join(host, "in"), []byte("from-host\n"), 0o644); err != nil {
		c.Fatalf("%v", err)
	}
	r := d.docker(c, "", append(runArgs("--rm", "-v", host+":/vol"), image, "sh", "-c", "cat /vol/in && echo from-container > /vol/out")...)
	if r.code != 0 || r.stdout != "from-host\n" {
		c.Errorf("read-write bind: %s", r)
	}
	if b, err := os.ReadFile(filepath.Join(host, "out")); err != nil || string(b) != "from-container\n" {
		c.Errorf("the container's write did not reach the host: %q, %v", b, err)
	}
	r = d.docker(c, "", append(runArgs("--rm", "-v", host+":/vol:ro"), image, "sh", "-c", "cat /vol/in; touch /vol/x")...)
	if r.code == 0 || r.stdout != "from-host\n" || !strings.Contains(r.stderr, "Read-only file system") {
		c.Errorf("read-only bind: %s", r)
	}
	if _, err := os.Stat(filepath.Join(host, "x")); err == nil {
		c.Errorf("a write through a read-only bind reached the host")
	}
	file := filepath.Join(host, "in")
	r = d.docker(c, "", append(runArgs("--rm", "-v", file+":/etc/motd"), image, "cat", "/etc/motd")...)
	if r.code != 0 || r.stdout != "from-host\n" {
		c.Errorf("file bind: %s", r)
	}
}

// top: docker top lists the container's processes. dockerd gets pids from
// the runtime (`ps --format json`) and shows the host's ps rows of those
// pids, so each must be a host process of the container: one outside the
// test's PID namespace.
func (d *daemon) top(c *check) {
	id := d.detached(c, nil, "sh", "-c", `echo started; while true; do sleep 0.1; done`)
	d.waitLogs(c, id, "started")
	out := d.must(c, "top", id, "-o", "pid")
	own, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		c.Fatalf("%v", err)
	}
	lines := strings.Split(out, "\n")
	if len(lines) < 2 {
		c.Fatalf("docker top lists no process: %q", out)
	}
	// The loop's sleeps (and, under runsc, the stub processes that run
	// them) come and go every 0.1 s: a listed pid may be gone by the time
	// it is looked at, but not all of them.
	live := 0
	for _, pid := range lines[1:] {
		pid = strings.TrimSpace(pid)
		ns, err := os.Readlink(filepath.Join("/proc", pid, "ns", "pid"))
		if err != nil {
			continue
		}
		live++
		if ns == own {
			comm, _ := os.ReadFile(filepath.Join("/proc", pid, "comm"))
			c.Errorf("docker top lists host pid %s (%s), which is not the container's", pid, strings.TrimSpace(string(comm)))
		}
	}
	if live == 0 {
		c.Errorf("every pid docker top lists is gone: %q", out)
	}
}
