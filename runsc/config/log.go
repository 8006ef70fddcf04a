package config

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Level is the log level c selects: debug with --debug, info with --strace
// (the Sentry logs syscalls at info), warnings otherwise.
func (c *Config) Level() slog.Level {
	switch {
	case c.Debug:
		return slog.LevelDebug
	case c.Strace:
		return slog.LevelInfo
	}
	return slog.LevelWarn
}

// DebugLogPath is the file process pid running command writes to under
// --debug-log, or "" without it.
func (c *Config) DebugLogPath(pid int, command string) string {
	if c.DebugLog == "" {
		return ""
	}
	return filepath.Join(c.DebugLog, fmt.Sprintf("runsc.%d.%s.log", pid, command))
}

// OpenLog returns the logger of a runsc process running command: to
// runsc.<pid>.<command>.log under --debug-log if set, else to --log if
// set, else to stderr; in --log-format; at Level. The caller closes the
// returned closer at exit. A process that pivots away from the host's
// files (boot, gofer) must call it before.
func (c *Config) OpenLog(command string, stderr io.Writer) (*slog.Logger, io.Closer, error) {
	// Load the local time zone now. Go reads /etc/localtime lazily, the
	// first time a time is formatted (as every log line does), and in a
	// confined process that open is fatal.
	time.Now().Zone()
	var w io.Writer = stderr
	var closer io.Closer = nopCloser{}
	path := ""
	switch {
	case c.DebugLog != "":
		if err := os.MkdirAll(c.DebugLog, 0o755); err != nil {
			return nil, nil, fmt.Errorf("creating debug log directory: %w", err)
		}
		path = c.DebugLogPath(HostPID(), command)
	case c.LogFile != "":
		path = c.LogFile
	}
	if path != "" {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return nil, nil, fmt.Errorf("opening log file: %w", err)
		}
		w, closer = f, f
	}
	opts := &slog.HandlerOptions{Level: c.Level()}
	var h slog.Handler
	if c.LogFormat == "json" {
		h = slog.NewJSONHandler(w, opts)
	} else {
		h = slog.NewTextHandler(w, opts)
	}
	return slog.New(h).With("cmd", command), closer, nil
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }

// HostPID is this process's id as the host sees it. Children runsc starts
// in a new PID namespace are pid 1 there, but /proc (still the host's
// until they pivot) names them by their host pid.
func HostPID() int {
	if s, err := os.Readlink("/proc/self"); err == nil {
		if pid, err := strconv.Atoi(s); err == nil {
			return pid
		}
	}
	return os.Getpid()
}
