package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	kubelettypes "k8s.io/kubelet/pkg/types"

	"github.com/berthk8s/berth/internal/platform/containerlogs"
	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// Termination message limits, as upstream: at most 4 KiB of the file
// (MaxContainerTerminationMessageLength); from the logs, the last 80 lines
// cut to 2 KiB (MaxContainerTerminationMessageLogLines and ...LogLength).
const (
	maxTerminationMessageLength   = 4 * 1024
	maxTerminationMessageLogLines = 80
	maxTerminationMessageLogBytes = 2048
	// reasonContainerCannotRun: a container that never ran has no logs.
	reasonContainerCannotRun = "ContainerCannotRun"
)

// PodStatus returns the full runtime status of one pod: every sandbox with
// its state and IPs, and every container with its times, exit code,
// reason, message (with the termination message file appended), image and
// log path. Sandboxes and containers that vanish between the listing and
// their status call are skipped. A pod the runtime does not have yields an
// empty Pod, not an error.
func (m *Manager) PodStatus(ctx context.Context, uid types.UID, name, namespace string) (*runtimestate.Pod, error) {
	selector := map[string]string{kubelettypes.KubernetesPodUIDLabel: string(uid)}
	sandboxes, err := m.cfg.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{
		Filter: &runtimeapi.PodSandboxFilter{LabelSelector: selector},
	})
	if err != nil {
		return nil, fmt.Errorf("list pod sandboxes of %q: %w", uid, err)
	}
	containers, err := m.cfg.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{
		Filter: &runtimeapi.ContainerFilter{LabelSelector: selector},
	})
	if err != nil {
		return nil, fmt.Errorf("list containers of %q: %w", uid, err)
	}
	p := &runtimestate.Pod{UID: uid, Name: name, Namespace: namespace}
	for _, s := range sandboxes.GetItems() {
		resp, err := m.cfg.Runtime.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: s.GetId()})
		if errors.Is(err, cri.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read pod sandbox %q status: %w", s.GetId(), err)
		}
		if st := resp.GetStatus(); st != nil {
			p.Sandboxes = append(p.Sandboxes, sandboxFromStatus(st))
		}
	}
	for _, c := range containers.GetContainers() {
		resp, err := m.cfg.Runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: c.GetId()})
		if errors.Is(err, cri.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read container %q status: %w", c.GetId(), err)
		}
		if st := resp.GetStatus(); st != nil {
			p.Containers = append(p.Containers, containerFromStatus(st, c.GetPodSandboxId()))
		}
	}
	sortPod(p)
	return p, nil
}

// sandboxFromStatus converts a sandbox status. IPs are reported for a
// ready, non-host-network sandbox only, primary first.
func sandboxFromStatus(st *runtimeapi.PodSandboxStatus) runtimestate.Sandbox {
	s := runtimestate.Sandbox{
		ID:          st.GetId(),
		State:       toSandboxState(st.GetState()),
		CreatedAt:   unixNanos(st.GetCreatedAt()),
		Attempt:     st.GetMetadata().GetAttempt(),
		HostNetwork: st.GetLinux().GetNamespaces().GetOptions().GetNetwork() == runtimeapi.NamespaceMode_NODE,
	}
	if s.State == runtimestate.SandboxReady && !s.HostNetwork {
		if ip := st.GetNetwork().GetIp(); ip != "" {
			s.IPs = append(s.IPs, ip)
		}
		for _, extra := range st.GetNetwork().GetAdditionalIps() {
			if extra.GetIp() != "" {
				s.IPs = append(s.IPs, extra.GetIp())
			}
		}
	}
	return s
}

// containerFromStatus converts a container status (upstream
// toKubeContainerStatus and convertToKubeContainerStatus), with the
// resources the runtime reports (containerResources).
func containerFromStatus(st *runtimeapi.ContainerStatus, sandboxID string) runtimestate.Container {
	c := containerCommon(st)
	c.SandboxID = sandboxID
	c.LogPath = st.GetLogPath()
	c.Resources = containerResources(st.GetResources())
	if st.GetState() != runtimeapi.ContainerState_CONTAINER_CREATED {
		c.StartedAt = unixNanos(st.GetStartedAt())
	}
	if st.GetState() == runtimeapi.ContainerState_CONTAINER_EXITED {
		c.ExitCode = st.GetExitCode()
		c.Reason = st.GetReason()
		c.Message = st.GetMessage()
		c.FinishedAt = unixNanos(st.GetFinishedAt())
		fallback := c.TerminationMessagePolicy == string(corev1.TerminationMessageFallbackToLogsOnError) &&
			c.ExitCode != 0 && c.Reason != reasonContainerCannotRun
		if msg := terminationMessage(st, c.TerminationMessagePath, fallback); msg != "" {
			if c.Message != "" {
				c.Message += ": "
			}
			c.Message += msg
		}
	}
	return c
}

// terminationMessage is an exited container's termination message
// (upstream getTerminationMessage and readLastStringFromContainerLogs): at
// most 4 KiB of the host file mounted at the container's termination
// message path (a missing file reads as empty); with fallbackToLogs (the
// FallbackToLogsOnError policy and a failed container), when that gives
// nothing, the last 80 lines of the container's log, cut to 2 KiB.
func terminationMessage(st *runtimeapi.ContainerStatus, path string, fallbackToLogs bool) string {
	msg, checkLogs := terminationFile(st, path, fallbackToLogs)
	if !checkLogs {
		return msg
	}
	tail, err := containerlogs.Tail(st.GetLogPath(), maxTerminationMessageLogLines, maxTerminationMessageLogBytes)
	if err != nil {
		return fmt.Sprintf("Error on reading termination message from logs: %v", err)
	}
	return tail
}

// terminationFile reads the termination message file and says whether the
// logs must be read instead.
func terminationFile(st *runtimeapi.ContainerStatus, path string, fallbackToLogs bool) (string, bool) {
	if path == "" {
		return "", fallbackToLogs
	}
	for _, mnt := range st.GetMounts() {
		if mnt.GetContainerPath() != path {
			continue
		}
		data, err := readAtMost(mnt.GetHostPath(), maxTerminationMessageLength)
		if errors.Is(err, os.ErrNotExist) {
			return "", fallbackToLogs
		}
		if err != nil {
			return fmt.Sprintf("Error on reading termination log %s: %v", mnt.GetHostPath(), err), false
		}
		return string(data), fallbackToLogs && len(data) == 0
	}
	return "", fallbackToLogs
}

// readAtMost reads the last max bytes of a file, as upstream's tail does.
func readAtMost(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if size := fi.Size(); size > max {
		if _, err := f.Seek(size-max, io.SeekStart); err != nil {
			return nil, err
		}
	}
	return io.ReadAll(io.LimitReader(f, max))
}
