package nodestatus

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Capacity returns the node's capacity: existing with cpu, memory, pods,
// ephemeral-storage (with in.LocalStorageCapacityIsolation, when the root
// filesystem's size is known) and one
// hugepages-<size> per page size set from in, and the device plugin
// resources. Huge page sizes the machine no longer has are dropped; other
// resources (extended ones) are kept.
func Capacity(existing corev1.ResourceList, in Inputs) corev1.ResourceList {
	c := corev1.ResourceList{}
	for k, v := range existing {
		if !isHugePages(k) {
			c[k] = v.DeepCopy()
		}
	}
	c[corev1.ResourceCPU] = *resource.NewMilliQuantity(int64(in.Machine.NumCPU)*1000, resource.DecimalSI)
	c[corev1.ResourceMemory] = *resource.NewQuantity(in.Machine.MemoryBytes, resource.BinarySI)
	c[corev1.ResourcePods] = *resource.NewQuantity(int64(in.MaxPods), resource.DecimalSI)
	delete(c, corev1.ResourceEphemeralStorage)
	if in.LocalStorageCapacityIsolation && in.Machine.RootFSBytes > 0 {
		c[corev1.ResourceEphemeralStorage] = *resource.NewQuantity(in.Machine.RootFSBytes, resource.DecimalSI)
	}
	for size, total := range in.Machine.HugePages {
		c[corev1.ResourceName(corev1.ResourceHugePagesPrefix+size)] = *resource.NewQuantity(total, resource.BinarySI)
	}
	for k, v := range in.DevicePlugins.Capacity {
		c[k] = v.DeepCopy()
	}
	// A removed resource stays at 0, not absent, as upstream: absent is
	// how the scheduler tells cluster-level extended resources apart.
	for _, name := range in.DevicePlugins.Removed {
		c[corev1.ResourceName(name)] = *resource.NewQuantity(0, resource.DecimalSI)
	}
	return c
}

// Allocatable returns what pods may use: each resource of capacity less
// its reservation (Reservation), floored at 0; memory is further reduced
// by every huge page size's capacity, as upstream. Device plugin resources
// are at their healthy devices (in.DevicePlugins.Allocatable).
func Allocatable(capacity corev1.ResourceList, in Inputs) corev1.ResourceList {
	reserved := Reservation(capacity, in)
	a := corev1.ResourceList{}
	for k, v := range capacity {
		value := v.DeepCopy()
		if r, ok := reserved[k]; ok {
			value.Sub(r)
		}
		if value.Sign() < 0 {
			value.Set(0)
		}
		a[k] = value
	}
	for k, v := range in.DevicePlugins.Allocatable {
		a[k] = v.DeepCopy()
	}
	for k, v := range capacity {
		if !isHugePages(k) {
			continue
		}
		mem := a[corev1.ResourceMemory]
		mem.Sub(v)
		if mem.Sign() < 0 {
			mem.Set(0)
		}
		a[corev1.ResourceMemory] = mem
	}
	return a
}

// Reservation returns, for each resource of capacity, systemReserved +
// kubeReserved + the hard eviction threshold that guards it
// (memory.available for memory, nodefs.available for ephemeral-storage),
// leaving out zero sums. Values that do not parse are ignored: the
// configuration was validated at load.
func Reservation(capacity corev1.ResourceList, in Inputs) corev1.ResourceList {
	eviction := hardEvictionReservation(capacity, in.Reserved.EvictionHard)
	out := corev1.ResourceList{}
	for k := range capacity {
		sum := resource.NewQuantity(0, resource.DecimalSI)
		for _, m := range []map[string]string{in.Reserved.SystemReserved, in.Reserved.KubeReserved} {
			if q, err := resource.ParseQuantity(m[string(k)]); err == nil && m[string(k)] != "" {
				sum.Add(q)
			}
		}
		if q, ok := eviction[k]; ok {
			sum.Add(q)
		}
		if !sum.IsZero() {
			out[k] = *sum
		}
	}
	return out
}

// evictionResource maps a hard eviction signal that reserves capacity to
// the resource it reserves.
func evictionResource(signal string) (corev1.ResourceName, bool) {
	switch signal {
	case "memory.available":
		return corev1.ResourceMemory, true
	case "nodefs.available":
		return corev1.ResourceEphemeralStorage, true
	}
	return "", false
}

// hardEvictionReservation turns evictionHard into quantities: a
// percentage of the capacity (computed in float32, as upstream) or a
// quantity. "0%" and "100%" are ignored, as upstream.
func hardEvictionReservation(capacity corev1.ResourceList, evictionHard map[string]string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for signal, val := range evictionHard {
		name, ok := evictionResource(signal)
		if !ok {
			continue
		}
		if pct, isPct := strings.CutSuffix(val, "%"); isPct {
			if val == "0%" || val == "100%" {
				continue
			}
			f, err := strconv.ParseFloat(pct, 32)
			if err != nil {
				continue
			}
			fraction := float32(f) / 100
			if fraction < 0 || fraction > 1 {
				continue
			}
			c := capacity[name]
			out[name] = *resource.NewQuantity(int64(float64(c.Value())*float64(fraction)), resource.BinarySI)
			continue
		}
		q, err := resource.ParseQuantity(val)
		if err != nil || q.Sign() <= 0 {
			continue
		}
		out[name] = q
	}
	return out
}

func isHugePages(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}
