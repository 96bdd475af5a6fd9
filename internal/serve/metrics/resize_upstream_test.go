package metrics

import (
	"go/ast"
	"go/token"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

const kubeletMetricsPkg = "k8s.io/kubernetes/pkg/kubelet/metrics"

// TestResizeMetricsMatchUpstream pins each in-place resize metric to
// upstream's pkg/kubelet/metrics: its kind (counter, gauge, histogram,
// with or without labels), name, help, stability, label names and
// buckets.
func TestResizeMetricsMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	// Find the module here, not in a subtest: a skip for a module not yet
	// downloaded must end this test, not a subtest through its parent.
	src.ModuleDir("k8s.io/kubernetes")
	r := newResizeMetrics()
	for _, tt := range []struct {
		upstream string
		berth    prometheus.Collector
		buckets  []float64
	}{
		{"ContainerRequestedResizes", r.requested, nil},
		{"PodResizeDurationMilliseconds", r.duration, podResizeBuckets},
		{"PodPendingResizes", r.pending, nil},
		{"PodInfeasibleResizes", r.infeasible, nil},
		{"PodInProgressResizes", r.inProgress, nil},
		{"PodDeferredAcceptedResizes", r.deferredAccepted, nil},
		{"PodDeferredResizeDurationSeconds", r.deferredDuration, podDeferredResizeBuckets},
	} {
		t.Run(tt.upstream, func(t *testing.T) {
			v := src.Value(kubeletMetricsPkg, tt.upstream)
			call, ok := v.Node.(*ast.CallExpr)
			if !ok {
				t.Fatalf("upstream %s is a %T, not a metrics.NewX call: update the test", tt.upstream, v.Node)
			}
			checkKind(t, call, tt.berth)
			lits := v.CompositeLits()
			opts := lits[0].Fields()
			if sel, ok := opts["StabilityLevel"].Node.(*ast.SelectorExpr); !ok || sel.Sel.Name != "ALPHA" {
				t.Errorf("upstream %s is not ALPHA: berth's help prefix must change", tt.upstream)
			}
			var labels []string
			if len(call.Args) > 1 {
				labels = lits[len(lits)-1].AsStrings()
			}
			want := `Desc{fqName: "kubelet_` + opts["Name"].AsString() + `", help: "` + alpha + opts["Help"].AsString() +
				`", unit: "", constLabels: {}, variableLabels: {` + strings.Join(labels, ",") + `}}`
			if got := describe(tt.berth); got != want {
				t.Errorf("berth's metric differs from upstream's:\n berth    %s\n upstream %s", got, want)
			}
			if b, ok := opts["Buckets"]; ok || tt.buckets != nil {
				id, ok := b.Node.(*ast.Ident)
				if !ok {
					t.Fatalf("upstream %s's buckets are not a named variable: update the test", tt.upstream)
				}
				if diff := cmp.Diff(src.Value(kubeletMetricsPkg, id.Name).AsFloats(), tt.buckets); diff != "" {
					t.Errorf("buckets differ from upstream's %s (-upstream +berth):\n%s", id.Name, diff)
				}
			}
		})
	}
}

// checkKind fails unless berth's collector is what upstream's constructor
// makes.
func checkKind(t *testing.T, call *ast.CallExpr, berth prometheus.Collector) {
	t.Helper()
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		t.Fatalf("upstream calls %T, not metrics.NewX", call.Fun)
	}
	var same bool
	switch sel.Sel.Name {
	case "NewCounterVec":
		_, same = berth.(*prometheus.CounterVec)
	case "NewGaugeVec":
		_, same = berth.(*prometheus.GaugeVec)
	case "NewHistogramVec":
		_, same = berth.(*prometheus.HistogramVec)
	case "NewGauge":
		_, same = berth.(prometheus.Gauge)
	default:
		t.Fatalf("upstream builds it with metrics.%s: update the test", sel.Sel.Name)
	}
	if !same {
		t.Errorf("berth's collector is a %T, upstream's a metrics.%s", berth, sel.Sel.Name)
	}
}

