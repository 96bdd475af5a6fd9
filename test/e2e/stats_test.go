package e2e

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"
)

// TestClusterStatsComplete runs a pod that writes 1 MiB into an emptyDir
// and logs a line, then reads, through the API server's node proxy as
// metrics-server does, /stats/summary (container working set, writable
// layer, logs, the pod's volume stats and ephemeral storage, node
// network), /metrics/resource and /metrics/cadvisor. Volume stats are
// measured every 2 s (--volume-stats-agg-period) to keep it short.
func TestClusterStatsComplete(t *testing.T) {
	e := startClusterEnv(t)
	e.node.extraArgs = append(e.node.extraArgs, "--volume-stats-agg-period=2s")
	e.node.start()
	ctx := context.Background()
	e.waitAPI(t, "default service account", func(ctx context.Context) (bool, error) {
		_, err := e.admin.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "stats-web", Namespace: "default"},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken:  ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](2),
			Volumes:                       []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
			Containers: []corev1.Container{{
				Name: "web", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
				Command: []string{"sh", "-c", "head -c 1048576 /dev/urandom > /scratch/blob && echo written && " +
					"echo rootfs > /rootfs-file && exec sleep 3600"},
				VolumeMounts: []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}},
			}},
		},
	}
	_, err := e.admin.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	must(t, err)
	e.waitPodRunning(t, "stats-web")
	raw := func(path string) (string, error) {
		return e.cl.Kubectl(ctx, "get", "--raw", "/api/v1/nodes/"+nodeName+"/proxy"+path)
	}

	var sum statsapi.Summary
	var ps *statsapi.PodStats
	var scratch *statsapi.VolumeStats
	e.node.waitFor("the pod's emptyDir with its 1 MiB in /stats/summary", func() bool {
		body, err := raw("/stats/summary")
		if err != nil || json.Unmarshal([]byte(body), &sum) != nil {
			return false
		}
		if ps = findPodStats(sum.Pods, "stats-web"); ps == nil {
			return false
		}
		scratch = findVolume(ps.VolumeStats, "scratch")
		// containerd measures writable layers every 10 s: wait for one.
		return scratch != nil && scratch.UsedBytes != nil && *scratch.UsedBytes >= 1<<20 && len(ps.Containers) == 1 &&
			ps.Containers[0].Rootfs != nil && ps.Containers[0].Rootfs.UsedBytes != nil && *ps.Containers[0].Rootfs.UsedBytes > 0
	})
	c := ps.Containers[0]
	nonZero := func(what string, v *uint64) {
		if v == nil || *v == 0 {
			t.Errorf("%s = %v, want > 0", what, v)
		}
	}
	if c.Memory == nil || c.Rootfs == nil || c.Logs == nil {
		t.Fatalf("container stats incomplete: %+v", c)
	}
	nonZero("container working set", c.Memory.WorkingSetBytes)
	// From the runtime's sandbox stats (containerd 1.6 gives only the
	// default interface) or, without them, from the pod's netns.
	if ps.Network == nil || ps.Network.Name != "eth0" {
		t.Errorf("pod network = %+v, want the pod netns's eth0", ps.Network)
	} else {
		nonZero("pod eth0 received bytes", ps.Network.RxBytes)
	}
	nonZero("container rootfs used", c.Rootfs.UsedBytes)
	nonZero("container logs used", c.Logs.UsedBytes)
	nonZero("emptyDir capacity", scratch.CapacityBytes)
	nonZero("emptyDir inodes used", scratch.InodesUsed)
	if ps.EphemeralStorage == nil || ps.EphemeralStorage.UsedBytes == nil || *ps.EphemeralStorage.UsedBytes < *scratch.UsedBytes {
		t.Errorf("ephemeral storage = %+v, want at least the emptyDir's %d bytes", ps.EphemeralStorage, *scratch.UsedBytes)
	}
	if n := sum.Node; n.Network == nil || len(n.Network.Interfaces) == 0 || n.Rlimit == nil || n.Runtime == nil || n.Runtime.ContainerFs == nil {
		t.Errorf("node stats incomplete: network %+v rlimit %+v runtime %+v", n.Network, n.Rlimit, n.Runtime)
	}

	var sys []string
	for _, sc := range sum.Node.SystemContainers {
		sys = append(sys, sc.Name)
		if sc.Name == statsapi.SystemContainerKubelet {
			nonZero("kubelet system container working set", sc.Memory.WorkingSetBytes)
		}
	}
	if !slices.Contains(sys, statsapi.SystemContainerKubelet) {
		t.Errorf("system containers = %v, want kubelet among them", sys)
	}

	body, err := raw("/metrics/resource")
	if err != nil {
		t.Fatalf("GET /metrics/resource: %v", err)
	}
	if v := sample(body, `container_cpu_usage_seconds_total{container="web",namespace="default",pod="stats-web"}`); v <= 0 {
		t.Errorf("/metrics/resource container_cpu_usage_seconds_total = %v, want > 0:\n%s", v, body)
	}
	body, err = raw("/metrics/cadvisor")
	if err != nil {
		t.Fatalf("GET /metrics/cadvisor: %v", err)
	}
	for _, want := range []string{
		`container_memory_working_set_bytes{container="web",id="`, `namespace="default",pod="stats-web"}`,
		`container_fs_usage_bytes{container="web"`, `interface="eth0",name="",namespace="default",pod="stats-web"}`, `container_cpu_usage_seconds_total{container="",cpu="total",id="/"`,
		"machine_cpu_cores{", "machine_memory_bytes{",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics/cadvisor lacks %q:\n%s", want, body)
		}
	}
}

func findVolume(vs []statsapi.VolumeStats, name string) *statsapi.VolumeStats {
	for i := range vs {
		if vs[i].Name == name {
			return &vs[i]
		}
	}
	return nil
}
