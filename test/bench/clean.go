package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/platform/cri"
)

// RemoveAllSandboxes stops and removes every pod sandbox (and so every
// container) in the runtime at endpoint (a unix:// CRI endpoint of
// containerd): each run starts from an empty containerd. A sandbox
// containerd 1.6 refuses to remove because a container of it kept a task
// the CRI does not show running ("cannot delete running task": a kubelet
// killed in the middle of StartContainer, see KillLeakedTasks) has that
// task killed and deleted through ctr, and is removed again.
func RemoveAllSandboxes(ctx context.Context, rt runtimeapi.RuntimeServiceClient, endpoint string) error {
	resp, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return fmt.Errorf("list pod sandboxes: %w", err)
	}
	var errs []error
	for _, sb := range resp.GetItems() {
		// A sandbox gone since the list (a kubelet was still removing it)
		// is what we want.
		if _, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.GetId()}); err != nil {
			if !errors.Is(err, cri.ErrNotFound) {
				errs = append(errs, fmt.Errorf("stop pod sandbox %q: %w", sb.GetId(), err))
			}
			continue
		}
		err := removeSandbox(ctx, rt, sb.GetId())
		if err != nil && strings.Contains(err.Error(), "cannot delete running task") {
			if _, kerr := KillLeakedTasks(ctx, rt, endpoint, sb.GetId()); kerr != nil {
				err = errors.Join(err, kerr)
			} else {
				err = removeSandbox(ctx, rt, sb.GetId())
			}
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func removeSandbox(ctx context.Context, rt runtimeapi.RuntimeServiceClient, id string) error {
	if _, err := rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: id}); err != nil && !errors.Is(err, cri.ErrNotFound) {
		return fmt.Errorf("remove pod sandbox %q: %w", id, err)
	}
	return nil
}

// KillLeakedTasks kills and deletes, with ctr in containerd's k8s.io
// namespace, the task of every container of sandbox (all sandboxes when
// it is empty) that the CRI does not show running but containerd still
// holds a task of, not stopped; it returns how many it found. containerd
// 1.6 leaks such a task when the client of a StartContainer goes in the
// middle of it (a kubelet killed): the task is created, the CRI records
// the start as failed (EXITED, StartError "failed to get task pid:
// context canceled"), and from then on no CRI call stops the task nor
// removes the container ("cannot delete running task"). The upstream
// kubelet is stuck on it as berth is; an operator's fix is ctr's.
func KillLeakedTasks(ctx context.Context, rt runtimeapi.RuntimeServiceClient, endpoint, sandbox string) (int, error) {
	filter := &runtimeapi.ContainerFilter{PodSandboxId: sandbox}
	resp, err := rt.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: filter})
	if err != nil {
		return 0, fmt.Errorf("list containers: %w", err)
	}
	address := strings.TrimPrefix(endpoint, "unix://")
	ctr := func(args ...string) (string, error) {
		args = append([]string{"--address", address, "-n", "k8s.io", "tasks"}, args...)
		out, err := exec.CommandContext(ctx, "ctr", args...).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("ctr %s: %w: %s", strings.Join(args, " "), err, out)
		}
		return string(out), nil
	}
	list, err := ctr("ls")
	if err != nil {
		return 0, err
	}
	tasks := taskStatuses(list)
	n := 0
	for _, c := range resp.GetContainers() {
		if st, ok := tasks[c.GetId()]; !ok || st == "STOPPED" || c.GetState() == runtimeapi.ContainerState_CONTAINER_RUNNING {
			continue
		}
		n++
		// The kill fails for a task that never started; the delete is what counts.
		_, _ = ctr("kill", "-s", "SIGKILL", c.GetId())
		if _, err := ctr("delete", "-f", c.GetId()); err != nil {
			return n, err
		}
	}
	return n, nil
}

// taskStatuses reads `ctr tasks ls` (TASK, PID, STATUS columns) into each
// task's status.
func taskStatuses(out string) map[string]string {
	m := map[string]string{}
	for i, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); i > 0 && len(f) == 3 {
			m[f[0]] = f[2]
		}
	}
	return m
}

// RemoveDir unmounts everything at or below dir (a kubelet's tmpfs
// volumes; the upstream kubelet also bind-mounts its root directory onto
// itself), deepest first, then removes dir.
func RemoveDir(dir string) error {
	if err := UnmountAll(dir); err != nil {
		return err
	}
	return os.RemoveAll(dir)
}

// UnmountAll unmounts everything at or below dir, deepest first.
func UnmountAll(dir string) error {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return fmt.Errorf("read mountinfo: %w", err)
	}
	var targets []string
	for line := range strings.SplitSeq(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 4 && (f[4] == dir || strings.HasPrefix(f[4], dir+"/")) {
			targets = append(targets, f[4])
		}
	}
	for i := len(targets) - 1; i >= 0; i-- {
		if err := syscall.Unmount(targets[i], syscall.MNT_DETACH); err != nil {
			return fmt.Errorf("unmount %q: %w", targets[i], err)
		}
	}
	return nil
}
