package boot

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/gofer/proto"
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/gofer"
	"github.com/moat-sandbox/moat/sentry/fs/overlay"
	"github.com/moat-sandbox/moat/sentry/fs/tmpfs"
	"github.com/moat-sandbox/moat/sentry/kernel"
)

// This file is the sandbox side of a sandbox holding several containers
// (a Kubernetes pod): the first container is the root one, whose init is
// the kernel's init; each later one joins the running sandbox with the
// root container's addContainer call and gets
//
//   - its own root file system, served by a gofer of its own (whose
//     connection comes with the call), under its own memory overlay, as a
//     mount namespace of its own: no path of another container reaches
//     it, and its processes have its root as their root, as chroot
//     would give them;
//   - its own spec mounts, maskedPaths and readonlyPaths, and /dev,
//     /proc, /sys and /dev/shm as the root container has them;
//   - its own init, a process loaded by addContainer and run by start,
//     with its own stdio and seccomp filter;
//   - its own control socket (bound by runsc in its state directory,
//     the listening descriptor passed with the call), on which start,
//     kill, wait, ps, stats, state and exec answer for it alone, and
//     destroy removes it;
//   - its own exit file, where its init's status is written.
//
// A process belongs to the container whose mount namespace holds its
// root directory (the leader's): processes inherit it across fork and
// exec, and the container's init and exec'd processes start with it.
//
// PID namespaces: a container whose spec asks for a PID namespace of its
// own (a pid entry in linux.namespaces without a path, as CRI's
// container mode makes it) gets one, child of the sandbox's: its init is
// pid 1 there and its /proc shows its own processes. One whose pid entry
// names a path (CRI's pod mode names the sandbox container's) or that
// has none shares the sandbox's PID namespace. Either way the death of a
// container's init kills the container's other processes, as a PID
// namespace's init's does. The root container's init is the kernel's:
// when it exits, every container's processes die.
//
// Pause and resume freeze the whole kernel, so they are refused for a
// container that is not the root one.
//
// Locks: subContainer.mu guards the container's own state; it is taken
// after controller.mu where both are held.

// maxRequestFDs bounds the descriptors one control request may carry:
// addContainer's gofer connection, control socket, exit file and stdio.
const maxRequestFDs = 6

// ContainerSpec is a container joining a running sandbox (addContainer).
// The request carries six descriptors: the gofer connection, the
// container's listening control socket, its exit file, and its init's
// stdin, stdout and stderr.
type ContainerSpec struct {
	// ID is the container's id.
	ID string `json:"id"`
	// Spec is its init and mounts. Hostname and Domainname are ignored:
	// the containers of a sandbox share its UTS namespace.
	Spec Spec `json:"spec"`
	// Terminal says init's stdio is a terminal it leads.
	Terminal bool `json:"terminal,omitempty"`
	// WritableRoot serves the gofer's root read-write, as the root
	// container's with --overlay=none.
	WritableRoot bool `json:"writableRoot,omitempty"`
	// NewPIDNamespace gives the container a PID namespace of its own,
	// whose init its init is; without it, it shares the sandbox's.
	NewPIDNamespace bool `json:"newPidNamespace,omitempty"`
}

// pidNamespace says which PID namespace a loaded process goes in: the
// sandbox's (the zero value), a new one whose init it is, or join.
type pidNamespace struct {
	new  bool
	join *kernel.PIDNamespace
}

// subContainer is a container that joined the sandbox.
type subContainer struct {
	id     string
	s      *Sandbox
	parent *controller // the root container's
	ctrl   *controller // its own control socket's
	mns    *fs.MountNamespace
	// upper is the memory-backed upper layer of its root's overlay (nil
	// for a writable gofer root).
	upper *fs.Filesystem

	client   *proto.Client
	goferFD  int // the connection's descriptor, owned by client
	listenFD int
	exitFD   int
	seccomp  *SeccompFilter
	init     *kernel.ExternalProcess
	// ownPIDNS says init is the init of a PID namespace of its own; in
	// the sandbox's namespace (a pod sharing it) init is a plain process.
	ownPIDNS bool

	mu sync.Mutex
	// started is set by start; stopped by a kill before start or by
	// destroy, stopStatus being then the status to report.
	started    bool
	stopped    bool
	stopStatus int
	// done is closed once init has exited, the container's other
	// processes are gone and status is in the exit file.
	done   chan struct{}
	status int
}

