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
// containerd 1.6 refuses to remove because a container of it is left
// created with a task ("cannot delete running task": a kubelet killed in
// the middle of StartContainer) has that task killed and deleted through
// ctr, which the CRI has no call for, and is removed again.
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
			if kerr := deleteCreatedTasks(ctx, rt, endpoint, sb.GetId()); kerr != nil {
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

// deleteCreatedTasks kills and deletes, with ctr in containerd's k8s.io
// namespace, the task of every container of sandbox id the CRI shows as
// created.
func deleteCreatedTasks(ctx context.Context, rt runtimeapi.RuntimeServiceClient, endpoint, id string) error {
	resp, err := rt.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{PodSandboxId: id}})
	if err != nil {
		return fmt.Errorf("list containers of pod sandbox %q: %w", id, err)
	}
	address := strings.TrimPrefix(endpoint, "unix://")
	ctr := func(args ...string) error {
		args = append([]string{"--address", address, "-n", "k8s.io", "tasks"}, args...)
		if out, err := exec.CommandContext(ctx, "ctr", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ctr %s: %w: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	for _, c := range resp.GetContainers() {
		if c.GetState() != runtimeapi.ContainerState_CONTAINER_CREATED {
			continue
		}
		// The kill fails for a task that never started; the delete is what counts.
		_ = ctr("kill", "-s", "SIGKILL", c.GetId())
		if err := ctr("delete", "-f", c.GetId()); err != nil {
			return err
		}
	}
	return nil
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
