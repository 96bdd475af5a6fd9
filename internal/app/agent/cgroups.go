package agent

import (
	"context"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/config"
	"github.com/berthk8s/berth/internal/node/cm"
	"github.com/berthk8s/berth/internal/platform/machine"
)

// placeProcess moves berth into kubeletCgroups, as upstream's container
// manager does at start; one berth cannot move into stops the start. (Its
// OOM score is internal/platform/hostsetup's.)
func placeProcess(ctx context.Context, kc *kubeletconfigv1beta1.KubeletConfiguration) error {
	if kc.KubeletCgroups == "" {
		return nil
	}
	if err := cm.EnsureProcess(os.Getpid(), cm.ProcessOptions{Cgroup: kc.KubeletCgroups}); err != nil {
		return fmt.Errorf("place berth in kubeletCgroups %q: %w", kc.KubeletCgroups, err)
	}
	klog.FromContext(ctx).Info("berth runs in kubeletCgroups", "cgroup", kc.KubeletCgroups)
	return nil
}

// systemCgroup keeps the root cgroup's processes in systemCgroups (nil
// without it); Run starts it, as upstream's container manager, which
// refuses "/" at start.
func systemCgroup(kc *kubeletconfigv1beta1.KubeletConfiguration, clk clock.WithTicker) (*cm.SystemCgroup, error) {
	if kc.SystemCgroups == "" {
		return nil, nil
	}
	return cm.NewSystemCgroup(cm.SystemOptions{Cgroup: kc.SystemCgroups, Clock: clk})
}

// statsSystemCgroups names the cgroups of the summary's system containers
// that the configuration gives, as upstream's summary provider: "runtime"
// is --runtime-cgroups, "misc" systemCgroups (the stats provider finds
// "kubelet" and "pods" itself).
func statsSystemCgroups(cfg *config.Config) map[string]string {
	out := map[string]string{}
	for name, cgroup := range map[string]string{statsapi.SystemContainerRuntime: cfg.RuntimeCgroups, statsapi.SystemContainerMisc: cfg.Kubelet.SystemCgroups} {
		if cgroup != "" {
			out[name] = cgroup
		}
	}
	return out
}

// startCgroups builds the container manager and lays out the pod cgroup
// hierarchy (kubepods, its QoS classes, node allocatable) before any pod
// runs; nil without cgroupsPerQOS. driver is the effective cgroup driver
// (the runtime's when it reports one).
func startCgroups(ctx context.Context, cfg *config.Config, set config.Settings, driver string, host machine.Info) (*cm.Manager, error) {
	kc := &cfg.Kubelet
	if !set.CgroupsPerQOS {
		return nil, nil
	}
	m, err := cm.New(cm.Config{
		Driver: driver, Root: kc.CgroupRoot, EnforceNodeAllocatable: kc.EnforceNodeAllocatable,
		Capacity:       cgroupCapacity(host),
		SystemReserved: resourceList(kc.SystemReserved), KubeReserved: resourceList(kc.KubeReserved),
		SystemReservedCgroup: kc.SystemReservedCgroup, KubeReservedCgroup: kc.KubeReservedCgroup,
		Pod: cm.PodOptions{
			CFS:       cfsSettings(set),
			PidsLimit: set.PodPidsLimit,
			Memory:    memorySettings(cfg, host, int64(os.Getpagesize())),
		},
		QOSReservedMemory: cfg.QOSReservedMemory(),
	})
	if err != nil {
		return nil, err
	}
	if err := m.Start(ctx); err != nil {
		return nil, fmt.Errorf("start container manager: %w", err)
	}
	return m, nil
}

// cgroupCapacity is the node capacity kubepods is limited from: cpu,
// memory and, when known, upstream's internal "pid" resource.
func cgroupCapacity(host machine.Info) corev1.ResourceList {
	c := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(int64(host.NumCPU)*1000, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(host.MemoryBytes, resource.BinarySI),
	}
	if host.MaxPID > 0 {
		c["pid"] = *resource.NewQuantity(host.MaxPID, resource.DecimalSI)
	}
	return c
}

// resourceList parses a systemReserved/kubeReserved map; config.Load has
// validated the quantities.
func resourceList(m map[string]string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for k, v := range m {
		if q, err := resource.ParseQuantity(v); err == nil {
			out[corev1.ResourceName(k)] = q
		}
	}
	return out
}

// podCgroups is the container manager as kuberuntime uses it: EnsurePod
// counts the pods the sync loop wants for the QoS shares.
type podCgroups struct {
	m      *cm.Manager
	active func() []*corev1.Pod
}

func (p podCgroups) PodCgroupParent(pod *corev1.Pod) (string, error) {
	return p.m.PodCgroupParent(pod)
}

func (p podCgroups) EnsurePod(ctx context.Context, pod *corev1.Pod) error {
	return p.m.EnsurePod(ctx, pod, p.active())
}

func (p podCgroups) ResizePod(ctx context.Context, from, to *corev1.Pod, widen bool) error {
	return p.m.ResizePod(ctx, from, to, widen)
}
