package shim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	eventstypes "github.com/containerd/containerd/api/events"
	taskapi "github.com/containerd/containerd/api/runtime/task/v2"
	tasktypes "github.com/containerd/containerd/api/types/task"
	"github.com/containerd/errdefs"
	"github.com/containerd/errdefs/pkg/errgrpc"
	"github.com/containerd/log"
	"golang.org/x/sys/unix"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/moat-sandbox/moat/internal/atomicfile"
)

// Version is the shim's version, printed by -v and sent by Connect.
const Version = "0.1.0"

// container is one container the shim runs.
type container struct {
	id     string
	bundle string
	runsc  *Runsc
	opts   Options
	// rootfs is the bundle's rootfs directory when the shim mounted the
	// request's mounts on it, else "".
	rootfs string
	init   *process
	// oom watches the sandbox's memory cgroup, if it has one (oom.go).
	oom *oomWatcher

	// execs and paused are guarded by service.mu.
	execs  map[string]*process
	paused bool
}

// service implements containerd's task service (containerd.task.v2.Task)
// by running runsc.
//
// Lock order: service.mu, then process.startMu, then process.mu. The exit
// handler takes process.startMu without service.mu.
type service struct {
	namespace string
	publisher Publisher
	reaper    *Reaper
	// shutdown is called once, when Shutdown finds nothing left to serve.
	shutdown     func()
	shutdownOnce sync.Once

	// mu guards the maps.
	mu         sync.Mutex
	containers map[string]*container
	// byPid maps host pids to the processes whose exit they are.
	byPid map[int]*process
	// earlyExits are exits of pids not (yet) in byPid: a process can exit
	// before runsc has returned its pid.
	earlyExits map[int]earlyExit
}

type earlyExit struct {
	status uint32
	at     time.Time
}

// newService returns a task service. Call its reaped method for every
// exit the reaper does not claim.
func newService(ns string, publisher Publisher, shutdown func()) *service {
	return &service{
		namespace:  ns,
		publisher:  publisher,
		shutdown:   shutdown,
		containers: map[string]*container{},
		byPid:      map[int]*process{},
		earlyExits: map[int]earlyExit{},
	}
}

// toGRPC converts err to a status carrying its errdefs kind, which is how
// errors cross the ttrpc boundary intact.
func toGRPC(err error) error {
	if err == nil {
		return nil
	}
	return errgrpc.ToGRPC(err)
}

// reaped handles the exit of a child the reaper did not run itself.
func (s *service) reaped(pid int, ws unix.WaitStatus) {
	status := exitCode(ws)
	now := time.Now()
	s.mu.Lock()
	p, ok := s.byPid[pid]
	if !ok {
		// Keep it a while in case runsc has not told us the pid yet;
		// forget old ones (the gofer and other helpers end up here).
		for old, e := range s.earlyExits {
			if now.Sub(e.at) > time.Minute {
				delete(s.earlyExits, old)
			}
		}
		s.earlyExits[pid] = earlyExit{status, now}
		s.mu.Unlock()
		return
	}
	delete(s.byPid, pid)
	s.mu.Unlock()
	go s.processExited(p, status, now)
}

// watch registers p's host pid, handling an exit that came before.
func (s *service) watch(p *process, pid int) {
	p.mu.Lock()
	p.pid = pid
	p.mu.Unlock()
	s.mu.Lock()
	e, early := s.earlyExits[pid]
	if early {
		delete(s.earlyExits, pid)
	} else {
		s.byPid[pid] = p
	}
	s.mu.Unlock()
	if early {
		go s.processExited(p, e.status, e.at)
	}
}

// unwatch forgets p's pid.
func (s *service) unwatch(p *process) {
	pid := p.Pid()
	s.mu.Lock()
	if s.byPid[pid] == p {
		delete(s.byPid, pid)
	}
	s.mu.Unlock()
}

// processExited records p's exit once its output is copied, and publishes
// it after its start event.
func (s *service) processExited(p *process, status uint32, at time.Time) {
	p.io.WaitOutput(2 * time.Second)
	p.startMu.Lock()
	defer p.startMu.Unlock()
	p.mu.Lock()
	started := p.started
	p.mu.Unlock()
	if !p.setExited(status, at) {
		return
	}
	if started {
		if p == p.c.init {
			// An OOM kill that ended the container is told first.
			p.c.oom.check()
		}
		s.publisher.Publish(context.Background(), TopicTaskExit, &eventstypes.TaskExit{
			ContainerID: p.c.id,
			ID:          p.taskID(),
			Pid:         uint32(p.Pid()),
			ExitStatus:  status,
			ExitedAt:    timestamppb.New(at),
		})
	}
}

