package prober

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/platform/cri"
)

func TestRunnerEvents(t *testing.T) {
	tests := []struct {
		name    string
		typ     ProbeType
		resp    *runtimeapi.ExecSyncResponse
		err     error
		want    Result
		wantErr bool
		events  []string
	}{
		{"success: no event", Readiness, &runtimeapi.ExecSyncResponse{}, nil, Success, false, nil},
		{"failure", Liveness, &runtimeapi.ExecSyncResponse{ExitCode: 1, Stdout: []byte("cat: can't open '/tmp/healthy'")}, nil, Failure, false,
			[]string{"c Warning Unhealthy: Liveness probe failed: cat: can't open '/tmp/healthy'"}},
		{"timeout is a failure", Startup, nil, fmt.Errorf("x: %w", cri.ErrDeadlineExceeded), Failure, false,
			[]string{`c Warning Unhealthy: Startup probe failed: command "cat /tmp/healthy" timed out`}},
		{"runtime error: retried, then errored", Readiness, nil, fmt.Errorf("x: %w", cri.ErrUnavailable), Failure, true,
			[]string{"c Warning Unhealthy: Readiness probe errored and resulted in unknown state: exec probe in container \"cid\": x: runtime unavailable"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			f := &countingExec{fakeExec: fakeExec{resp: tt.resp, err: tt.err}}
			r := newRunner(f, rec, "kube-probe/1.37")
			c := &corev1.Container{Name: "c"}
			spec := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"cat", "/tmp/healthy"}}}}
			got, err := r.probe(context.Background(), tt.typ, spec, target{pod: probePod(*c), container: c, containerID: "cid"})
			if got != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("probe = %v, %v; want %v, err %v", got, err, tt.want, tt.wantErr)
			}
			if diff := cmp.Diff(tt.events, rec.events); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			wantCalls := 1
			if tt.wantErr {
				wantCalls = maxRetries
			}
			if f.n != wantCalls {
				t.Errorf("%d ExecSync calls, want %d", f.n, wantCalls)
			}
		})
	}
}

type countingExec struct {
	fakeExec
	n int
}

func (c *countingExec) ExecSync(ctx context.Context, in *runtimeapi.ExecSyncRequest, _ ...grpc.CallOption) (*runtimeapi.ExecSyncResponse, error) {
	c.n++
	return c.fakeExec.ExecSync(ctx, in)
}

func TestRunnerNoHandler(t *testing.T) {
	rec := &recorder{}
	r := newRunner(nil, rec, "kube-probe/1.37")
	c := &corev1.Container{Name: "c"}
	got, err := r.probe(context.Background(), Liveness, &corev1.Probe{}, target{pod: probePod(*c), container: c})
	if got != Failure || err != nil || len(rec.events) != 1 {
		t.Errorf("probe without handler = %v, %v, events %q", got, err, rec.events)
	}
}

// TestRunnerHandler: Config.Handler answers in place of the probe's own
// handler (no ExecSync), with the prober's events and retries.
func TestRunnerHandler(t *testing.T) {
	tests := []struct {
		name    string
		ok      bool
		err     error
		want    Result
		wantErr bool
		events  []string
	}{
		{"ok", true, nil, Success, false, nil},
		{"not ok", false, nil, Failure, false, []string{"c Warning Unhealthy: Liveness probe failed: model says no"}},
		{"error: retried", false, fmt.Errorf("no model"), Failure, true,
			[]string{"c Warning Unhealthy: Liveness probe errored and resulted in unknown state: no model"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			f := &countingExec{}
			r := newRunner(f, rec, "kube-probe/1.37")
			calls := 0
			r.handler = func(_ context.Context, typ ProbeType, _ *corev1.Pod, c *corev1.Container, id string) (bool, string, error) {
				calls++
				if typ != Liveness || c.Name != "c" || id != "cid" {
					t.Errorf("handler asked %v of %q in %q", typ, c.Name, id)
				}
				return tt.ok, "model says no", tt.err
			}
			c := &corev1.Container{Name: "c"}
			spec := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"cat", "/tmp/healthy"}}}}
			got, err := r.probe(context.Background(), Liveness, spec, target{pod: probePod(*c), container: c, containerID: "cid"})
			if got != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("probe = %v, %v; want %v, err %v", got, err, tt.want, tt.wantErr)
			}
			if diff := cmp.Diff(tt.events, rec.events); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			wantCalls := 1
			if tt.wantErr {
				wantCalls = maxRetries
			}
			if calls != wantCalls || f.n != 0 {
				t.Errorf("%d handler calls, %d ExecSync calls; want %d, 0", calls, f.n, wantCalls)
			}
		})
	}
}