// addContainer makes the container req.Container, taking ownership of
// fds (see ContainerSpec).
func (c *controller) addContainer(req *Request, fds []int) Response {
	closeAll := func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}
	if req.Container == nil || req.Container.ID == "" {
		closeAll()
		return Response{Error: "addContainer without a container"}
	}
	if len(fds) != maxRequestFDs {
		closeAll()
		return Response{Error: fmt.Sprintf("addContainer needs %d descriptors, got %d", maxRequestFDs, len(fds))}
	}
	cs := req.Container
	select {
	case <-c.s.done:
		closeAll()
		return Response{Error: "container not running"}
	default:
	}
	c.mu.Lock()
	_, dup := c.subs[cs.ID]
	finishing := c.finishing
	c.mu.Unlock()
	if dup || finishing {
		closeAll()
		if dup {
			return Response{Error: fmt.Sprintf("container %s is in the sandbox already", cs.ID)}
		}
		return Response{Error: "container not running"}
	}
	sc, err := c.s.newSubContainer(cs, fds)
	if err != nil {
		r := Response{Error: fmt.Sprintf("adding container %s: %v", cs.ID, err)}
		var ee *ExecError
		if errors.As(err, &ee) {
			r.ExecStatus = ee.Status
		}
		return r
	}
	sc.parent = c
	sc.ctrl = &controller{s: c.s, stop: make(chan struct{}), sub: sc}
	c.mu.Lock()
	c.subs[cs.ID] = sc
	c.mu.Unlock()
	go sc.ctrl.acceptLoop(sc.listenFD)
	go sc.watchGofer()
	c.s.log.Debug("container added", "id", cs.ID, "pid", sc.init.PID())
	return Response{PID: int32(sc.init.PID())}
}

// newSubContainer mounts cs's root and loads its init. It owns fds: on
// error they are closed and nothing of the container is left.
func (s *Sandbox) newSubContainer(cs *ContainerSpec, fds []int) (sc *subContainer, err error) {
	goferFD, listenFD, exitFD, stdio := fds[0], fds[1], fds[2], fds[3:6]
	var client *proto.Client
	defer func() {
		if err == nil {
			return
		}
		if client != nil {
			client.Shutdown()
		} else {
			unix.Close(goferFD)
		}
		unix.Close(listenFD)
		unix.Close(exitFD)
	}()
	closeStdio := func() {
		for _, fd := range stdio {
			unix.Close(fd)
		}
	}
	spec := &cs.Spec
	if len(spec.Argv) == 0 {
		closeStdio()
		return nil, errors.New("no command")
	}
	client, err = proto.NewClient(goferFD)
	if err != nil {
		client = nil // NewClient closed it
		goferFD = -1
		closeStdio()
		return nil, fmt.Errorf("connecting to the gofer: %w", err)
	}
	cfg := Config{
		WritableRoot:  cs.WritableRoot,
		ReadOnlyRoot:  spec.ReadOnlyRoot,
		Mounts:        spec.Mounts,
		MaskedPaths:   spec.MaskedPaths,
		ReadonlyPaths: spec.ReadonlyPaths,
		Devices:       spec.Devices,
	}
	mns, upper, err := s.mountContainerRoot(cfg, client)
	if err != nil {
		closeStdio()
		return nil, err
	}
	filter, err := loadSeccomp(spec.Process.Seccomp, s.log)
	if err != nil {
		closeStdio()
		return nil, err
	}
	es := &ExecSpec{Argv: spec.Argv, Env: spec.Env, Cwd: spec.Cwd, Process: spec.Process, Terminal: cs.Terminal}
	p, err := s.loadProcess(mns.Root(), filter, pidNamespace{new: cs.NewPIDNamespace}, es, stdio)
	if err != nil {
		return nil, err
	}
	return &subContainer{
		id: cs.ID, s: s, mns: mns, upper: upper, client: client, goferFD: goferFD,
		listenFD: listenFD, exitFD: exitFD, seccomp: filter, init: p,
		ownPIDNS: cs.NewPIDNamespace, done: make(chan struct{}),
	}, nil
}