// TestResizeLabelValuesMatchUpstream pins the label values berth's
// metrics package derives itself: the pending reason is the condition's
// lower-cased, success is strconv.FormatBool's.
func TestResizeLabelValuesMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	if n := len(src.Func("k8s.io/kubernetes/pkg/kubelet/status", "observePendingResizeCount").Calls("strings", "ToLower")); n != 1 {
		t.Errorf("upstream's observePendingResizeCount lower-cases %d times, want the reason once: update SetPendingResizes", n)
	}
	if n := len(src.Func("k8s.io/kubernetes/pkg/kubelet/kuberuntime", "doPodResizeAction").Calls("strconv", "FormatBool")); n != 1 {
		t.Errorf("upstream's doPodResizeAction calls strconv.FormatBool %d times, want its success label once: update ObservePodResize", n)
	}
}

// bucketRule is one case of upstream's GetPriorityBucketLabel switch:
// priority op bound gives bucket; op is token.ILLEGAL for the default.
type bucketRule struct {
	op     token.Token
	bound  int64
	bucket string
}

// TestPriorityBucketMatchesUpstream reads upstream's
// GetPriorityBucketLabel (its nil and default checks and each case of its
// switch, thresholds and label values resolved) and compares its answer
// with priorityBucket's at every threshold, on either side, and at the
// ends of int32.
func TestPriorityBucketMatchesUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	fn := src.Func(kubeletMetricsPkg, "GetPriorityBucketLabel")
	var rules []bucketRule
	var normalAt int64
	ast.Inspect(fn.Node, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.BinaryExpr:
			// pod.Spec.Priority == nil || *pod.Spec.Priority == scheduling.DefaultPriorityWhenNoDefaultClassExists
			if _, ok := x.X.(*ast.StarExpr); ok && x.Op == token.EQL {
				normalAt = fn.Sub(x.Y).AsInt()
			}
		case *ast.CaseClause:
			rules = append(rules, caseRule(t, fn, x))
			return false
		}
		return true
	})
	if len(rules) != 5 || rules[len(rules)-1].op != token.ILLEGAL {
		t.Fatalf("upstream GetPriorityBucketLabel has %d cases %+v: its shape changed, update the test", len(rules), rules)
	}
	unknown := src.Value(kubeletMetricsPkg, "PriorityBucketUnknown").AsString()
	normal := src.Value(kubeletMetricsPkg, "PriorityBucketNormal").AsString()
	upstream := func(p *int32) string {
		if p == nil || int64(*p) == normalAt {
			return normal
		}
		for _, r := range rules {
			if r.op == token.ILLEGAL || (r.op == token.GEQ && int64(*p) >= r.bound) || (r.op == token.GTR && int64(*p) > r.bound) {
				return r.bucket
			}
		}
		return ""
	}
	if got := priorityBucket(nil); got != unknown {
		t.Errorf("priorityBucket(nil pod) = %q, upstream %q", got, unknown)
	}
	priorities := []*int32{nil, ptr.To[int32](math.MinInt32), ptr.To[int32](math.MaxInt32), ptr.To[int32](int32(normalAt))}
	for _, r := range rules[:len(rules)-1] {
		for _, d := range []int64{-1, 0, 1} {
			priorities = append(priorities, ptr.To(int32(r.bound+d)))
		}
	}
	for _, p := range priorities {
		pod := &corev1.Pod{Spec: corev1.PodSpec{Priority: p}}
		if got, want := priorityBucket(pod), upstream(p); got != want {
			t.Errorf("priority %v: berth %q, upstream %q", ptr.Deref(p, -1), got, want)
		}
	}
}

// caseRule reads one case clause: `case p OP bound: return Bucket`.
func caseRule(t *testing.T, fn upstreamsrc.Node, c *ast.CaseClause) bucketRule {
	t.Helper()
	if len(c.Body) != 1 {
		t.Fatalf("upstream GetPriorityBucketLabel: a case of %d statements: update the test", len(c.Body))
	}
	ret, ok := c.Body[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		t.Fatalf("upstream GetPriorityBucketLabel: a case that does not return a bucket: update the test")
	}
	r := bucketRule{op: token.ILLEGAL, bucket: fn.Sub(ret.Results[0]).AsString()}
	if len(c.List) == 0 {
		return r
	}
	be, ok := c.List[0].(*ast.BinaryExpr)
	if !ok || len(c.List) != 1 || (be.Op != token.GEQ && be.Op != token.GTR) {
		t.Fatalf("upstream GetPriorityBucketLabel: a case that is not p >= x or p > x: update the test")
	}
	r.op, r.bound = be.Op, fn.Sub(be.Y).AsInt()
	return r
}
