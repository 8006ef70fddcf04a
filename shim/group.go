package shim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/containerd/log"
	"golang.org/x/sys/unix"
)

// This file groups the containers of a Kubernetes pod in one shim and one
// Moat sandbox, as containerd's CRI plugin expects of a runtime: the pod's
// containers carry the annotation io.kubernetes.cri.sandbox-id naming the
// pod's sandbox (pause) container, whose own value is its own id.
//
//   - start names the server's socket after the group (the sandbox id)
//     instead of the container id, so the pod's later containers find
//     the server the sandbox container started, as containerd's runc
//     shim does with the same annotation;
//   - runsc create puts a container of type "container" with a
//     sandbox id in that sandbox (runsc/container/subcontainer.go). Its
//     task pid is the sandbox process, which does not exit with the
//     container's init: the server learns of that exit from `runsc wait`
//     (waitSub) instead of the reaper.

// The annotations containerd's CRI plugin puts on a pod's containers.
const (
	annotationSandboxID     = "io.kubernetes.cri.sandbox-id"
	annotationContainerType = "io.kubernetes.cri.container-type"
	// annotationGroup groups containers in one shim outside Kubernetes,
	// as with containerd's runc shim.
	annotationGroup = "io.containerd.runc.v2.group"
)

// bundleAnnotations reads the annotations of the bundle's config.json;
// nil if it cannot be read.
func bundleAnnotations(bundle string) map[string]string {
	b, err := os.ReadFile(filepath.Join(bundle, "config.json"))
	if err != nil {
		return nil
	}
	var spec struct {
		Annotations map[string]string `json:"annotations"`
	}
	if json.Unmarshal(b, &spec) != nil {
		return nil
	}
	return spec.Annotations
}

// groupID is the id whose server serves container id of bundle: its
// group's or pod's when its annotations name one, else its own.
func groupID(bundle, id string) string {
	ann := bundleAnnotations(bundle)
	for _, k := range []string{annotationGroup, annotationSandboxID} {
		if g := ann[k]; g != "" {
			return g
		}
	}
	return id
}

// joinsSandbox reports whether runsc create puts container id of bundle
// in another container's sandbox (see runsc/container/subcontainer.go).
func joinsSandbox(bundle, id string) bool {
	ann := bundleAnnotations(bundle)
	sid := ann[annotationSandboxID]
	return ann[annotationContainerType] == "container" && sid != "" && sid != id
}

// Wait runs `runsc wait id` and returns the exit status it prints.
func (r *Runsc) Wait(ctx context.Context, id string) (int, error) {
	out, err := r.run(ctx, cmdIO{}, "wait", id)
	if err != nil {
		return 0, err
	}
	var w struct {
		ExitStatus int `json:"exitStatus"`
	}
	if err := json.Unmarshal(out, &w); err != nil {
		return 0, fmt.Errorf("runsc wait: %w", err)
	}
	return w.ExitStatus, nil
}

// waitSub reports the exit of p, the init of a container that joined
// another's sandbox, when `runsc wait` returns: with its status, or as
// killed when the sandbox went without telling it (its root container
// was deleted).
func (s *service) waitSub(c *container, p *process) {
	status, err := c.runsc.Wait(context.Background(), c.id)
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			log.L.WithError(err).WithField("id", c.id).Debug("runsc wait")
		}
		status = 128 + int(unix.SIGKILL)
	}
	s.processExited(p, uint32(status), time.Now())
}
