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
// runsc.<pid>.<command>.log under --debug-log if set, and to --log if set
// (both when both are: containerd's runc shim reads the last error of
// --log to explain a failure), else to stderr; in --log-format; at Level.
// The caller closes the returned closer at exit. A process that pivots
// away from the host's files (boot, gofer) must call it before.
func (c *Config) OpenLog(command string, stderr io.Writer) (*slog.Logger, io.Closer, error) {
	// Load the local time zone now. Go reads /etc/localtime lazily, the
	// first time a time is formatted (as every log line does), and in a
	// confined process that open is fatal.
	time.Now().Zone()
	var paths []string
	if c.DebugLog != "" {
		if err := os.MkdirAll(c.DebugLog, 0o755); err != nil {
			return nil, nil, fmt.Errorf("creating debug log directory: %w", err)
		}
		paths = append(paths, c.DebugLogPath(HostPID(), command))
	}
	if c.LogFile != "" {
		paths = append(paths, c.LogFile)
	}
	var ws []io.Writer
	var files multiCloser
	for _, path := range paths {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			files.Close()
			return nil, nil, fmt.Errorf("opening log file: %w", err)
		}
		ws, files = append(ws, f), append(files, f)
	}
	if len(ws) == 0 {
		ws = []io.Writer{stderr}
	}
	opts := &slog.HandlerOptions{Level: c.Level()}
	var hs []slog.Handler
	for _, w := range ws {
		if c.LogFormat == "json" {
			hs = append(hs, slog.NewJSONHandler(w, &slog.HandlerOptions{Level: c.Level(), ReplaceAttr: logrusLevel}))
		} else {
			hs = append(hs, slog.NewTextHandler(w, opts))
		}
	}
	h := hs[0]
	if len(hs) > 1 {
		h = slog.NewMultiHandler(hs...)
	}
	return slog.New(h).With("cmd", command), files, nil
}

// logrusLevel writes the level of a JSON log record as runc's logrus
// does ("error", "warning", "info", "debug"): containerd's runc shim looks
// for the last record whose level is exactly "error" and shows its msg.
func logrusLevel(groups []string, a slog.Attr) slog.Attr {
	if len(groups) > 0 || a.Key != slog.LevelKey {
		return a
	}
	l, ok := a.Value.Any().(slog.Level)
	if !ok {
		return a
	}
	switch {
	case l >= slog.LevelError:
		a.Value = slog.StringValue("error")
	case l >= slog.LevelWarn:
		a.Value = slog.StringValue("warning")
	case l >= slog.LevelInfo:
		a.Value = slog.StringValue("info")
	default:
		a.Value = slog.StringValue("debug")
	}
	return a
}

// multiCloser closes each of its files.
type multiCloser []io.Closer

func (m multiCloser) Close() error {
	var first error
	for _, c := range m {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

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
