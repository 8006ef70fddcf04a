package container

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// hostProcess names a host process across pid reuse: its pid and its
// start time (field 22 of /proc/PID/stat, in clock ticks since boot).
type hostProcess struct {
	Pid   int    `json:"pid"`
	Start uint64 `json:"start"`
}

// procStat returns the state letter and start time of pid.
func procStat(pid int) (state byte, start uint64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	state, start, err = parseStat(b)
	if err != nil {
		return 0, 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return state, start, nil
}

// parseStat reads the state (field 3) and start time (field 22) of a
// /proc/PID/stat. The command name (field 2) is in parentheses and may
// hold anything, ')' and spaces included (a sandboxed or hostile process
// chooses it): the fields after it start after the last ')'.
func parseStat(b []byte) (state byte, start uint64, err error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0, 0, errors.New("malformed")
	}
	fields := bytes.Fields(b[i+2:])
	// fields[0] is field 3 (state); field 22 is fields[19].
	if len(fields) < 20 || len(fields[0]) != 1 {
		return 0, 0, errors.New("malformed")
	}
	start, err = strconv.ParseUint(string(fields[19]), 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("start time: %w", err)
	}
	return fields[0][0], start, nil
}

// newHostProcess names the running process pid.
func newHostProcess(pid int) (hostProcess, error) {
	_, start, err := procStat(pid)
	if err != nil {
		return hostProcess{}, err
	}
	return hostProcess{Pid: pid, Start: start}, nil
}

// alive reports whether the process still runs: same pid, same start
// time, and not a zombie.
func (p hostProcess) alive() bool {
	if p.Pid <= 0 {
		return false
	}
	state, start, err := procStat(p.Pid)
	if err != nil || start != p.Start {
		return false
	}
	return state != 'Z' && state != 'X' && state != 'x'
}

// kill sends sig to the process if it is still the one named.
func (p hostProcess) kill(sig unix.Signal) error {
	if !p.alive() {
		return nil
	}
	err := unix.Kill(p.Pid, sig)
	if errors.Is(err, unix.ESRCH) {
		return nil
	}
	return err
}

// waitGone polls until the process is gone or timeout passes, and
// reports whether it is gone.
func (p hostProcess) waitGone(timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for d := time.Millisecond; ; d = min(2*d, 50*time.Millisecond) {
		if !p.alive() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(d)
	}
}