// getContainer returns the container id.
func (s *service) getContainer(id string) (*container, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// A nil entry is a container Create is still making.
	c := s.containers[id]
	if c == nil {
		return nil, fmt.Errorf("container %s: %w", id, errdefs.ErrNotFound)
	}
	return c, nil
}

// getProcess returns container id's init (execID "") or exec execID.
func (s *service) getProcess(id, execID string) (*container, *process, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.containers[id]
	if c == nil {
		return nil, nil, fmt.Errorf("container %s: %w", id, errdefs.ErrNotFound)
	}
	if execID == "" {
		return c, c.init, nil
	}
	p, ok := c.execs[execID]
	if !ok {
		return nil, nil, fmt.Errorf("process %s in container %s: %w", execID, id, errdefs.ErrNotFound)
	}
	return c, p, nil
}

// runscFor returns the runsc runner for opts and a bundle.
func (s *service) runscFor(opts Options, bundle string) (*Runsc, error) {
	bin := opts.BinaryName
	if bin == "" {
		bin = "runsc"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return nil, fmt.Errorf("runsc binary %q: %w", bin, err)
	}
	if opts.Root == "" {
		opts.Root = filepath.Join("/run/containerd/runsc", s.namespace)
	}
	return &Runsc{
		Binary:  path,
		Flags:   opts.GlobalFlags(),
		LogPath: filepath.Join(bundle, "log.json"),
		Reaper:  s.reaper,
	}, nil
}

