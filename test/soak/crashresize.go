package soak

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// crashResize: Burstable pods running, each resized in place (CPU and
// memory, both NotRequired) and the kubelet killed at a random point of
// the resizes, restarted, Rounds times, each to larger figures: every pod
// ends with the new resources in its status, in its container's cgroup and
// in its pod's cgroup, no resize condition left, the same container as
// before (none restarted or replaced) and one sandbox.
func crashResize(ctx context.Context, e *env) error {
	c := e.cfg.Crash
	run := e.name + "-0"
	if err := createPodsOf(ctx, e.client, e.name, run, c.Pods, resizePod); err != nil {
		return err
	}
	pods, err := waitRunning(ctx, e.client, run, c.Pods, 3*time.Minute)
	if err != nil {
		return err
	}
	before, err := listRuntime(ctx, e.runtime)
	if err != nil {
		return err
	}
	var slowest time.Duration
	var replaced, dups, unapplied int
	for round := range c.Rounds {
		want := resizeTarget(round + 1)
		resized := make(chan error, 1)
		go func() { resized <- resizePods(ctx, e.client, pods, want) }()
		if err := e.killAndRestart(ctx); err != nil {
			return err
		}
		if err := <-resized; err != nil {
			return fmt.Errorf("round %d: %w", round, err)
		}
		began := time.Now()
		if pods, err = waitResized(ctx, e.client, run, c.Pods, want, 3*time.Minute); err != nil {
			return fmt.Errorf("round %d, after the kill during the resizes: %w", round, err)
		}
		slowest = max(slowest, time.Since(began))
		after, err := listRuntime(ctx, e.runtime)
		if err != nil {
			return err
		}
		replaced += changed(before, after, pods)
		dups += after.duplicates(pods)
		before = after
		for _, p := range pods {
			if err := e.host.resourcesApplied(ctx, after.running[string(p.UID)], want); err != nil {
				unapplied++
				e.cfg.Logf("crash-resize round %d: %s: %v", round, p.Name, err)
			}
		}
	}
	restarted := restarts(pods)
	e.out.add("rounds", "", float64(c.Rounds))
	e.out.add("pods", "", float64(c.Pods))
	e.out.add("all resized after the restart", "s", slowest.Round(100*time.Millisecond).Seconds())
	e.out.add("cgroups not as resized", "", float64(unapplied))
	e.out.add("containers replaced", "", float64(replaced))
	e.out.add("container restarts", "", float64(restarted))
	e.out.add("duplicate sandboxes or containers", "", float64(dups))
	e.out.promise(unapplied == 0, "%d pods whose cgroups do not hold the resize after a crash", unapplied)
	e.out.promise(replaced == 0, "%d containers replaced by a resize after a crash", replaced)
	e.out.promise(restarted == 0, "%d container restarts by a resize after a crash", restarted)
	e.out.promise(dups == 0, "%d duplicate sandboxes or containers after a crash", dups)
	if err := deletePods(ctx, e.client, run, 4*time.Minute); err != nil {
		return err
	}
	e.settle(ctx, "")
	return nil
}

// resources is what a crash-resize pod's container asks for: CPU in
// millicores, memory in MiB.
type resources struct{ cpuRequest, cpuLimit, memRequest, memLimit int64 }

// resizeTarget is the resources of resize step k (0 for the pods'
// creation): every step grows each figure, the CPU request by little
// enough that 30 pods at step 10 ask for 1.8 CPUs (a resize that does not
// fit is Deferred, rightly, and the scenario would measure that instead).
func resizeTarget(k int) resources {
	n := int64(k)
	return resources{cpuRequest: 50 + 1*n, cpuLimit: 200 + 100*n, memRequest: 32 + 16*n, memLimit: 64 + 32*n}
}

func (r resources) requirements() corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(r.cpuRequest, resource.DecimalSI), corev1.ResourceMemory: *resource.NewQuantity(r.memRequest<<20, resource.BinarySI)},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(r.cpuLimit, resource.DecimalSI), corev1.ResourceMemory: *resource.NewQuantity(r.memLimit<<20, resource.BinarySI)},
	}
}

// resizePod is soakPod, Burstable at resizeTarget(0), both resources
// resizable without a restart.
func resizePod(run string, i int, nodeName string) *corev1.Pod {
	p := soakPod(run, i, nodeName)
	c := &p.Spec.Containers[0]
	c.Resources = resizeTarget(0).requirements()
	c.ResizePolicy = []corev1.ContainerResizePolicy{
		{ResourceName: corev1.ResourceCPU, RestartPolicy: corev1.NotRequired},
		{ResourceName: corev1.ResourceMemory, RestartPolicy: corev1.NotRequired},
	}
	return p
}

// resizePods asks for want on every pod through the resize subresource,
// in parallel.
func resizePods(ctx context.Context, c kubernetes.Interface, pods []corev1.Pod, want resources) error {
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"containers": []any{
		map[string]any{"name": "c", "resources": want.requirements()},
	}}})
	if err != nil {
		return err
	}
	errs := make(chan error, len(pods))
	for _, p := range pods {
		go func() {
			_, err := c.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "resize")
			if err != nil {
				err = fmt.Errorf("resize %s: %w", p.Name, err)
			}
			errs <- err
		}()
	}
	var all []error
	for range pods {
		all = append(all, <-errs)
	}
	return errors.Join(all...)
}

