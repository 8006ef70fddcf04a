package boot

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel"
)

// This file is the sandbox side of the control socket: the RPCs runsc
// start, kill, wait, ps, state, exec, pause and resume make to a created
// sandbox.
//
// The protocol: the host (runsc create) binds a SOCK_SEQPACKET unix socket
// in the container's state directory, listens, and hands the listening
// descriptor to the sandbox, which only accepts on it (the Sentry cannot
// bind paths). A client connects and sends one Request, a JSON message;
// the sandbox answers with one Response and closes. Methods:
//
//	start   run init (only once; an error after)
//	kill    send Signal to init, or with All to every process, or to
//	        process PID
//	wait    block until init (or with PID, a process exec started) has
//	        exited; Status is its status. With KillOnHangup, the process
//	        is killed if the caller hangs up first.
//	ps      Processes lists the sandbox's processes
//	stats   Stats: process count, CPU time, memory in use
//	state   Started, Exited and Status (the host keeps paused in its own state)
//	exec    start Exec's process (exec.go), its stdin, stdout and stderr
//	        passed with the request as SCM_RIGHTS; PID is its pid
//	pause   freeze every process (kernel.Pause); resume thaws them
//	addContainer
//	        a further container joins the sandbox (subcontainer.go):
//	        Container is its spec, and six descriptors come with the
//	        request; from then on it answers on a control socket of its
//	        own, with the calls above scoped to it, plus destroy
//
// When init has exited, the sandbox writes its status ("%d\n") to the exit
// file (a descriptor the host opened in the state directory), answers the
// waits in flight and exits.

// Request is one control call.
type Request struct {
	Method string `json:"method"`
	// Signal is kill's signal number.
	Signal int `json:"signal,omitempty"`
	// All sends kill's signal to every process, not init alone.
	All bool `json:"all,omitempty"`
	// PID names the process kill signals and wait waits for, instead
	// of init.
	PID int32 `json:"pid,omitempty"`
	// KillOnHangup makes wait kill process PID if the caller closes the
	// connection before it has exited.
	KillOnHangup bool `json:"killOnHangup,omitempty"`
	// Exec is exec's process.
	Exec *ExecSpec `json:"exec,omitempty"`
	// Container is addContainer's container.
	Container *ContainerSpec `json:"container,omitempty"`
}

// Response answers a Request. Error is empty on success.
type Response struct {
	Error   string `json:"error,omitempty"`
	Started bool   `json:"started,omitempty"`
	// PID is the pid of the process exec started.
	PID int32 `json:"pid,omitempty"`
	// ExecStatus, for an exec whose command cannot be run, is what a
	// shell would exit with (127 not found, 126 not executable).
	ExecStatus int           `json:"execStatus,omitempty"`
	Exited     bool          `json:"exited,omitempty"`
	Status     int           `json:"status,omitempty"`
	Processes  []ProcessInfo `json:"processes,omitempty"`
	Stats      *Stats        `json:"stats,omitempty"`
}

// Stats are the sandbox's resource figures, as the Sentry counts them.
type Stats struct {
	// PIDs is the number of live processes.
	PIDs int `json:"pids"`
	// UserNS and SystemNS are the CPU time of every process, live or
	// reaped, in nanoseconds.
	UserNS   uint64 `json:"userNs"`
	SystemNS uint64 `json:"systemNs"`
	// MemoryUsage is the memory file in use (application memory, page
	// cache, tmpfs), MemoryLimit its capacity, in bytes.
	MemoryUsage uint64 `json:"memoryUsage"`
	MemoryLimit uint64 `json:"memoryLimit"`
}

// ProcessInfo is one process of the sandbox, as ps shows it.
type ProcessInfo struct {
	PID     int32     `json:"pid"`
	PPID    int32     `json:"ppid"`
	UID     uint32    `json:"uid"`
	Start   time.Time `json:"start"`
	CPU     float64   `json:"cpuSeconds"`
	Cmdline string    `json:"cmd"`
}

// MaxMessage bounds one control message.
const MaxMessage = 1 << 20

// Serve answers control calls on the listening socket listenFD until init
// has exited (or a kill stopped a sandbox whose init never started), then
// writes the status to exitFD (if >= 0) and returns it.
func (s *Sandbox) Serve(listenFD, exitFD int) int {
	c := &controller{s: s, stop: make(chan struct{}), subs: make(map[string]*subContainer)}
	go c.acceptLoop(listenFD)
	go c.watchGofer()
	var status int
	select {
	case <-s.done:
		status = s.status
	case <-c.stop:
		status = c.stopStatus
	}
	if exitFD >= 0 {
		b := []byte(strconv.Itoa(status) + "\n")
		if _, err := unix.Pwrite(exitFD, b, 0); err != nil {
			s.log.Warn("writing the exit status", "err", err)
		}
	}
	c.finish()
	return status
}