// Create creates a container: mounts its root file system, opens its I/O
// and runs `runsc create`.
func (s *service) Create(ctx context.Context, r *taskapi.CreateTaskRequest) (_ *taskapi.CreateTaskResponse, retErr error) {
	defer func() { retErr = toGRPC(retErr) }()
	if r.ID == "" || r.Bundle == "" {
		return nil, fmt.Errorf("create needs an id and a bundle: %w", errdefs.ErrInvalidArgument)
	}
	if r.Checkpoint != "" || r.ParentCheckpoint != "" {
		return nil, fmt.Errorf("restoring a checkpoint: %w", errdefs.ErrNotImplemented)
	}
	var undo []func()
	defer func() {
		if retErr != nil {
			for i := len(undo) - 1; i >= 0; i-- {
				undo[i]()
			}
		}
	}()
	s.mu.Lock()
	if _, ok := s.containers[r.ID]; ok {
		s.mu.Unlock()
		return nil, fmt.Errorf("container %s: %w", r.ID, errdefs.ErrAlreadyExists)
	}
	// Reserve the id while creating.
	s.containers[r.ID] = nil
	s.mu.Unlock()
	undo = append(undo, func() {
		s.mu.Lock()
		delete(s.containers, r.ID)
		s.mu.Unlock()
	})

	var opts Options
	if r.Options != nil {
		var err error
		if opts, err = ParseRuntimeOptions(r.Options.TypeUrl, r.Options.Value); err != nil {
			return nil, fmt.Errorf("runtime options: %w: %w", err, errdefs.ErrInvalidArgument)
		}
	}
	if opts.Root == "" {
		opts.Root = filepath.Join("/run/containerd/runsc", s.namespace)
	}
	if err := writeOptions(r.Bundle, opts); err != nil {
		return nil, fmt.Errorf("saving options: %w", err)
	}
	rs, err := s.runscFor(opts, r.Bundle)
	if err != nil {
		return nil, err
	}
	c := &container{id: r.ID, bundle: r.Bundle, runsc: rs, opts: opts, execs: map[string]*process{}}

	if len(r.Rootfs) > 0 {
		rootfs := filepath.Join(r.Bundle, "rootfs")
		if err := os.Mkdir(rootfs, 0o711); err != nil && !os.IsExist(err) {
			return nil, err
		}
		ms := make([]Mount, 0, len(r.Rootfs))
		for _, m := range r.Rootfs {
			ms = append(ms, Mount{Type: m.Type, Source: m.Source, Target: m.Target, Options: m.Options})
		}
		if err := mountAll(ms, rootfs); err != nil {
			return nil, err
		}
		c.rootfs = rootfs
		undo = append(undo, func() { unmountAll(rootfs) })
	}

	spec := StdioSpec{Stdin: r.Stdin, Stdout: r.Stdout, Stderr: r.Stderr, Terminal: r.Terminal}
	pio, err := newProcessIO(ctx, s.reaper, r.ID, s.namespace, spec)
	if err != nil {
		return nil, fmt.Errorf("opening stdio: %w", err)
	}
	undo = append(undo, pio.Close)
	p := newProcess(c, "", spec)
	p.io = pio
	c.init = p

	pidFile := filepath.Join(r.Bundle, "init.pid")
	copts := CreateOpts{PidFile: pidFile, IO: pio.child}
	var console <-chan consoleResult
	if r.Terminal {
		sock, ch, err := receiveConsole(ctx)
		if err != nil {
			return nil, err
		}
		defer sock.Close()
		copts.ConsoleSocket, console = sock.Path(), ch
	}
	if err := rs.Create(ctx, r.ID, r.Bundle, copts); err != nil {
		return nil, fmt.Errorf("runsc create: %w", err)
	}
	undo = append(undo, func() { rs.Delete(context.Background(), r.ID, true) })
	if console != nil {
		res := <-console
		if res.err != nil {
			return nil, res.err
		}
		if err := pio.setConsole(res.f); err != nil {
			res.f.Close()
			return nil, err
		}
	}
	pid, err := readPidFile(pidFile)
	if err != nil {
		return nil, fmt.Errorf("reading runsc's pid file: %w", err)
	}
	pio.childStarted()
	if joinsSandbox(r.Bundle, r.ID) {
		// The pid is the pod's sandbox, which outlives this container's
		// init: runsc wait tells of its exit (group.go).
		p.mu.Lock()
		p.pid = pid
		p.mu.Unlock()
		go s.waitSub(c, p)
	} else {
		// Before watch, which may hand an early exit to processExited.
		c.oom = watchOOM(ctx, r.ID, pid, func(ev *eventstypes.TaskOOM) {
			s.publisher.Publish(context.Background(), TopicTaskOOM, ev)
		})
		undo = append(undo, c.oom.stop)
		s.watch(p, pid)
		undo = append(undo, func() { s.unwatch(p) })
	}

	s.mu.Lock()
	s.containers[r.ID] = c
	s.mu.Unlock()
	s.publisher.Publish(ctx, TopicTaskCreate, &eventstypes.TaskCreate{
		ContainerID: r.ID,
		Bundle:      r.Bundle,
		Rootfs:      r.Rootfs,
		IO:          &eventstypes.TaskIO{Stdin: r.Stdin, Stdout: r.Stdout, Stderr: r.Stderr, Terminal: r.Terminal},
		Pid:         uint32(pid),
	})
	return &taskapi.CreateTaskResponse{Pid: uint32(pid)}, nil
}

type consoleResult struct {
	f   *os.File
	err error
}

// receiveConsole listens for a pty master; the channel gets it (or an
// error) once runsc has sent it, or when ctx ends.
func receiveConsole(ctx context.Context) (*consoleSocket, <-chan consoleResult, error) {
	sock, err := newConsoleSocket()
	if err != nil {
		return nil, nil, err
	}
	ch := make(chan consoleResult, 1)
	go func() {
		rctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		f, err := sock.Receive(rctx)
		ch <- consoleResult{f, err}
	}()
	return sock, ch, nil
}

