package eviction

import (
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// Observation is one signal's available amount and capacity, and when it
// was measured.
type Observation struct {
	Available resource.Quantity
	Capacity  resource.Quantity
	Time      time.Time
}

// Observations are the signals observed in one pass.
type Observations map[Signal]Observation

// Observe derives the signals from a stats summary as upstream's
// makeSignalObservations: memory.available from the node's memory
// (capacity = available + working set: the root cgroup), allocatable
// memory from the "pods" system container, the node, image and container
// filesystems, and pid.available from the node's rlimit (max PID minus
// running processes). A signal whose figures are missing is absent.
func Observe(s *statsapi.Summary) Observations {
	out := Observations{}
	if s == nil {
		return out
	}
	n := &s.Node
	if m := n.Memory; m != nil && m.AvailableBytes != nil && m.WorkingSetBytes != nil {
		out[SignalMemoryAvailable] = bytesObs(*m.AvailableBytes, *m.AvailableBytes+*m.WorkingSetBytes, m.Time.Time)
	}
	for _, c := range n.SystemContainers {
		if m := c.Memory; c.Name == statsapi.SystemContainerPods && m != nil && m.AvailableBytes != nil && m.WorkingSetBytes != nil {
			out[SignalAllocatableMemoryAvailable] = bytesObs(*m.AvailableBytes, *m.AvailableBytes+*m.WorkingSetBytes, m.Time.Time)
		}
	}
	observeFs(out, n.Fs, SignalNodeFsAvailable, SignalNodeFsInodesFree)
	if rt := n.Runtime; rt != nil {
		observeFs(out, rt.ImageFs, SignalImageFsAvailable, SignalImageFsInodesFree)
		observeFs(out, rt.ContainerFs, SignalContainerFsAvailable, SignalContainerFsInodesFree)
	}
	if r := n.Rlimit; r != nil && r.NumOfRunningProcesses != nil && r.MaxPID != nil {
		out[SignalPIDAvailable] = Observation{
			Available: *resource.NewQuantity(*r.MaxPID-*r.NumOfRunningProcesses, resource.DecimalSI),
			Capacity:  *resource.NewQuantity(*r.MaxPID, resource.DecimalSI),
			Time:      r.Time.Time,
		}
	}
	return out
}

func observeFs(out Observations, fs *statsapi.FsStats, bytes, inodes Signal) {
	if fs == nil {
		return
	}
	if fs.AvailableBytes != nil && fs.CapacityBytes != nil {
		out[bytes] = bytesObs(*fs.AvailableBytes, *fs.CapacityBytes, fs.Time.Time)
	}
	if fs.InodesFree != nil && fs.Inodes != nil {
		out[inodes] = Observation{
			Available: *resource.NewQuantity(int64(*fs.InodesFree), resource.DecimalSI),
			Capacity:  *resource.NewQuantity(int64(*fs.Inodes), resource.DecimalSI),
			Time:      fs.Time.Time,
		}
	}
}

func bytesObs(available, capacity uint64, at time.Time) Observation {
	return Observation{
		Available: *resource.NewQuantity(int64(available), resource.BinarySI),
		Capacity:  *resource.NewQuantity(int64(capacity), resource.BinarySI),
		Time:      at,
	}
}
