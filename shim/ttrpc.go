package shim

import (
	"context"

	taskapi "github.com/containerd/containerd/api/runtime/task/v2"
	"github.com/containerd/ttrpc"
	"google.golang.org/protobuf/proto"
)

// Task service names: containerd 1.6 and 1.7 call v2; containerd 2.x
// calls v3 where a shim serves it, else v2. The two services' messages
// are the same, field for field, so one implementation serves both.
const (
	taskServiceV2 = "containerd.task.v2.Task"
	taskServiceV3 = "containerd.task.v3.Task"
)

// method adapts a task service method to ttrpc's form.
func method[Req any, PReq interface {
	*Req
	proto.Message
}, Resp any](f func(context.Context, PReq) (Resp, error)) ttrpc.Method {
	return func(ctx context.Context, unmarshal func(any) error) (any, error) {
		req := PReq(new(Req))
		if err := unmarshal(req); err != nil {
			return nil, err
		}
		return f(ctx, req)
	}
}

// registerTaskService registers svc as both task services.
func registerTaskService(server *ttrpc.Server, svc taskapi.TTRPCTaskService) {
	methods := map[string]ttrpc.Method{
		"State":      method(svc.State),
		"Create":     method(svc.Create),
		"Start":      method(svc.Start),
		"Delete":     method(svc.Delete),
		"Pids":       method(svc.Pids),
		"Pause":      method(svc.Pause),
		"Resume":     method(svc.Resume),
		"Checkpoint": method(svc.Checkpoint),
		"Kill":       method(svc.Kill),
		"Exec":       method(svc.Exec),
		"ResizePty":  method(svc.ResizePty),
		"CloseIO":    method(svc.CloseIO),
		"Update":     method(svc.Update),
		"Wait":       method(svc.Wait),
		"Stats":      method(svc.Stats),
		"Connect":    method(svc.Connect),
		"Shutdown":   method(svc.Shutdown),
	}
	server.RegisterService(taskServiceV2, &ttrpc.ServiceDesc{Methods: methods})
	server.RegisterService(taskServiceV3, &ttrpc.ServiceDesc{Methods: methods})
}