// Start starts a container's init (`runsc start`) or an exec'd process
// (`runsc exec --detach`).
func (s *service) Start(ctx context.Context, r *taskapi.StartRequest) (_ *taskapi.StartResponse, retErr error) {
	defer func() { retErr = toGRPC(retErr) }()
	c, p, err := s.getProcess(r.ID, r.ExecID)
	if err != nil {
		return nil, err
	}
	p.startMu.Lock()
	defer p.startMu.Unlock()
	if st := p.Status(); st != tasktypes.Status_CREATED {
		return nil, fmt.Errorf("process %s is %s, not created: %w", p.taskID(), st, errdefs.ErrFailedPrecondition)
	}
	if r.ExecID == "" {
		if err := c.runsc.Start(ctx, c.id); err != nil {
			return nil, fmt.Errorf("runsc start: %w", err)
		}
		p.mu.Lock()
		p.started = true
		if p.status == tasktypes.Status_CREATED {
			p.status = tasktypes.Status_RUNNING
		}
		p.mu.Unlock()
		s.publisher.Publish(ctx, TopicTaskStart, &eventstypes.TaskStart{ContainerID: c.id, Pid: uint32(p.Pid())})
		return &taskapi.StartResponse{Pid: uint32(p.Pid())}, nil
	}
	if err := s.startExec(ctx, c, p); err != nil {
		// containerd waits for the output fifos to reach EOF before
		// it reports the failure: release them, and any waiter.
		p.io.Close()
		p.setExited(255, time.Now())
		return nil, err
	}
	s.publisher.Publish(ctx, TopicTaskExecStarted, &eventstypes.TaskExecStarted{ContainerID: c.id, ExecID: p.id, Pid: uint32(p.Pid())})
	return &taskapi.StartResponse{Pid: uint32(p.Pid())}, nil
}

// startExec runs `runsc exec --detach` for p.
//
// Preconditions: p.startMu is held.
func (s *service) startExec(ctx context.Context, c *container, p *process) error {
	pidFile := filepath.Join(c.bundle, "exec-"+p.id+".pid")
	os.Remove(pidFile)
	eopts := ExecOpts{ProcessFile: p.processFile, PidFile: pidFile, IO: p.io.child}
	var console <-chan consoleResult
	if p.spec.Terminal {
		sock, ch, err := receiveConsole(ctx)
		if err != nil {
			return err
		}
		defer sock.Close()
		eopts.ConsoleSocket, console = sock.Path(), ch
	}
	if err := c.runsc.Exec(ctx, c.id, eopts); err != nil {
		return fmt.Errorf("runsc exec: %w", err)
	}
	if console != nil {
		res := <-console
		if res.err != nil {
			return res.err
		}
		if err := p.io.setConsole(res.f); err != nil {
			res.f.Close()
			return err
		}
	}
	pid, err := readPidFile(pidFile)
	os.Remove(pidFile)
	if err != nil {
		return fmt.Errorf("reading runsc exec's pid file: %w", err)
	}
	p.io.childStarted()
	p.mu.Lock()
	p.started = true
	if p.status == tasktypes.Status_CREATED {
		p.status = tasktypes.Status_RUNNING
	}
	p.mu.Unlock()
	s.watch(p, pid)
	return nil
}

// Exec adds a process to a container; Start runs it.
func (s *service) Exec(ctx context.Context, r *taskapi.ExecProcessRequest) (_ *emptypb.Empty, retErr error) {
	defer func() { retErr = toGRPC(retErr) }()
	if r.ExecID == "" || r.Spec == nil {
		return nil, fmt.Errorf("exec needs an exec id and a process spec: %w", errdefs.ErrInvalidArgument)
	}
	if filepath.Base(r.ExecID) != r.ExecID || r.ExecID == "." || r.ExecID == ".." {
		return nil, fmt.Errorf("invalid exec id %q: %w", r.ExecID, errdefs.ErrInvalidArgument)
	}
	c, err := s.getContainer(r.ID)
	if err != nil {
		return nil, err
	}
	if st := c.init.Status(); st == tasktypes.Status_STOPPED {
		return nil, fmt.Errorf("container %s has stopped: %w", c.id, errdefs.ErrFailedPrecondition)
	}
	s.mu.Lock()
	if _, ok := c.execs[r.ExecID]; ok {
		s.mu.Unlock()
		return nil, fmt.Errorf("exec %s: %w", r.ExecID, errdefs.ErrAlreadyExists)
	}
	spec := StdioSpec{Stdin: r.Stdin, Stdout: r.Stdout, Stderr: r.Stderr, Terminal: r.Terminal}
	p := newProcess(c, r.ExecID, spec)
	c.execs[r.ExecID] = p
	s.mu.Unlock()
	fail := func(err error) (*emptypb.Empty, error) {
		s.mu.Lock()
		delete(c.execs, r.ExecID)
		s.mu.Unlock()
		return nil, err
	}
	p.processFile = filepath.Join(c.bundle, "exec-"+r.ExecID+".json")
	if err := atomicfile.WriteFile(p.processFile, r.Spec.Value, 0o600); err != nil {
		return fail(fmt.Errorf("writing the process spec: %w", err))
	}
	pio, err := newProcessIO(ctx, s.reaper, c.id, s.namespace, spec)
	if err != nil {
		os.Remove(p.processFile)
		return fail(fmt.Errorf("opening stdio: %w", err))
	}
	p.io = pio
	s.publisher.Publish(ctx, TopicTaskExecAdded, &eventstypes.TaskExecAdded{ContainerID: c.id, ExecID: r.ExecID})
	return &emptypb.Empty{}, nil
}

