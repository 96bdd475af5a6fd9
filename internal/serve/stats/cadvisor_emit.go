package stats

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sys/unix"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/mount-utils"
)

// cadvisorRow is one cAdvisor "container" (the machine's root, a pod or a
// container) and its label values in cadvisorLabels order.
type cadvisorRow struct {
	labels  []string
	cpu     *statsapi.CPUStats
	memory  *statsapi.MemoryStats
	network *statsapi.NetworkStats
	rootfs  *statsapi.FsStats
	start   time.Time
}

// cadvisorRows lays the view out as cAdvisor's rows: the root ("/"),
// then per pod its pod row (container "") and its containers. It is pure.
func cadvisorRows(v cadvisorView) []cadvisorRow {
	n := v.Summary.Node
	rows := []cadvisorRow{{labels: []string{"", "/", "", "", "", ""}, cpu: n.CPU, memory: n.Memory, network: n.Network, start: n.StartTime.Time}}
	for _, pod := range v.Summary.Pods {
		rt := v.Runtime[pod.PodRef.UID]
		ns, name := pod.PodRef.Namespace, pod.PodRef.Name
		rows = append(rows, cadvisorRow{labels: []string{"", rt.SandboxID, "", "", ns, name},
			cpu: pod.CPU, memory: pod.Memory, network: pod.Network, start: pod.StartTime.Time})
		for _, c := range pod.Containers {
			var id, image string
			if rc := rt.Containers[c.Name]; rc != nil {
				id, image = rc.GetId(), containerImage(rc)
			}
			rows = append(rows, cadvisorRow{labels: []string{c.Name, id, image, id, ns, name},
				cpu: c.CPU, memory: c.Memory, rootfs: c.Rootfs, start: c.StartTime.Time})
		}
	}
	return rows
}

// containerImage is the image a container was asked for, as cAdvisor's
// image label shows it.
func containerImage(c *runtimeapi.Container) string {
	if u := c.GetImage().GetUserSpecifiedImage(); u != "" {
		return u
	}
	return c.GetImage().GetImage()
}

// emitCadvisor sends the view's metrics, each stamped with the time its
// figure was read, as cAdvisor does.
func emitCadvisor(ch chan<- prometheus.Metric, v cadvisorView) {
	send := func(name string, t prometheus.ValueType, at time.Time, val float64, labels ...string) {
		m := prometheus.MustNewConstMetric(cadvisorDesc(name), t, val, labels...)
		if at.Unix() > 0 { // a runtime may leave a figure unstamped
			m = prometheus.NewMetricWithTimestamp(at, m)
		}
		ch <- m
	}
	mach := v.Machine
	send("machine_cpu_cores", prometheus.GaugeValue, v.Now, float64(mach.Cores), mach.MachineID, mach.SystemUUID, mach.BootID)
	send("machine_memory_bytes", prometheus.GaugeValue, v.Now, float64(mach.MemoryBytes), mach.MachineID, mach.SystemUUID, mach.BootID)
	for _, r := range cadvisorRows(v) {
		if r.cpu != nil && r.cpu.UsageCoreNanoSeconds != nil {
			send("container_cpu_usage_seconds_total", prometheus.CounterValue, r.cpu.Time.Time,
				float64(*r.cpu.UsageCoreNanoSeconds)/float64(time.Second), append(r.labels, "total")...)
		}
		if m := r.memory; m != nil {
			for name, val := range map[string]*uint64{"container_memory_working_set_bytes": m.WorkingSetBytes,
				"container_memory_rss": m.RSSBytes, "container_memory_usage_bytes": m.UsageBytes} {
				if val != nil {
					send(name, prometheus.GaugeValue, m.Time.Time, float64(*val), r.labels...)
				}
			}
		}
		if n := r.network; n != nil {
			ifaces := n.Interfaces
			if len(ifaces) == 0 && n.Name != "" {
				// containerd 1.6's sandbox stats give only the default one.
				ifaces = []statsapi.InterfaceStats{n.InterfaceStats}
			}
			for _, i := range ifaces {
				send("container_network_receive_bytes_total", prometheus.CounterValue, n.Time.Time, float64(deref(i.RxBytes)), append(r.labels, i.Name)...)
				send("container_network_transmit_bytes_total", prometheus.CounterValue, n.Time.Time, float64(deref(i.TxBytes)), append(r.labels, i.Name)...)
			}
		}
		if r.rootfs != nil && r.rootfs.UsedBytes != nil {
			send("container_fs_usage_bytes", prometheus.GaugeValue, r.rootfs.Time.Time, float64(*r.rootfs.UsedBytes), append(r.labels, v.Device)...)
		}
		if !r.start.IsZero() && r.start.Unix() > 0 {
			send("container_start_time_seconds", prometheus.GaugeValue, time.Time{}, float64(r.start.Unix()), r.labels...)
		}
	}
}

// imageFsDevice is the device holding the runtime's image filesystem, as
// cAdvisor's device label names it ("" when it cannot be found).
func (p *Provider) imageFsDevice(ctx context.Context) string {
	resp, err := p.cfg.Images.ImageFsInfo(ctx, &runtimeapi.ImageFsInfoRequest{})
	if err != nil || len(resp.GetImageFilesystems()) == 0 {
		return ""
	}
	dev, err := deviceOf(filepath.Join(p.cfg.ProcRoot, "self", "mountinfo"), resp.GetImageFilesystems()[0].GetFsId().GetMountpoint())
	if err != nil {
		klog.FromContext(ctx).V(4).Info("Cannot find the image filesystem's device", "err", err)
	}
	return dev
}

// deviceOf finds the mount source of the filesystem holding path by its
// device number.
func deviceOf(mountinfo, path string) (string, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return "", fmt.Errorf("stat %q: %w", path, err)
	}
	mis, err := mount.ParseMountInfo(mountinfo)
	if err != nil {
		return "", fmt.Errorf("parse %q: %w", mountinfo, err)
	}
	for _, mi := range mis {
		if uint32(mi.Major) == unix.Major(st.Dev) && uint32(mi.Minor) == unix.Minor(st.Dev) {
			return mi.Source, nil
		}
	}
	return "", fmt.Errorf("find device of %q: no mount of %d:%d", path, unix.Major(st.Dev), unix.Minor(st.Dev))
}
