package shim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Runsc drives the runsc binary through its runc-compatible CLI. Every
// command gets --log LogPath --log-format json, so that a failure's
// message can be read back from the log even when the command's stderr is
// the container's (as create's is).
type Runsc struct {
	// Binary is the runsc executable.
	Binary string
	// Flags are global flags passed before the subcommand (--root, ...).
	Flags []string
	// LogPath is the --log file; empty for none.
	LogPath string
	// Reaper starts and reaps the commands.
	Reaper *Reaper
}

// usageStatus is the status runsc exits with on a usage error, such as
// an unknown subcommand or flag.
const usageStatus = 2

// RunError is a failed runsc command.
type RunError struct {
	Args   []string
	Status uint32
	Msg    string
}

func (e *RunError) Error() string {
	if e.Msg == "" {
		return fmt.Sprintf("runsc %s: exit status %d", strings.Join(e.Args, " "), e.Status)
	}
	return e.Msg
}

// cmdIO is the standard I/O of one runsc command; nil files are /dev/null
// (stdin) or captured (stdout, stderr).
type cmdIO struct {
	Stdin, Stdout, Stderr *os.File
	ExtraFiles            []*os.File
}

// run runs runsc with args and returns what it printed on stdout (when
// stdio.Stdout is nil).
func (r *Runsc) run(ctx context.Context, stdio cmdIO, args ...string) ([]byte, error) {
	full := append(append([]string(nil), r.Flags...), "--log-format=json")
	if r.LogPath != "" {
		full = append(full, "--log="+r.LogPath)
	}
	full = append(full, args...)
	cmd := exec.Command(r.Binary, full...)
	cmd.Stdin, cmd.ExtraFiles = stdio.Stdin, stdio.ExtraFiles
	var outR, errR *os.File
	var cleanup []*os.File
	defer func() {
		for _, f := range cleanup {
			f.Close()
		}
	}()
	if stdio.Stdout != nil {
		cmd.Stdout = stdio.Stdout
	} else {
		pr, pw, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		outR, cmd.Stdout = pr, pw
		cleanup = append(cleanup, pr, pw)
	}
	if stdio.Stderr != nil {
		cmd.Stderr = stdio.Stderr
	} else {
		pr, pw, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		errR, cmd.Stderr = pr, pw
		cleanup = append(cleanup, pr, pw)
	}
	done, err := r.Reaper.Start(cmd)
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", r.Binary, err)
	}
	defer cmd.Process.Release()
	// Close the shim's copies of the write ends so that reads end when
	// runsc (and whatever inherited them) exits.
	for _, w := range []any{cmd.Stdout, cmd.Stderr} {
		if f, ok := w.(*os.File); ok && (f != stdio.Stdout && f != stdio.Stderr) {
			f.Close()
		}
	}
	read := func(f *os.File) <-chan []byte {
		ch := make(chan []byte, 1)
		if f == nil {
			ch <- nil
			return ch
		}
		go func() {
			data, _ := io.ReadAll(io.LimitReader(f, 16<<20))
			ch <- data
		}()
		return ch
	}
	outC, errC := read(outR), read(errR)
	var ws unix.WaitStatus
	select {
	case ws = <-done:
	case <-ctx.Done():
		cmd.Process.Kill()
		ws = <-done
	}
	// A process runsc left behind may hold the pipes open; once runsc
	// itself has exited, wait for them only a little.
	var out, stderr []byte
	grace := time.NewTimer(2 * time.Second)
	defer grace.Stop()
	for outC != nil || errC != nil {
		select {
		case out = <-outC:
			outC = nil
		case stderr = <-errC:
			errC = nil
		case <-grace.C:
			outC, errC = nil, nil
		}
	}
	if ws.Exited() && ws.ExitStatus() == 0 {
		return out, nil
	}
	status := exitCode(ws)
	msg := r.lastLogError()
	if msg == "" {
		msg = strings.TrimSpace(string(stderr))
	}
	if status == usageStatus && (msg == "" || strings.HasPrefix(msg, "Usage:")) {
		// subcommands prints its whole usage text: say what it means.
		msg = fmt.Sprintf("runsc %s: usage error: this runsc does not support the command or its flags", args[0])
	}
	return out, &RunError{Args: args, Status: status, Msg: msg}
}

