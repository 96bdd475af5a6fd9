package prober

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/internal/podkit/expansion"
)

// ExecRuntime runs a command in a container (the CRI RuntimeService).
type ExecRuntime interface {
	ExecSync(ctx context.Context, in *runtimeapi.ExecSyncRequest, opts ...grpc.CallOption) (*runtimeapi.ExecSyncResponse, error)
}

// maxOutput bounds the output an exec probe keeps, as upstream (10 KiB).
const maxOutput = 10 << 10

// execProbe runs the command in the container through ExecSync with the
// probe's timeout: exit 0 is success, another exit code a failure with the
// command's output (stdout then stderr, at most 10 KiB), a runtime timeout
// a failure saying so, any other error unknown.
func execProbe(ctx context.Context, rt ExecRuntime, containerID string, cmd []string, timeoutSeconds int64) (outcome, string, error) {
	resp, err := rt.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: containerID, Cmd: cmd, Timeout: timeoutSeconds})
	if err != nil {
		if errors.Is(err, cri.ErrDeadlineExceeded) {
			return outcomeFailure, fmt.Sprintf("command %q timed out", strings.Join(cmd, " ")), nil
		}
		return outcomeUnknown, "", fmt.Errorf("exec probe in container %q: %w", containerID, err)
	}
	out := append(append([]byte{}, resp.GetStdout()...), resp.GetStderr()...)
	if len(out) > maxOutput {
		out = out[:maxOutput]
	}
	if resp.GetExitCode() != 0 {
		return outcomeFailure, string(out), nil
	}
	return outcomeSuccess, string(out), nil
}

// expandStatic expands $(VAR) references in the command with the
// container's env entries taken literally, as upstream's
// ExpandContainerCommandOnlyStatic: an entry with valueFrom expands to "".
func expandStatic(cmd []string, env []corev1.EnvVar) []string {
	vars := map[string]string{}
	for _, e := range env {
		vars[e.Name] = e.Value
	}
	out := make([]string, len(cmd))
	for i, s := range cmd {
		out[i] = expansion.Expand(s, vars)
	}
	return out
}
