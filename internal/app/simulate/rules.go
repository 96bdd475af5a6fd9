package simulate

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/platform/cri/crifake"
)

// RuntimeRule sets one CRI method's latency or failures on some of the
// simulated nodes' runtimes. Rules apply in order after Config.Latency: a
// later rule for the same method and node replaces an earlier one's
// latency or failure rate.
type RuntimeRule struct {
	// Nodes are the node indices it applies to; empty: every node.
	Nodes []IndexRange
	// Method is a CRI method's short name ("RunPodSandbox").
	Method string
	// Latency, when FailRate is 0, is the method's latency (0: none).
	Latency time.Duration
	// FailRate, when set, is the share (0 to 1] of the method's calls
	// that fail with Code, spread evenly over the calls.
	FailRate float64
	Code     codes.Code
}

// IndexRange is the node indices First to Last, both included.
type IndexRange struct{ First, Last int }

// applies reports whether the rule is node i's.
func (r RuntimeRule) applies(i int) bool {
	if len(r.Nodes) == 0 {
		return true
	}
	return slices.ContainsFunc(r.Nodes, func(x IndexRange) bool { return i >= x.First && i <= x.Last })
}

// apply sets the rule on node i's runtime if it is node i's.
func (r RuntimeRule) apply(i int, f *crifake.Fake) {
	if !r.applies(i) {
		return
	}
	if r.FailRate > 0 {
		f.SetFailureRate(r.Method, r.FailRate, status.Errorf(r.Code, "simulated %s failure (berth simulate --fail)", r.Method))
		return
	}
	f.SetLatency(r.Method, r.Latency)
}

// ParseLatency reads a --latency value, [NODES@]METHOD=DURATION:
// "RunPodSandbox=2s", "0-9@PullImage=30s".
func ParseLatency(s string) (RuntimeRule, error) {
	r, value, err := parseRule(s)
	if err != nil {
		return RuntimeRule{}, err
	}
	d, err := time.ParseDuration(value)
	if err != nil || d < 0 {
		return RuntimeRule{}, fmt.Errorf("latency %q: want [NODES@]METHOD=DURATION with a duration of 0 or more, such as RunPodSandbox=2s", s)
	}
	r.Latency = d
	return r, nil
}

// ParseFailure reads a --fail value, [NODES@]METHOD=RATE[:CODE]: the
// share RATE (0 to 1] of METHOD's calls fail with the gRPC code CODE
// (Unavailable when left out): "PullImage=0.1",
// "3,7-8@RunPodSandbox=1:DeadlineExceeded".
func ParseFailure(s string) (RuntimeRule, error) {
	r, value, err := parseRule(s)
	if err != nil {
		return RuntimeRule{}, err
	}
	rate, code, hasCode := strings.Cut(value, ":")
	r.FailRate, err = strconv.ParseFloat(rate, 64)
	if err != nil || !(r.FailRate > 0 && r.FailRate <= 1) {
		return RuntimeRule{}, fmt.Errorf("failure %q: the rate %q is not a share above 0 and at most 1", s, rate)
	}
	r.Code = codes.Unavailable
	if hasCode {
		c, ok := codeNames()[strings.ToLower(code)]
		if !ok {
			return RuntimeRule{}, fmt.Errorf("failure %q: %q is not a gRPC error code (Unavailable, DeadlineExceeded, Internal, ...)", s, code)
		}
		r.Code = c
	}
	return r, nil
}

// parseRule reads [NODES@]METHOD=VALUE.
func parseRule(s string) (RuntimeRule, string, error) {
	var r RuntimeRule
	rest := s
	if nodes, after, ok := strings.Cut(s, "@"); ok {
		ranges, err := parseRanges(nodes)
		if err != nil {
			return r, "", fmt.Errorf("%q: %w", s, err)
		}
		r.Nodes, rest = ranges, after
	}
	method, value, ok := strings.Cut(rest, "=")
	if !ok || value == "" {
		return r, "", fmt.Errorf("%q: want [NODES@]METHOD=VALUE", s)
	}
	if !criMethods()[method] {
		return r, "", fmt.Errorf("%q: %q is not a CRI method (RunPodSandbox, CreateContainer, StartContainer, PullImage, ...)", s, method)
	}
	r.Method = method
	return r, value, nil
}

// parseRanges reads "3", "0-9" or "0-9,20,30-31".
func parseRanges(s string) ([]IndexRange, error) {
	var out []IndexRange
	for part := range strings.SplitSeq(s, ",") {
		first, last, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(first)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(last)
		}
		if err != nil || a < 0 || b < a {
			return nil, fmt.Errorf("node indices %q: want N, N-M or a comma-separated list of them", s)
		}
		out = append(out, IndexRange{First: a, Last: b})
	}
	if len(out) == 0 {
		return nil, errors.New("no node indices")
	}
	return out, nil
}

// criMethods are the methods of the CRI's runtime and image services.
func criMethods() map[string]bool {
	out := map[string]bool{}
	for _, d := range []grpc.ServiceDesc{runtimeapi.RuntimeService_ServiceDesc, runtimeapi.ImageService_ServiceDesc} {
		for _, m := range d.Methods {
			out[m.MethodName] = true
		}
		for _, st := range d.Streams {
			out[st.StreamName] = true
		}
	}
	return out
}

// codeNames are the gRPC error codes by lower-case name.
func codeNames() map[string]codes.Code {
	out := map[string]codes.Code{}
	for c := codes.Canceled; c <= codes.Unauthenticated; c++ {
		out[strings.ToLower(c.String())] = c
	}
	return out
}
