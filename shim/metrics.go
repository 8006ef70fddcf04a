package shim

import (
	"github.com/containerd/cgroups/v3/cgroup1/stats"
	"github.com/containerd/typeurl/v2"
	"google.golang.org/protobuf/types/known/anypb"
)

// metricsAny converts runsc's stats into containerd's cgroup v1 Metrics
// (io.containerd.cgroups.v1.Metrics), which `ctr task metrics` and the
// CRI plugin decode.
func metricsAny(st *Stats) (*anypb.Any, error) {
	m := &stats.Metrics{
		Pids: &stats.PidsStat{Current: st.Pids.Current, Limit: st.Pids.Limit},
		CPU: &stats.CPUStat{Usage: &stats.CPUUsage{
			Total:  st.CPU.Usage.Total,
			Kernel: st.CPU.Usage.Kernel,
			User:   st.CPU.Usage.User,
			PerCPU: st.CPU.Usage.PerCPU,
		}},
		Memory: &stats.MemoryStat{Usage: &stats.MemoryEntry{
			Limit:   st.Memory.Usage.Limit,
			Usage:   st.Memory.Usage.Usage,
			Max:     st.Memory.Usage.Max,
			Failcnt: st.Memory.Usage.Failcnt,
		}},
	}
	return typeurl.MarshalAnyToProto(m)
}