// Delete removes an exec'd process, or a container with all its state.
func (s *service) Delete(ctx context.Context, r *taskapi.DeleteRequest) (_ *taskapi.DeleteResponse, retErr error) {
	defer func() { retErr = toGRPC(retErr) }()
	c, p, err := s.getProcess(r.ID, r.ExecID)
	if err != nil {
		return nil, err
	}
	if r.ExecID != "" {
		st := p.Status()
		if st != tasktypes.Status_STOPPED && st != tasktypes.Status_CREATED {
			return nil, fmt.Errorf("cannot delete process %s that is %s: %w", p.id, st, errdefs.ErrFailedPrecondition)
		}
		s.mu.Lock()
		delete(c.execs, r.ExecID)
		s.mu.Unlock()
		s.unwatch(p)
		p.io.Close()
		os.Remove(p.processFile)
		status, at := p.exitInfo()
		s.publisher.Publish(ctx, TopicTaskDelete, &eventstypes.TaskDelete{
			ContainerID: c.id, ID: p.id, Pid: uint32(p.Pid()), ExitStatus: status, ExitedAt: timestamppb.New(at),
		})
		return &taskapi.DeleteResponse{Pid: uint32(p.Pid()), ExitStatus: status, ExitedAt: timestamppb.New(at)}, nil
	}
	st := p.Status()
	if st != tasktypes.Status_STOPPED && st != tasktypes.Status_CREATED {
		return nil, fmt.Errorf("cannot delete container %s that is %s: %w", c.id, st, errdefs.ErrFailedPrecondition)
	}
	if err := c.runsc.Delete(ctx, c.id, true); err != nil {
		log.G(ctx).WithError(err).Warn("runsc delete")
	}
	if st == tasktypes.Status_CREATED {
		// Never started: runsc delete killed it. Its exit, if the reaper
		// saw it, is not an exit of a started task.
		s.unwatch(p)
		p.setExited(128+uint32(unix.SIGKILL), time.Now())
	}
	p.io.Close()
	c.oom.stop()
	s.mu.Lock()
	for _, e := range c.execs {
		e.io.Close()
		os.Remove(e.processFile)
	}
	delete(s.containers, c.id)
	s.mu.Unlock()
	if c.rootfs != "" {
		if err := unmountAll(c.rootfs); err != nil {
			log.G(ctx).WithError(err).Warn("unmounting rootfs")
		}
	}
	status, at := p.exitInfo()
	s.publisher.Publish(ctx, TopicTaskDelete, &eventstypes.TaskDelete{
		ContainerID: c.id, ID: c.id, Pid: uint32(p.Pid()), ExitStatus: status, ExitedAt: timestamppb.New(at),
	})
	return &taskapi.DeleteResponse{Pid: uint32(p.Pid()), ExitStatus: status, ExitedAt: timestamppb.New(at)}, nil
}

// State returns a process's state.
func (s *service) State(ctx context.Context, r *taskapi.StateRequest) (_ *taskapi.StateResponse, retErr error) {
	defer func() { retErr = toGRPC(retErr) }()
	c, p, err := s.getProcess(r.ID, r.ExecID)
	if err != nil {
		return nil, err
	}
	st := p.Status()
	s.mu.Lock()
	if r.ExecID == "" && c.paused && st == tasktypes.Status_RUNNING {
		st = tasktypes.Status_PAUSED
	}
	s.mu.Unlock()
	status, at := p.exitInfo()
	resp := &taskapi.StateResponse{
		ID:         p.taskID(),
		Bundle:     c.bundle,
		Pid:        uint32(p.Pid()),
		Status:     st,
		Stdin:      p.spec.Stdin,
		Stdout:     p.spec.Stdout,
		Stderr:     p.spec.Stderr,
		Terminal:   p.spec.Terminal,
		ExitStatus: status,
		ExecID:     r.ExecID,
	}
	if st == tasktypes.Status_STOPPED {
		resp.ExitedAt = timestamppb.New(at)
	}
	return resp, nil
}

