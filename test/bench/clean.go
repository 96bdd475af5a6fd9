package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/platform/cri"
)

// RemoveAllSandboxes stops and removes every pod sandbox (and so every
// container) in the runtime: each run starts from an empty containerd.
func RemoveAllSandboxes(ctx context.Context, rt runtimeapi.RuntimeServiceClient) error {
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
		if _, err := rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.GetId()}); err != nil && !errors.Is(err, cri.ErrNotFound) {
			errs = append(errs, fmt.Errorf("remove pod sandbox %q: %w", sb.GetId(), err))
		}
	}
	return errors.Join(errs...)
}

// RemoveDir unmounts everything at or below dir (a kubelet's tmpfs
// volumes; the upstream kubelet also bind-mounts its root directory onto
// itself), deepest first, then removes dir.
func RemoveDir(dir string) error {
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
	return os.RemoveAll(dir)
}