// waitResized waits until the n pods of run are Running and ready with
// want in their container's status resources and no resize condition.
func waitResized(ctx context.Context, c kubernetes.Interface, run string, n int, want resources, timeout time.Duration) ([]corev1.Pod, error) {
	deadline := time.Now().Add(timeout)
	for {
		pods, err := listRun(ctx, c, run)
		var pending []string
		for _, p := range pods {
			if why := notResized(p, want); why != "" {
				pending = append(pending, p.Name+": "+why)
			}
		}
		if err == nil && len(pods) == n && len(pending) == 0 && allRunning(pods) {
			return pods, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("wait for %d pods of %s resized: %d of %d not after %v (%v): %s", n, run, len(pending), len(pods), timeout, err, strings.Join(pending, "; "))
		}
		if err := sleep(ctx, poll); err != nil {
			return nil, err
		}
	}
}

// notResized says why p does not show want yet ("" when it does).
func notResized(p corev1.Pod, want resources) string {
	for _, cond := range p.Status.Conditions {
		if (cond.Type == corev1.PodResizePending || cond.Type == corev1.PodResizeInProgress) && cond.Status == corev1.ConditionTrue {
			return fmt.Sprintf("%s: %s %s", cond.Type, cond.Reason, cond.Message)
		}
	}
	if len(p.Status.ContainerStatuses) != 1 || p.Status.ContainerStatuses[0].Resources == nil {
		return "no container status resources"
	}
	got, w := p.Status.ContainerStatuses[0].Resources, want.requirements()
	for _, l := range []struct {
		name      string
		got, want corev1.ResourceList
	}{{"requests", got.Requests, w.Requests}, {"limits", got.Limits, w.Limits}} {
		// In name order: the first difference named is the same every run.
		for _, name := range slices.Sorted(maps.Keys(l.want)) {
			q := l.want[name]
			if g, ok := l.got[name]; !ok || g.Cmp(q) != 0 {
				return fmt.Sprintf("%s %s %s, want %s", l.name, name, g.String(), q.String())
			}
		}
	}
	return ""
}

// resourcesApplied checks the cgroups of the one running container ids
// holds, and of its pod, against want's limits: its CPU quota (a 100 ms
// period) and its memory limit.
func (h host) resourcesApplied(ctx context.Context, ids []string, want resources) error {
	if len(ids) != 1 {
		return fmt.Errorf("%d running containers, want 1", len(ids))
	}
	cgroup, err := h.cgroupsPath(ctx, ids[0])
	if err != nil {
		return err
	}
	for _, dir := range []string{cgroup, path.Dir(cgroup)} {
		quota, mem, err := h.limits(dir)
		if err != nil {
			return err
		}
		if quota != want.cpuLimit*100 || mem != want.memLimit<<20 {
			return fmt.Errorf("cgroup %s: CPU quota %d µs and memory limit %d bytes, want %d and %d", dir, quota, mem, want.cpuLimit*100, want.memLimit<<20)
		}
	}
	return nil
}

// cgroupsPath is a container's cgroup (cgroupfs: a path below each
// hierarchy's root) from the runtime's verbose status: its OCI spec.
func (h host) cgroupsPath(ctx context.Context, id string) (string, error) {
	st, err := h.runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id, Verbose: true})
	if err != nil {
		return "", err
	}
	var info struct {
		RuntimeSpec struct {
			Linux struct {
				CgroupsPath string `json:"cgroupsPath"`
			} `json:"linux"`
		} `json:"runtimeSpec"`
	}
	if err := json.Unmarshal([]byte(st.GetInfo()["info"]), &info); err != nil {
		return "", fmt.Errorf("container %s: verbose status: %w", id, err)
	}
	p := info.RuntimeSpec.Linux.CgroupsPath
	if !strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("container %s: cgroups path %q is not a cgroupfs path", id, p)
	}
	return p, nil
}

// limits reads a cgroup's CPU quota in µs (-1 for none; the period is
// the default 100 ms) and memory limit in bytes, from cgroup v2's files
// when the root is a unified hierarchy and v1's otherwise.
func (h host) limits(cgroup string) (quota, mem int64, err error) {
	read := func(parts ...string) (string, error) {
		b, err := os.ReadFile(filepath.Join(parts...))
		return strings.TrimSpace(string(b)), err
	}
	var q, m string
	if _, statErr := os.Stat(filepath.Join(h.cgroupRoot, "cgroup.controllers")); statErr == nil {
		if q, err = read(h.cgroupRoot, cgroup, "cpu.max"); err != nil {
			return 0, 0, err
		}
		q, _, _ = strings.Cut(q, " ")
		if m, err = read(h.cgroupRoot, cgroup, "memory.max"); err != nil {
			return 0, 0, err
		}
	} else {
		if q, err = read(h.cgroupRoot, "cpu", cgroup, "cpu.cfs_quota_us"); err != nil {
			return 0, 0, err
		}
		if m, err = read(h.cgroupRoot, "memory", cgroup, "memory.limit_in_bytes"); err != nil {
			return 0, 0, err
		}
	}
	if q == "max" {
		q = "-1"
	}
	if quota, err = strconv.ParseInt(q, 10, 64); err != nil {
		return 0, 0, fmt.Errorf("cgroup %s: CPU quota %q: %w", cgroup, q, err)
	}
	if mem, err = strconv.ParseInt(m, 10, 64); err != nil {
		return 0, 0, fmt.Errorf("cgroup %s: memory limit %q: %w", cgroup, m, err)
	}
	return quota, mem, nil
}