// lastLogError returns the message of the last error record in the log.
func (r *Runsc) lastLogError() string {
	if r.LogPath == "" {
		return ""
	}
	f, err := os.Open(r.LogPath)
	if err != nil {
		return ""
	}
	defer f.Close()
	var last string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var rec struct {
			Level string `json:"level"`
			Msg   string `json:"msg"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) == nil && strings.EqualFold(rec.Level, "error") {
			last = rec.Msg
		}
	}
	return last
}

// CreateOpts are the options of Create.
type CreateOpts struct {
	PidFile       string
	ConsoleSocket string
	IO            cmdIO
}

// Create runs `runsc create`.
func (r *Runsc) Create(ctx context.Context, id, bundle string, opts CreateOpts) error {
	args := []string{"create", "--bundle", bundle, "--pid-file", opts.PidFile}
	if opts.ConsoleSocket != "" {
		args = append(args, "--console-socket", opts.ConsoleSocket)
	}
	args = append(args, id)
	stdio := opts.IO
	if stdio.Stdout == nil || stdio.Stderr == nil {
		// create's stdio becomes the container's: never a capture pipe,
		// which the sandbox would hold open.
		null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		defer null.Close()
		if stdio.Stdout == nil {
			stdio.Stdout = null
		}
		if stdio.Stderr == nil {
			stdio.Stderr = null
		}
	}
	_, err := r.run(ctx, stdio, args...)
	return err
}

// Start runs `runsc start`.
func (r *Runsc) Start(ctx context.Context, id string) error {
	_, err := r.run(ctx, cmdIO{}, "start", id)
	return err
}

// State is what `runsc state` prints (the OCI state).
type State struct {
	ID     string `json:"id"`
	Pid    int    `json:"pid"`
	Status string `json:"status"`
	Bundle string `json:"bundle"`
}

// State runs `runsc state`.
func (r *Runsc) State(ctx context.Context, id string) (*State, error) {
	out, err := r.run(ctx, cmdIO{}, "state", id)
	if err != nil {
		return nil, err
	}
	var s State
	if err := json.Unmarshal(out, &s); err != nil {
		return nil, fmt.Errorf("runsc state: %w", err)
	}
	return &s, nil
}

// Kill runs `runsc kill [--all] id sig`.
func (r *Runsc) Kill(ctx context.Context, id string, sig uint32, all bool) error {
	args := []string{"kill"}
	if all {
		args = append(args, "--all")
	}
	_, err := r.run(ctx, cmdIO{}, append(args, id, strconv.FormatUint(uint64(sig), 10))...)
	return err
}

// Delete runs `runsc delete [--force] id`.
func (r *Runsc) Delete(ctx context.Context, id string, force bool) error {
	args := []string{"delete"}
	if force {
		args = append(args, "--force")
	}
	_, err := r.run(ctx, cmdIO{}, append(args, id)...)
	return err
}

// ExecOpts are the options of Exec.
type ExecOpts struct {
	ProcessFile   string
	PidFile       string
	ConsoleSocket string
	IO            cmdIO
}

// Exec runs `runsc exec --detach --process F --pid-file P id`. The
// process it leaves behind, whose pid is in the pid file, lives as long
// as the exec'd process and exits with its status.
func (r *Runsc) Exec(ctx context.Context, id string, opts ExecOpts) error {
	args := []string{"exec", "--detach", "--process", opts.ProcessFile, "--pid-file", opts.PidFile}
	if opts.ConsoleSocket != "" {
		args = append(args, "--console-socket", opts.ConsoleSocket)
	}
	stdio := opts.IO
	if stdio.Stdout == nil || stdio.Stderr == nil {
		null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		defer null.Close()
		if stdio.Stdout == nil {
			stdio.Stdout = null
		}
		if stdio.Stderr == nil {
			stdio.Stderr = null
		}
	}
	_, err := r.run(ctx, stdio, append(args, id)...)
	return err
}

// Pause runs `runsc pause`.
func (r *Runsc) Pause(ctx context.Context, id string) error {
	_, err := r.run(ctx, cmdIO{}, "pause", id)
	return err
}

// Resume runs `runsc resume`.
func (r *Runsc) Resume(ctx context.Context, id string) error {
	_, err := r.run(ctx, cmdIO{}, "resume", id)
	return err
}

// Update runs `runsc update --resources -` with the OCI LinuxResources
// JSON on stdin.
func (r *Runsc) Update(ctx context.Context, id string, resources []byte) error {
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	go func() {
		pw.Write(resources)
		pw.Close()
	}()
	defer pr.Close()
	_, err = r.run(ctx, cmdIO{Stdin: pr}, "update", "--resources", "-", id)
	return err
}

// Ps runs `runsc ps --format json --sentry` and returns the pids as the
// container sees them (plain --format json gives host pids, as runc's).
func (r *Runsc) Ps(ctx context.Context, id string) ([]int, error) {
	out, err := r.run(ctx, cmdIO{}, "ps", "--format", "json", "--sentry", id)
	if err != nil {
		return nil, err
	}
	var pids []int
	if err := json.Unmarshal(bytes.TrimSpace(out), &pids); err != nil {
		return nil, fmt.Errorf("runsc ps: %w", err)
	}
	return pids, nil
}

// Stats is the part of runc's stats event that runsc fills in.
type Stats struct {
	CPU struct {
		Usage struct {
			Total  uint64   `json:"total"`
			PerCPU []uint64 `json:"percpu"`
			Kernel uint64   `json:"kernel"`
			User   uint64   `json:"user"`
		} `json:"usage"`
	} `json:"cpu"`
	Memory struct {
		Usage struct {
			Limit   uint64 `json:"limit"`
			Usage   uint64 `json:"usage"`
			Max     uint64 `json:"max"`
			Failcnt uint64 `json:"failcnt"`
		} `json:"usage"`
	} `json:"memory"`
	Pids struct {
		Current uint64 `json:"current"`
		Limit   uint64 `json:"limit"`
	} `json:"pids"`
}

// Stats runs `runsc events --stats` and returns the stats it prints.
func (r *Runsc) Stats(ctx context.Context, id string) (*Stats, error) {
	out, err := r.run(ctx, cmdIO{}, "events", "--stats", id)
	if err != nil {
		return nil, err
	}
	var ev struct {
		Type string `json:"type"`
		Data *Stats `json:"data"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(out), &ev); err != nil {
		return nil, fmt.Errorf("runsc events: %w", err)
	}
	if ev.Data == nil {
		return nil, fmt.Errorf("runsc events: no stats in %q", out)
	}
	return ev.Data, nil
}