// mountContainerRoot builds a container's mount namespace: its root
// through client (as mountRoot does the root container's: the gofer's
// tree, under an overlay whose upper layer, returned too, is a tmpfs,
// unless cfg.WritableRoot), /dev, /proc, /sys and /dev/shm, then the
// spec's mounts.
func (s *Sandbox) mountContainerRoot(cfg Config, client *proto.Client) (*fs.MountNamespace, *fs.Filesystem, error) {
	var rootFS, upper *fs.Filesystem
	var err error
	if cfg.WritableRoot {
		rootFS, err = gofer.NewWritable(client)
	} else {
		var lower *fs.Filesystem
		if lower, err = gofer.New(client); err == nil {
			upper = tmpfs.New(s.k.MemFile, tmpfs.DefaultOptions(s.k.MemFile), nil)
			rootFS, err = overlay.New(kernel.Background(), upper, lower)
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("mounting the root: %w", err)
	}
	// Its own mount namespace, with mount ids distinct from other
	// containers' (as Linux's are).
	mns := s.k.MountNS.NewSiblingNamespace(rootFS, fs.MountFlags{})
	if err := mountSpecial(s.k, mns, s.log); err != nil {
		return nil, nil, err
	}
	if err := applySpecMounts(s.k, mns, cfg, client, s.log); err != nil {
		return nil, nil, err
	}
	if cfg.ReadOnlyRoot && !cfg.WritableRoot {
		mns.Root().Mount.SetFlags(fs.MountFlags{ReadOnly: true})
	}
	return mns, upper, nil
}

// release frees the memory the container's files hold: the files of its
// root's upper layer and of its tmpfs mounts (/dev/shm, the spec's), which
// no process can reach any more. (A tmpfs frees a file's pages once it
// is unlinked and closed; a mount tree that is merely dropped keeps
// them.) Read-only tmpfs mounts (masked directories) are empty. It is
// called once, when the container is removed.
func (sc *subContainer) release() {
	fss := []*fs.Filesystem{}
	if sc.upper != nil {
		fss = append(fss, sc.upper)
	}
	for _, m := range sc.mns.Mounts() {
		if f := m.Filesystem(); f.Type() == "tmpfs" && !f.ReadOnly() && !m.Flags().ReadOnly {
			fss = append(fss, f)
		}
	}
	seen := map[*fs.Filesystem]bool{}
	for _, f := range fss {
		if seen[f] {
			continue
		}
		seen[f] = true
		if err := emptyFilesystem(f); err != nil {
			sc.s.log.Debug("emptying a destroyed container's file system", "id", sc.id, "type", f.Type(), "err", err)
		}
	}
	// The container's reference on its mount namespace: the namespace
	// goes with the last process (or namespace file) holding it.
	sc.mns.DecRef()
}

// emptyFilesystem removes every file and directory of f.
func emptyFilesystem(f *fs.Filesystem) error {
	root := fs.NewMountNamespace(f, fs.MountFlags{}).Root()
	return removeContents(kernel.Background(), root, "/", 0)
}

// removeContents removes what directory dir (under root) holds; depth
// bounds the recursion.
func removeContents(ctx fs.Context, root fs.VirtualDentry, dir string, depth int) error {
	if depth > 512 {
		return unix.ELOOP
	}
	fd, err := fs.Open(ctx, fs.Lookup{Root: root, Start: root, Path: dir}, fs.OpenOptions{Flags: unix.O_RDONLY | unix.O_DIRECTORY})
	if err != nil {
		return err
	}
	var ents []fs.Dirent
	if it, ok := fd.Impl().(fs.DirIterator); ok {
		err = it.IterDirents(ctx, fd, func(d fs.Dirent) bool {
			ents = append(ents, d)
			return true
		})
	}
	fd.DecRef()
	for _, d := range ents {
		if d.Name == "." || d.Name == ".." {
			continue
		}
		p := path.Join(dir, d.Name)
		var rerr error
		if d.Type == unix.DT_DIR {
			if rerr = removeContents(ctx, root, p, depth+1); rerr == nil {
				rerr = fs.Rmdir(ctx, &fs.Lookup{Root: root, Start: root, Path: p})
			}
		} else {
			rerr = fs.Unlink(ctx, &fs.Lookup{Root: root, Start: root, Path: p})
		}
		if err == nil {
			err = rerr
		}
	}
	return err
}

// exec loads and starts spec's process in the container.
func (sc *subContainer) exec(spec *ExecSpec, stdio []int) (*kernel.ExternalProcess, error) {
	select {
	case <-sc.done:
		for _, fd := range stdio {
			unix.Close(fd)
		}
		return nil, kernel.ErrInitExited
	default:
	}
	p, err := sc.s.loadProcess(sc.mns.Root(), sc.seccomp, pidNamespace{join: sc.init.PIDNamespace()}, spec, stdio)
	if err != nil {
		return nil, err
	}
	sc.s.log.Debug("exec", "container", sc.id, "pid", p.PID(), "argv", spec.Argv)
	p.Start()
	return p, nil
}

// owns reports whether tg belongs to the container.
func (sc *subContainer) owns(tg *kernel.ThreadGroup) bool {
	return namespaceOf(tg) == sc.mns
}

// namespaceOf returns the mount namespace of tg's root directory, or the
// one that was copied from if a process of it made its own
// (CLONE_NEWNS): the container's; nil if it has none.
func namespaceOf(tg *kernel.ThreadGroup) *fs.MountNamespace {
	l := tg.Leader()
	if l == nil {
		return nil
	}
	fsc := l.FSContext()
	if fsc == nil {
		return nil
	}
	root := fsc.Root()
	if root.Mount == nil {
		return nil
	}
	return root.Mount.Namespace().Origin()
}

// threadGroups returns the container's processes.
func (sc *subContainer) threadGroups() []*kernel.ThreadGroup {
	var out []*kernel.ThreadGroup
	for _, tg := range sc.s.k.ThreadGroups() {
		if sc.owns(tg) {
			out = append(out, tg)
		}
	}
	return out
}

// running reports whether a process of the container has a task that
// has not exited (zombies wait for their reaper, maybe in another
// container).
func (sc *subContainer) running() bool {
	for _, tg := range sc.threadGroups() {
		if len(tg.Tasks()) > 0 {
			return true
		}
	}
	return false
}

// rootThreadGroups returns the root container's processes: those of no
// container that joined.
func (c *controller) rootThreadGroups() []*kernel.ThreadGroup {
	c.mu.Lock()
	subs := make(map[*fs.MountNamespace]bool, len(c.subs))
	for _, sc := range c.subs {
		subs[sc.mns] = true
	}
	c.mu.Unlock()
	all := c.s.k.ThreadGroups()
	if len(subs) == 0 {
		return all
	}
	var out []*kernel.ThreadGroup
	for _, tg := range all {
		if !subs[namespaceOf(tg)] {
			out = append(out, tg)
		}
	}
	return out
}

// killAll sends sig to every process of the container; init gets it
// from an ancestor namespace (SignalFromAncestor).
func (sc *subContainer) killAll(sig kernel.Signal) {
	for _, tg := range sc.threadGroups() {
		sc.signal(tg, sig) // one gone meanwhile is fine
	}
}

// signal sends sig to tg, a process of the container, from outside: its
// init, when it is a PID namespace's init, gets only what such an init
// gets from an ancestor namespace.
func (sc *subContainer) signal(tg *kernel.ThreadGroup, sig kernel.Signal) error {
	if tg == sc.init.ThreadGroup() {
		return sc.signalInit(sig)
	}
	return tg.SendSignal(kernel.NewSignalInfo(sig, kernel.SI_USER))
}

// signalInit sends sig to the container's init as runc's kill does: the
// init of a PID namespace of its own gets SIGKILL, SIGSTOP and what it
// handles or blocks; in a namespace shared with the pod (where the
// pause process is init, and runc's container process is a plain one)
// it gets the signal as any process does, so SIGTERM kills a sleep.
func (sc *subContainer) signalInit(sig kernel.Signal) error {
	if sc.ownPIDNS {
		return sc.init.SignalFromAncestor(sig)
	}
	return sc.init.ThreadGroup().SendSignal(kernel.NewSignalInfo(sig, kernel.SI_USER))
}

// start runs init and, once it has exited, tears the container's other
// processes down as a PID namespace's would be.
func (sc *subContainer) start() error {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	switch {
	case sc.stopped:
		return errors.New("the container was killed before it started")
	case sc.started:
		return errors.New("init was started already")
	}
	sc.started = true
	sc.init.Start()
	go sc.reap()
	return nil
}

// reap waits for init, kills what is left of the container, and writes
// the status to the exit file.
func (sc *subContainer) reap() {
	<-sc.init.Done()
	status := exitStatus(sc.init.Status())
	sc.killAll(kernel.Signal(unix.SIGKILL))
	deadline := time.Now().Add(5 * time.Second)
	for sc.running() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	// Init's terminal, if it has one, has written its last output.
	<-sc.s.ttys.done(sc.init)
	sc.mu.Lock()
	if sc.stopped {
		status = sc.stopStatus
	}
	sc.status = status
	sc.mu.Unlock()
	b := []byte(strconv.Itoa(status) + "\n")
	if _, err := unix.Pwrite(sc.exitFD, b, 0); err != nil {
		sc.s.log.Warn("writing a container's exit status", "id", sc.id, "err", err)
	}
	sc.s.log.Debug("container exited", "id", sc.id, "status", status)
	close(sc.done)
}

// stopUnstartedLocked ends a container whose init has not run: the loaded init is
// killed and run so that it dies at once, and status is what the
// container reports.
// Preconditions: sc.mu is held; !sc.started.
func (sc *subContainer) stopUnstartedLocked(status int) {
	sc.stopped = true
	sc.stopStatus = status
	sc.started = true
	sc.init.SignalFromAncestor(kernel.Signal(unix.SIGKILL))
	sc.init.Start()
	go sc.reap()
}

// call answers a control call on the container's own socket.
func (sc *subContainer) call(req *Request) Response {
	sc.s.log.Debug("control call", "container", sc.id, "method", req.Method, "signal", req.Signal, "all", req.All)
	switch req.Method {
	case "start":
		if err := sc.start(); err != nil {
			return Response{Error: err.Error()}
		}
		return Response{}
	case "kill":
		return sc.kill(kernel.Signal(req.Signal), req.All, req.PID)
	case "wait":
		<-sc.done
		return Response{Exited: true, Status: sc.status}
	case "ps":
		return Response{Processes: sc.s.processes(sc.threadGroups())}
	case "stats":
		return Response{Stats: sc.s.stats(sc.threadGroups(), false)}
	case "state":
		sc.mu.Lock()
		r := Response{Started: sc.started && !sc.stopped}
		sc.mu.Unlock()
		select {
		case <-sc.done:
			r.Exited, r.Status = true, sc.status
		default:
		}
		return r
	case "pause", "resume":
		return Response{Error: "pausing one container of a sandbox holding several is not supported"}
	case "destroy":
		sc.parent.removeSub(sc)
		return Response{}
	}
	return Response{Error: fmt.Sprintf("unknown method %q", req.Method)}
}

// kill sends sig to the container's init, with all to every process of
// the container, or to process pid of the container.
func (sc *subContainer) kill(sig kernel.Signal, all bool, pid int32) Response {
	if !sig.IsValid() {
		return Response{Error: fmt.Sprintf("invalid signal %d", sig)}
	}
	sc.mu.Lock()
	if !sc.started {
		defer sc.mu.Unlock()
		if !ignoredByDefault[sig] {
			sc.stopUnstartedLocked(128 + int(sig))
		}
		return Response{}
	}
	sc.mu.Unlock()
	select {
	case <-sc.done:
		return Response{Error: "container not running"}
	default:
	}
	if pid != 0 {
		tg := sc.s.k.ThreadGroupByID(kernel.ThreadID(pid))
		if tg == nil || !sc.owns(tg) {
			return Response{Error: fmt.Sprintf("no such process %d", pid)}
		}
		if err := sc.signal(tg, sig); err != nil {
			return Response{Error: fmt.Sprintf("signalling process %d: %v", pid, err)}
		}
		return Response{}
	}
	if all {
		for _, tg := range sc.threadGroups() {
			if tg != sc.init.ThreadGroup() {
				tg.SendSignal(kernel.NewSignalInfo(sig, kernel.SI_USER)) // one gone meanwhile is fine
			}
		}
	}
	// As runc's kill (see signalInit).
	if err := sc.signalInit(sig); err != nil {
		return Response{Error: fmt.Sprintf("signalling init: %v", err)}
	}
	return Response{}
}

// removeSub kills sc's processes, waits for them, and drops everything
// of it: its gofer connection, its control socket (after the call in
// flight is answered), its exit file.
func (c *controller) removeSub(sc *subContainer) {
	sc.mu.Lock()
	if !sc.started {
		sc.stopUnstartedLocked(128 + int(unix.SIGKILL))
	}
	sc.mu.Unlock()
	sc.killAll(kernel.Signal(unix.SIGKILL))
	select {
	case <-sc.done:
		unix.Close(sc.exitFD) // written: reap is done with it
	case <-time.After(10 * time.Second):
		sc.s.log.Warn("container's processes did not exit", "id", sc.id)
	}
	c.mu.Lock()
	if c.subs[sc.id] == sc {
		delete(c.subs, sc.id)
	}
	c.mu.Unlock()
	sc.release()
	sc.client.Shutdown()
	// accept(2) blocked on the socket returns on shutdown; the loop
	// then ends and the descriptor can go.
	unix.Shutdown(sc.listenFD, unix.SHUT_RDWR)
}

// finish waits (briefly) for the container's status to be written: the
// sandbox is going, and init's death has killed every process.
func (sc *subContainer) finish() {
	sc.mu.Lock()
	if !sc.started {
		sc.stopUnstartedLocked(128 + int(unix.SIGKILL))
	}
	sc.mu.Unlock()
	select {
	case <-sc.done:
	case <-time.After(2 * time.Second):
	}
}

// watchGofer kills the container when its gofer hangs up, as the root
// container's controller does for the root's.
func (sc *subContainer) watchGofer() {
	fds := []unix.PollFd{{Fd: int32(sc.goferFD), Events: unix.POLLRDHUP}}
	for {
		fds[0].Revents = 0
		_, err := unix.Poll(fds, 200)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		select {
		case <-sc.done:
			return
		default:
		}
		if err != nil || fds[0].Revents&unix.POLLNVAL != 0 {
			return
		}
		if fds[0].Revents&(unix.POLLRDHUP|unix.POLLHUP|unix.POLLERR) != 0 {
			break
		}
	}
	sc.s.log.Warn("a container's gofer hung up: killing the container", "id", sc.id)
	sc.mu.Lock()
	if !sc.started {
		sc.stopUnstartedLocked(128 + int(unix.SIGKILL))
	}
	sc.mu.Unlock()
	sc.killAll(kernel.Signal(unix.SIGKILL))
}