type controller struct {
	s *Sandbox

	mu sync.Mutex
	// inFlight counts calls being answered; finishing stops new ones.
	inFlight  sync.WaitGroup
	finishing bool
	// stop is closed by a kill of an unstarted sandbox; stopStatus is
	// then the status to report.
	stop       chan struct{}
	stopped    bool
	stopStatus int
	// execs are the processes exec started that nobody has waited for
	// yet, by pid.
	execs map[int32]*kernel.ExternalProcess

	// sub is the container this controller answers for when it is not
	// the root container's (subcontainer.go); subs, on the root
	// container's controller, are the containers that joined, by id.
	sub  *subContainer
	subs map[string]*subContainer
}

// finish waits (briefly) for the answers in flight: waits are answered
// now that the status is known.
func (c *controller) finish() {
	c.mu.Lock()
	c.finishing = true
	subs := make([]*subContainer, 0, len(c.subs))
	for _, sc := range c.subs {
		subs = append(subs, sc)
	}
	c.mu.Unlock()
	done := make(chan struct{})
	go func() {
		// The other containers' processes died with init: their
		// exit files get their status before the sandbox goes.
		for _, sc := range subs {
			sc.finish()
		}
		c.inFlight.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		c.s.log.Warn("control calls still in flight at exit")
	}
}

func (c *controller) acceptLoop(fd int) {
	if c.sub != nil {
		// A joined container's socket, shut down by destroy.
		defer unix.Close(fd)
	}
	for {
		nfd, _, err := unix.Accept4(fd, unix.SOCK_CLOEXEC)
		if err != nil {
			if errors.Is(err, unix.EINTR) || errors.Is(err, unix.ECONNABORTED) {
				continue
			}
			if c.sub == nil || !errors.Is(err, unix.EINVAL) {
				c.s.log.Warn("control socket: accept", "err", err)
			}
			return
		}
		c.mu.Lock()
		if c.finishing {
			c.mu.Unlock()
			unix.Close(nfd)
			continue
		}
		c.inFlight.Add(1)
		c.mu.Unlock()
		go func() {
			defer c.inFlight.Done()
			defer unix.Close(nfd)
			c.handle(nfd)
		}()
	}
}

func (c *controller) handle(fd int) {
	buf := make([]byte, 64<<10)
	oob := make([]byte, unix.CmsgSpace(4*maxRequestFDs))
	n, oobn, _, _, err := unix.Recvmsg(fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil || n == 0 {
		return
	}
	fds, err := parseRights(oob[:oobn])
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	var req Request
	var resp Response
	switch uerr := json.Unmarshal(buf[:n], &req); {
	case uerr != nil:
		resp.Error = fmt.Sprintf("bad request: %v", uerr)
	case err != nil:
		resp.Error = fmt.Sprintf("bad request: %v", err)
	case req.Method == "exec":
		resp = c.exec(&req, fds)
		fds = nil // exec owns them
	case req.Method == "wait" && req.PID != 0:
		resp = c.waitExec(fd, &req)
	case req.Method == "addContainer" && c.sub == nil:
		resp = c.addContainer(&req, fds)
		fds = nil // addContainer owns them
	case c.sub != nil:
		resp = c.sub.call(&req)
	default:
		resp = c.call(&req)
	}
	b, err := json.Marshal(&resp)
	if err != nil {
		return
	}
	if len(b) > MaxMessage {
		b, _ = json.Marshal(&Response{Error: "answer too large"})
	}
	if err := unix.Sendmsg(fd, b, nil, nil, 0); err != nil {
		c.s.log.Debug("control socket: answering", "method", req.Method, "err", err)
	}
}

func (c *controller) call(req *Request) Response {
	s := c.s
	s.log.Debug("control call", "method", req.Method, "signal", req.Signal, "all", req.All)
	switch req.Method {
	case "start":
		if s.Started() {
			return Response{Error: "init was started already"}
		}
		// Under c.mu, so that a kill of the unstarted sandbox and a
		// start cannot both win.
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.stopped {
			return Response{Error: "the sandbox was killed before it started"}
		}
		s.Start()
		return Response{}
	case "kill":
		if req.PID != 0 && req.PID != 1 {
			return c.killPID(req.PID, kernel.Signal(req.Signal))
		}
		return c.kill(kernel.Signal(req.Signal), req.All)
	case "pause", "resume":
		if !s.Started() {
			return Response{Error: "container not running"}
		}
		select {
		case <-s.done:
			return Response{Error: "container not running"}
		default:
		}
		if req.Method == "pause" {
			s.k.Pause()
		} else {
			s.k.Unpause()
		}
		return Response{}
	case "wait":
		select {
		case <-s.done:
			return Response{Exited: true, Status: s.status}
		case <-c.stop:
			return Response{Exited: true, Status: c.stopStatus}
		}
	case "ps":
		return Response{Processes: s.processes(c.rootThreadGroups())}
	case "stats":
		return Response{Stats: s.stats(c.rootThreadGroups(), true)}
	case "state":
		r := Response{Started: s.Started()}
		select {
		case <-s.done:
			r.Exited, r.Status = true, s.status
		default:
		}
		return r
	}
	return Response{Error: fmt.Sprintf("unknown method %q", req.Method)}
}

// watchGofer kills the container when the gofer hangs up (it died, or
// was killed): without its files the container cannot go on, and a
// container that has lost them must show as stopped, not running.
func (c *controller) watchGofer() {
	fd := c.s.goferFD
	if fd < 0 {
		return
	}
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLRDHUP}}
	for {
		_, err := unix.Poll(fds, -1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || fds[0].Revents&unix.POLLNVAL != 0 {
			return // closed by the Sentry itself
		}
		if fds[0].Revents&(unix.POLLRDHUP|unix.POLLHUP|unix.POLLERR) != 0 {
			break
		}
	}
	c.s.log.Warn("the gofer hung up: killing the container")
	c.kill(kernel.Signal(unix.SIGKILL), true)
}

