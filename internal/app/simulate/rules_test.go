package simulate

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/internal/platform/cri/crifake"
)

func TestParseRules(t *testing.T) {
	for _, tc := range []struct {
		in      string
		failure bool
		want    RuntimeRule
		err     string
	}{
		{in: "RunPodSandbox=2s", want: RuntimeRule{Method: "RunPodSandbox", Latency: 2 * time.Second}},
		{in: "0-9,20@PullImage=0s", want: RuntimeRule{Nodes: []IndexRange{{0, 9}, {20, 20}}, Method: "PullImage"}},
		{in: "PullImage=0.1", failure: true, want: RuntimeRule{Method: "PullImage", FailRate: 0.1, Code: codes.Unavailable}},
		{in: "3@RunPodSandbox=1:deadlineexceeded", failure: true,
			want: RuntimeRule{Nodes: []IndexRange{{3, 3}}, Method: "RunPodSandbox", FailRate: 1, Code: codes.DeadlineExceeded}},
		{in: "GetContainerEvents=1:Unimplemented", failure: true, want: RuntimeRule{Method: "GetContainerEvents", FailRate: 1, Code: codes.Unimplemented}},
		{in: "RunSandbox=2s", err: `"RunSandbox" is not a CRI method`},
		{in: "RunPodSandbox", err: "want [NODES@]METHOD=VALUE"},
		{in: "RunPodSandbox=-1s", err: "a duration of 0 or more"},
		{in: "9-3@RunPodSandbox=1s", err: "node indices"},
		{in: "x@RunPodSandbox=1s", err: "node indices"},
		{in: "PullImage=0", failure: true, err: "not a share above 0"},
		{in: "PullImage=1.5", failure: true, err: "not a share above 0"},
		{in: "PullImage=0.5:Nope", failure: true, err: `"Nope" is not a gRPC error code`},
		{in: "PullImage=0.5:OK", failure: true, err: `"OK" is not a gRPC error code`},
	} {
		parse := ParseLatency
		if tc.failure {
			parse = ParseFailure
		}
		got, err := parse(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %v; want an error with %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tc.in, diff)
		}
	}
}

// TestRulesApply: a rule reaches the runtimes of the nodes it names
// alone, and a later rule for the same method replaces an earlier one.
func TestRulesApply(t *testing.T) {
	rules := []RuntimeRule{
		mustParse(t, ParseFailure, "Version=1:InvalidArgument"),
		mustParse(t, ParseFailure, "1-2@Version=1:DeadlineExceeded"),
		mustParse(t, ParseFailure, "2@Version=1"),
	}
	for i, want := range []error{cri.ErrInvalidArgument, cri.ErrDeadlineExceeded, cri.ErrUnavailable} {
		f := crifake.New(clock.RealClock{})
		for _, r := range rules {
			r.apply(i, f)
		}
		_, err := f.Client(t).Runtime.Version(context.Background(), &runtimeapi.VersionRequest{})
		if !errors.Is(err, want) || !strings.Contains(err.Error(), "simulated Version failure") {
			t.Errorf("node %d: %v; want %v", i, err, want)
		}
	}
}

func mustParse(t *testing.T, parse func(string) (RuntimeRule, error), s string) RuntimeRule {
	t.Helper()
	r, err := parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