// Pause freezes the container (`runsc pause`).
func (s *service) Pause(ctx context.Context, r *taskapi.PauseRequest) (_ *emptypb.Empty, retErr error) {
	defer func() { retErr = toGRPC(retErr) }()
	c, err := s.getContainer(r.ID)
	if err != nil {
		return nil, err
	}
	if err := c.runsc.Pause(ctx, c.id); err != nil {
		return nil, fmt.Errorf("runsc pause: %w", err)
	}
	s.mu.Lock()
	c.paused = true
	s.mu.Unlock()
	s.publisher.Publish(ctx, TopicTaskPaused, &eventstypes.TaskPaused{ContainerID: c.id})
	return &emptypb.Empty{}, nil
}

// Resume thaws the container (`runsc resume`).
func (s *service) Resume(ctx context.Context, r *taskapi.ResumeRequest) (_ *emptypb.Empty, retErr error) {
	defer func() { retErr = toGRPC(retErr) }()
	c, err := s.getContainer(r.ID)
	if err != nil {
		return nil, err
	}
	if err := c.runsc.Resume(ctx, c.id); err != nil {
		return nil, fmt.Errorf("runsc resume: %w", err)
	}
	s.mu.Lock()
	c.paused = false
	s.mu.Unlock()
	s.publisher.Publish(ctx, TopicTaskResumed, &eventstypes.TaskResumed{ContainerID: c.id})
	return &emptypb.Empty{}, nil
}

// Checkpoint is not supported: the Sentry cannot save its state yet.
func (s *service) Checkpoint(ctx context.Context, r *taskapi.CheckpointTaskRequest) (*emptypb.Empty, error) {
	return nil, toGRPC(fmt.Errorf("checkpoint: %w", errdefs.ErrNotImplemented))
}

// Kill signals init (`runsc kill`, with --all for all processes) or an
// exec'd process (its host process, which passes the signal on).
func (s *service) Kill(ctx context.Context, r *taskapi.KillRequest) (_ *emptypb.Empty, retErr error) {
	defer func() { retErr = toGRPC(retErr) }()
	c, p, err := s.getProcess(r.ID, r.ExecID)
	if err != nil {
		return nil, err
	}
	if p.Status() == tasktypes.Status_STOPPED {
		return nil, fmt.Errorf("process already finished: %w", errdefs.ErrNotFound)
	}
	if r.ExecID == "" {
		if err := c.runsc.Kill(ctx, c.id, r.Signal, r.All); err != nil {
			if p.Status() == tasktypes.Status_STOPPED {
				return nil, fmt.Errorf("process already finished: %w", errdefs.ErrNotFound)
			}
			return nil, fmt.Errorf("runsc kill: %w", err)
		}
		return &emptypb.Empty{}, nil
	}
	pid := p.Pid()
	if pid <= 0 {
		return nil, fmt.Errorf("process %s has not started: %w", p.id, errdefs.ErrFailedPrecondition)
	}
	if err := unix.Kill(pid, unix.Signal(r.Signal)); err != nil {
		if errors.Is(err, unix.ESRCH) {
			return nil, fmt.Errorf("process already finished: %w", errdefs.ErrNotFound)
		}
		return nil, fmt.Errorf("signalling exec %s: %w", p.id, err)
	}
	return &emptypb.Empty{}, nil
}

// Pids lists the container's processes as the Sentry numbers them.
func (s *service) Pids(ctx context.Context, r *taskapi.PidsRequest) (_ *taskapi.PidsResponse, retErr error) {
	defer func() { retErr = toGRPC(retErr) }()
	c, err := s.getContainer(r.ID)
	if err != nil {
		return nil, err
	}
	pids, err := c.runsc.Ps(ctx, c.id)
	if err != nil {
		return nil, fmt.Errorf("runsc ps: %w", err)
	}
	resp := &taskapi.PidsResponse{}
	for _, pid := range pids {
		resp.Processes = append(resp.Processes, &tasktypes.ProcessInfo{Pid: uint32(pid)})
	}
	return resp, nil
}