// ignoredByDefault are the signals whose default action is to do
// nothing: a kill with one of them leaves a created container as it is.
var ignoredByDefault = map[kernel.Signal]bool{
	kernel.Signal(unix.SIGCHLD): true, kernel.Signal(unix.SIGURG): true,
	kernel.Signal(unix.SIGWINCH): true, kernel.Signal(unix.SIGCONT): true,
}

func (c *controller) kill(sig kernel.Signal, all bool) Response {
	if !sig.IsValid() {
		return Response{Error: fmt.Sprintf("invalid signal %d", sig)}
	}
	s := c.s
	c.mu.Lock()
	if !s.Started() {
		defer c.mu.Unlock()
		// Init never ran: as runc's waiting init would, the container
		// dies of any signal but those ignored by default.
		if ignoredByDefault[sig] {
			return Response{}
		}
		if !c.stopped {
			c.stopped = true
			c.stopStatus = 128 + int(sig)
			close(c.stop)
		}
		return Response{}
	}
	c.mu.Unlock()
	select {
	case <-s.done:
		return Response{Error: "container not running"}
	default:
	}
	// As runc's kill on Linux: init, the PID namespace's init signalled
	// from an ancestor namespace, gets SIGKILL and SIGSTOP and the
	// signals it handles or blocks; any other is dropped (docker stop of
	// an init with no SIGTERM handler waits out its timeout).
	if err := s.k.SignalInitFromAncestor(sig); err != nil {
		return Response{Error: fmt.Sprintf("signalling init: %v", err)}
	}
	if all {
		seen := map[kernel.ThreadID]bool{}
		for _, tg := range c.rootThreadGroups() {
			pg := tg.ProcessGroupID()
			if pg == 0 || seen[pg] {
				continue
			}
			seen[pg] = true
			s.k.KillProcessGroup(pg, sig) // a group gone meanwhile is fine
		}
	}
	return Response{}
}

// Stats returns the sandbox's resource figures.
func (s *Sandbox) Stats() *Stats { return s.stats(s.k.ThreadGroups(), true) }

// stats returns the resource figures of the processes tgs; withInit adds
// the times of the processes init has reaped. The memory figures are the
// whole sandbox's.
func (s *Sandbox) stats(tgs []*kernel.ThreadGroup, withInit bool) *Stats {
	st := &Stats{MemoryUsage: s.k.MemFile.Used(), MemoryLimit: s.k.MemFile.Capacity()}
	var user, sys time.Duration
	for _, tg := range tgs {
		st.PIDs++
		u, y := tg.CPUTimes()
		user, sys = user+u, sys+y
	}
	// Reaped processes count in their reaper's children's times; all
	// end up in init's.
	if init := s.k.ThreadGroupByID(1); init != nil && withInit {
		u, y := init.ChildCPUTimes()
		user, sys = user+u, sys+y
	}
	st.UserNS, st.SystemNS = uint64(user), uint64(sys)
	return st
}

// Processes lists the sandbox's processes, by pid.
func (s *Sandbox) Processes() []ProcessInfo { return s.processes(s.k.ThreadGroups()) }

// processes lists the processes tgs, by pid.
func (s *Sandbox) processes(tgs []*kernel.ThreadGroup) []ProcessInfo {
	pk := kernel.ProcKernel{K: s.k}
	ctx := kernel.Background()
	want := make(map[int32]bool, len(tgs))
	for _, tg := range tgs {
		want[int32(tg.ID())] = true
	}
	var out []ProcessInfo
	for _, pid := range pk.PIDs(ctx) {
		tg := s.k.ThreadGroupByID(kernel.ThreadID(pid))
		pt, ok := pk.ThreadGroup(ctx, pid)
		if tg == nil || !ok || !want[pid] {
			continue
		}
		pi := ProcessInfo{PID: pid, PPID: int32(tg.ParentID())}
		if l := tg.Leader(); l != nil {
			pi.Start = l.StartTime()
		}
		if cr := pt.Credentials(); cr != nil {
			pi.UID = uint32(cr.RealUID)
		}
		u, st := tg.CPUTimes()
		pi.CPU = (u + st).Seconds()
		cmd := strings.TrimRight(string(pt.Cmdline()), "\x00")
		pi.Cmdline = strings.ReplaceAll(cmd, "\x00", " ")
		if pi.Cmdline == "" {
			pi.Cmdline = "[" + pt.Comm() + "]"
		}
		out = append(out, pi)
	}
	return out
}
