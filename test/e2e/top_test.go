package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berthk8s/berth/test/cluster"
)

// The top pod: one container that holds topMemoryHeld in a tmpfs file
// (shared memory, which counts in its working set) and burns CPU, held to
// topCPULimit by its CFS quota, with topMemoryLimit of memory.
var (
	topCPULimit    = resource.MustParse("100m")
	topMemoryLimit = resource.MustParse("64Mi")
	topMemoryHeld  = resource.MustParse("16Mi")
)

// TestKubectlTop runs metrics-server (built from its Go module in
// tools/metrics) against berth's /metrics/resource, and checks that
// `kubectl top node` and `kubectl top pod` answer with plausible figures:
// the node's CPU and memory used are above zero and within its capacity;
// the pod's CPU is above zero and near its CFS limit, its memory at least
// what it holds and under its limit.
func TestKubectlTop(t *testing.T) {
	e := startClusterEnvWith(t, cluster.Options{MetricsServer: true})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("metrics-server log: %s", e.cl.LogPath(cluster.MetricsServer))
		}
	})
	e.node.start()
	e.waitAPI(t, "default service account", func(ctx context.Context) (bool, error) {
		_, err := e.admin.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	_, err := e.admin.CoreV1().Pods("default").Create(context.Background(), topPod(), metav1.CreateOptions{})
	must(t, err)
	e.waitPodRunning(t, "top-burner")
	node, err := e.admin.CoreV1().Nodes().Get(context.Background(), nodeName, metav1.GetOptions{})
	must(t, err)

	t.Run("Node", func(t *testing.T) {
		cols := e.waitTop(t, "top", "node", nodeName, "--no-headers")
		// NAME CPU(cores) CPU(%) MEMORY(bytes) MEMORY(%)
		if len(cols) != 5 || cols[0] != nodeName {
			t.Fatalf("kubectl top node: %q", cols)
		}
		cpu, mem := quantity(t, cols[1]), quantity(t, cols[3])
		// A rate of two samples on a saturated node can round a
		// millicore above the capacity: 1% of margin.
		cpuCap := node.Status.Capacity[corev1.ResourceCPU]
		cpuBound := resource.NewMilliQuantity(cpuCap.MilliValue()*101/100, resource.DecimalSI)
		checkWithin(t, "node CPU", cpu, *cpuBound)
		checkWithin(t, "node memory", mem, node.Status.Capacity[corev1.ResourceMemory])
	})
	t.Run("Pod", func(t *testing.T) {
		cols := e.waitTop(t, "top", "pod", "top-burner", "--namespace", "default", "--containers", "--no-headers")
		// POD NAME CPU(cores) MEMORY(bytes)
		if len(cols) != 4 || cols[0] != "top-burner" || cols[1] != "burn" {
			t.Fatalf("kubectl top pod: %q", cols)
		}
		cpu, mem := quantity(t, cols[2]), quantity(t, cols[3])
		// Usage is a rate over one metric resolution; CFS lets a period
		// or two overrun the quota, hence the margin.
		cpuBound := topCPULimit.DeepCopy()
		cpuBound.Add(resource.MustParse("50m"))
		checkWithin(t, "pod CPU", cpu, cpuBound)
		if cpu.MilliValue() < 20 {
			t.Errorf("pod CPU %s: the container burns CPU up to its %s limit", &cpu, &topCPULimit)
		}
		checkWithin(t, "pod memory", mem, topMemoryLimit)
		if mem.Cmp(topMemoryHeld) < 0 {
			t.Errorf("pod memory %s: the container holds %s in /dev/shm", &mem, &topMemoryHeld)
		}
	})
}

// topPod fills /dev/shm with topMemoryHeld and burns CPU in a shell loop,
// held to its limits.
func topPod() *corev1.Pod {
	fill := fmt.Sprintf("dd if=/dev/zero of=/dev/shm/fill bs=1M count=%d", topMemoryHeld.Value()>>20)
	p := busyboxPod("top-burner", fill+" && while :; do :; done")
	p.Spec.Containers[0].Name = "burn"
	p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
		Limits: corev1.ResourceList{corev1.ResourceCPU: topCPULimit, corev1.ResourceMemory: topMemoryLimit},
	}
	return p
}

// waitTop runs kubectl (top ...) until it succeeds, which it does once
// metrics-server has scraped the node twice, and returns the fields of the
// one line it prints.
func (e *clusterEnv) waitTop(t *testing.T, args ...string) []string {
	t.Helper()
	var out string
	var last error
	start := time.Now()
	e.node.waitFor("kubectl "+strings.Join(args, " "), func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out, last = e.cl.Kubectl(ctx, args...)
		if last != nil {
			time.Sleep(time.Second)
		}
		return last == nil
	})
	t.Logf("kubectl %s after %s: %s", strings.Join(args, " "), time.Since(start).Round(time.Second), strings.TrimSpace(out))
	lines := nonEmptyLines(out)
	if len(lines) != 1 {
		t.Fatalf("kubectl %s printed %d lines, want 1:\n%s", strings.Join(args, " "), len(lines), out)
	}
	return strings.Fields(lines[0])
}

func quantity(t *testing.T, s string) resource.Quantity {
	t.Helper()
	q, err := resource.ParseQuantity(s)
	if err != nil {
		t.Fatalf("parse quantity %q: %v", s, err)
	}
	return q
}

// checkWithin checks 0 < q <= bound.
func checkWithin(t *testing.T, what string, q, bound resource.Quantity) {
	t.Helper()
	if q.Sign() <= 0 || q.Cmp(bound) > 0 {
		t.Errorf("%s = %s, want within (0, %s]", what, &q, &bound)
	}
}
