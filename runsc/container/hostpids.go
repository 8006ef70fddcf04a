package container

import (
	"fmt"
	"os"
	"sort"
	"strconv"
)

// HostPIDs returns the host pids of the processes that run the container's
// code: the sandbox process and every process in its PID namespace (the
// stub processes whose address spaces the container's processes use),
// sorted. It is what runc's `ps --format json` contract asks for (host
// pids, which Docker's `docker top` looks up in the host's ps(1)). The
// gofer, which serves files and runs none of the container's code, is not
// listed. A container in a shared sandbox gets the whole sandbox's. A
// container that is not running has none.
func (c *Container) HostPIDs() ([]int, error) {
	if c.rec.Status != Created && c.rec.Status != Running && c.rec.Status != Paused {
		return nil, nil
	}
	sb := c.rec.Sandbox
	if sb.Pid <= 0 || !sb.alive() {
		return nil, nil
	}
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", sb.Pid))
	if err != nil {
		return nil, fmt.Errorf("the sandbox's PID namespace: %w", err)
	}
	return pidsInNamespace(ns, sb.Pid)
}

// pidsInNamespace lists the host pids whose PID namespace link reads ns,
// with self (whose namespace it is) always included. Processes that go
// away meanwhile are left out.
func pidsInNamespace(ns string, self int) ([]int, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	pids := []int{self}
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil || pid == self {
			continue
		}
		if l, err := os.Readlink("/proc/" + n + "/ns/pid"); err == nil && l == ns {
			pids = append(pids, pid)
		}
	}
	sort.Ints(pids)
	return pids, nil
}
