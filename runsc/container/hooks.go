package container

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// Hooks run on the host, given the container's OCI state on stdin, as
// the runtime spec orders them:
//
//	prestart, createRuntime, createContainer  create, once the sandbox is
//	                                          ready; a failure fails create
//	startContainer                            start, before init runs; a
//	                                          failure fails start
//	poststart                                 start, after init runs; a
//	                                          failure is logged
//	poststop                                  delete, after the processes
//	                                          are gone; a failure is logged
//
// createContainer and startContainer are meant to run in the container's
// namespaces; the container's namespaces are the Sentry's own, where no
// host program runs, so they run on the host like the others.

// defaultHookTimeout bounds a hook that sets no timeout of its own.
const defaultHookTimeout = 2 * time.Minute

// runHooks runs hooks in order with st on their stdin and stops at the
// first failure.
func runHooks(kind string, hooks []specs.Hook, st State) error {
	if len(hooks) == 0 {
		return nil
	}
	b, err := json.Marshal(st.State)
	if err != nil {
		return err
	}
	for i, h := range hooks {
		if err := runHook(h, b); err != nil {
			return fmt.Errorf("%s hook #%d (%s): %w", kind, i, h.Path, err)
		}
	}
	return nil
}

func runHook(h specs.Hook, state []byte) error {
	timeout := defaultHookTimeout
	if h.Timeout != nil {
		timeout = time.Duration(*h.Timeout) * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.Path)
	if len(h.Args) > 0 {
		cmd.Args = h.Args
	}
	cmd.Env = h.Env
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	cmd.Stdin = bytes.NewReader(state)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return fmt.Errorf("timed out after %v", timeout)
	}
	if err != nil {
		if msg := strings.TrimSpace(out.String()); msg != "" {
			return fmt.Errorf("%w: %s", err, msg)
		}
		return err
	}
	return nil
}
