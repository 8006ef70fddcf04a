package shim

import (
	"context"
	"testing"

	taskapi "github.com/containerd/containerd/api/runtime/task/v2"
	"github.com/containerd/errdefs"
	"github.com/containerd/errdefs/pkg/errgrpc"
	"google.golang.org/protobuf/types/known/anypb"
)

// TestCallsDuringCreate checks that every call naming a container Create
// is still making (its id reserved with a nil entry) answers not found
// rather than crashing the shim: containerd 2.x's CRI asks for Stats of
// a container while creating it.
func TestCallsDuringCreate(t *testing.T) {
	s := newService("ns", nil, nil)
	s.containers["c1"] = nil
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"Stats", func() error { _, err := s.Stats(ctx, &taskapi.StatsRequest{ID: "c1"}); return err }},
		{"State", func() error { _, err := s.State(ctx, &taskapi.StateRequest{ID: "c1"}); return err }},
		{"Kill", func() error { _, err := s.Kill(ctx, &taskapi.KillRequest{ID: "c1", Signal: 9}); return err }},
		{"Pids", func() error { _, err := s.Pids(ctx, &taskapi.PidsRequest{ID: "c1"}); return err }},
		{"Wait", func() error { _, err := s.Wait(ctx, &taskapi.WaitRequest{ID: "c1"}); return err }},
		{"Delete", func() error { _, err := s.Delete(ctx, &taskapi.DeleteRequest{ID: "c1"}); return err }},
		{"Start", func() error { _, err := s.Start(ctx, &taskapi.StartRequest{ID: "c1"}); return err }},
		{"Pause", func() error { _, err := s.Pause(ctx, &taskapi.PauseRequest{ID: "c1"}); return err }},
		{"Update", func() error { _, err := s.Update(ctx, &taskapi.UpdateTaskRequest{ID: "c1"}); return err }},
		{"Exec", func() error {
			_, err := s.Exec(ctx, &taskapi.ExecProcessRequest{ID: "c1", ExecID: "e1", Spec: &anypb.Any{Value: []byte("{}")}})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := errgrpc.ToNative(tc.call()); !errdefs.IsNotFound(err) {
				t.Errorf("%s of a container being created: %v, want not found", tc.name, err)
			}
		})
	}
	if _, err := s.Connect(ctx, &taskapi.ConnectRequest{ID: "c1"}); err != nil {
		t.Errorf("Connect: %v", err)
	}
}