// CloseIO closes a process's standard input.
func (s *service) CloseIO(ctx context.Context, r *taskapi.CloseIORequest) (_ *emptypb.Empty, retErr error) {
	defer func() { retErr = toGRPC(retErr) }()
	_, p, err := s.getProcess(r.ID, r.ExecID)
	if err != nil {
		return nil, err
	}
	if r.Stdin && p.io != nil {
		p.io.CloseStdin()
	}
	return &emptypb.Empty{}, nil
}

// ResizePty resizes a process's terminal.
func (s *service) ResizePty(ctx context.Context, r *taskapi.ResizePtyRequest) (_ *emptypb.Empty, retErr error) {
	defer func() { retErr = toGRPC(retErr) }()
	_, p, err := s.getProcess(r.ID, r.ExecID)
	if err != nil {
		return nil, err
	}
	if err := p.io.Resize(r.Width, r.Height); err != nil {
		return nil, fmt.Errorf("resizing the terminal of %s: %w: %w", p.taskID(), err, errdefs.ErrFailedPrecondition)
	}
	return &emptypb.Empty{}, nil
}

// Update changes the container's resources (`runsc update`); the request
// carries the OCI LinuxResources in JSON.
func (s *service) Update(ctx context.Context, r *taskapi.UpdateTaskRequest) (_ *emptypb.Empty, retErr error) {
	defer func() { retErr = toGRPC(retErr) }()
	c, err := s.getContainer(r.ID)
	if err != nil {
		return nil, err
	}
	if r.Resources == nil {
		return nil, fmt.Errorf("update without resources: %w", errdefs.ErrInvalidArgument)
	}
	if err := c.runsc.Update(ctx, c.id, r.Resources.Value); err != nil {
		return nil, fmt.Errorf("runsc update: %w", err)
	}
	return &emptypb.Empty{}, nil
}

// Wait waits for a process to exit.
func (s *service) Wait(ctx context.Context, r *taskapi.WaitRequest) (_ *taskapi.WaitResponse, retErr error) {
	defer func() { retErr = toGRPC(retErr) }()
	_, p, err := s.getProcess(r.ID, r.ExecID)
	if err != nil {
		return nil, err
	}
	select {
	case <-p.exited:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	status, at := p.exitInfo()
	return &taskapi.WaitResponse{ExitStatus: status, ExitedAt: timestamppb.New(at)}, nil
}

// Stats returns the container's metrics (`runsc events --stats`) in
// containerd's cgroup v1 metrics type.
func (s *service) Stats(ctx context.Context, r *taskapi.StatsRequest) (_ *taskapi.StatsResponse, retErr error) {
	defer func() { retErr = toGRPC(retErr) }()
	c, err := s.getContainer(r.ID)
	if err != nil {
		return nil, err
	}
	st, err := c.runsc.Stats(ctx, c.id)
	if err != nil {
		return nil, fmt.Errorf("runsc events: %w", err)
	}
	a, err := metricsAny(st)
	if err != nil {
		return nil, err
	}
	return &taskapi.StatsResponse{Stats: a}, nil
}

// Connect returns the shim's and the task's pids.
func (s *service) Connect(ctx context.Context, r *taskapi.ConnectRequest) (_ *taskapi.ConnectResponse, retErr error) {
	defer func() { retErr = toGRPC(retErr) }()
	resp := &taskapi.ConnectResponse{ShimPid: uint32(os.Getpid()), Version: Version}
	s.mu.Lock()
	c := s.containers[r.ID]
	s.mu.Unlock()
	if c != nil {
		resp.TaskPid = uint32(c.init.Pid())
	}
	return resp, nil
}

// Shutdown stops the shim once it has no containers left.
func (s *service) Shutdown(ctx context.Context, r *taskapi.ShutdownRequest) (*emptypb.Empty, error) {
	s.mu.Lock()
	n := len(s.containers)
	s.mu.Unlock()
	if n > 0 && !r.Now {
		return &emptypb.Empty{}, nil
	}
	s.shutdownOnce.Do(func() {
		if s.shutdown != nil {
			go s.shutdown()
		}
	})
	return &emptypb.Empty{}, nil
}

var _ taskapi.TTRPCTaskService = (*service)(nil)
