package stats

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

func fakeSummary(onlyCalls *[]bool, err error) SummaryFunc {
	return func(_ context.Context, only bool) (*statsapi.Summary, error) {
		*onlyCalls = append(*onlyCalls, only)
		if err != nil {
			return nil, err
		}
		now := metav1.NewTime(epoch)
		return &statsapi.Summary{
			Node: statsapi.NodeStats{NodeName: "n", CPU: &statsapi.CPUStats{Time: now, UsageCoreNanoSeconds: p64(3e9)},
				Memory: &statsapi.MemoryStats{Time: now, WorkingSetBytes: p64(2048)},
				Swap:   &statsapi.SwapStats{Time: now, SwapUsageBytes: p64(5)}},
			Pods: []statsapi.PodStats{{
				PodRef: statsapi.PodReference{Name: "web", Namespace: "ns", UID: "u"},
				Containers: []statsapi.ContainerStats{{Name: "app", StartTime: now,
					CPU:    &statsapi.CPUStats{Time: now, UsageCoreNanoSeconds: p64(1.5e9)},
					Memory: &statsapi.MemoryStats{Time: now, WorkingSetBytes: p64(1024)},
					Swap:   &statsapi.SwapStats{Time: now, SwapUsageBytes: p64(7), SwapAvailableBytes: p64(93)}}},
				CPU:    &statsapi.CPUStats{Time: now, UsageCoreNanoSeconds: p64(1.5e9)},
				Memory: &statsapi.MemoryStats{Time: now, WorkingSetBytes: p64(1024)},
				Swap:   &statsapi.SwapStats{Time: now, SwapUsageBytes: p64(7), SwapAvailableBytes: p64(93)},
			}},
		}, nil
	}
}

func TestSummaryHandler(t *testing.T) {
	var calls []bool
	h := Handler(fakeSummary(&calls, nil))
	tests := []struct {
		method, target string
		wantCode       int
	}{
		{"GET", "/stats/summary", 200},
		{"GET", "/stats/summary?only_cpu_and_memory=true", 200},
		{"GET", "/stats/summary?only_cpu_and_memory=false", 200},
		{"GET", "/stats/container", 404},
		{"POST", "/stats/summary", 405},
	}
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.target, nil))
		if rec.Code != tt.wantCode {
			t.Errorf("%s %s = %d, want %d", tt.method, tt.target, rec.Code, tt.wantCode)
			continue
		}
		if rec.Code == 200 {
			var sum statsapi.Summary
			if err := json.Unmarshal(rec.Body.Bytes(), &sum); err != nil || sum.Node.NodeName != "n" || len(sum.Pods) != 1 {
				t.Errorf("%s: body %s (%v)", tt.target, rec.Body, err)
			}
		}
	}
	if want := []bool{false, true, false}; len(calls) != 3 || calls[0] != want[0] || calls[1] != want[1] || calls[2] != want[2] {
		t.Errorf("only_cpu_and_memory passed as %v, want %v", calls, want)
	}
	var failing []bool
	rec := httptest.NewRecorder()
	Handler(fakeSummary(&failing, errors.New("runtime down"))).ServeHTTP(rec, httptest.NewRequest("GET", "/stats/summary", nil))
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "runtime down") {
		t.Errorf("failing summary = %d %q", rec.Code, rec.Body)
	}
}

func TestResourceHandler(t *testing.T) {
	var calls []bool
	rec := httptest.NewRecorder()
	ResourceHandler(fakeSummary(&calls, nil)).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics/resource", nil))
	body, _ := io.ReadAll(rec.Body)
	ms := epoch.UnixMilli()
	for _, want := range []string{
		"# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the node in core-seconds",
		"# TYPE node_cpu_usage_seconds_total counter",
		"node_cpu_usage_seconds_total 3 " + itoa(ms),
		"node_memory_working_set_bytes 2048 " + itoa(ms),
		`container_cpu_usage_seconds_total{container="app",namespace="ns",pod="web"} 1.5 ` + itoa(ms),
		`container_memory_working_set_bytes{container="app",namespace="ns",pod="web"} 1024 ` + itoa(ms),
		`container_start_time_seconds{container="app",namespace="ns",pod="web"} 1.7953776e+09`,
		`pod_cpu_usage_seconds_total{namespace="ns",pod="web"} 1.5 ` + itoa(ms),
		`pod_memory_working_set_bytes{namespace="ns",pod="web"} 1024 ` + itoa(ms),
		"# HELP node_swap_usage_bytes [ALPHA] Current swap usage of the node in bytes. Reported only on non-windows systems",
		"node_swap_usage_bytes 5 " + itoa(ms),
		`container_swap_usage_bytes{container="app",namespace="ns",pod="web"} 7 ` + itoa(ms),
		`container_swap_limit_bytes{container="app",namespace="ns",pod="web"} 100 ` + itoa(ms),
		`pod_swap_usage_bytes{namespace="ns",pod="web"} 7 ` + itoa(ms),
		"resource_scrape_error 0",
	} {
		if !strings.Contains(string(body), want+"\n") {
			t.Errorf("/metrics/resource lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(string(body), "\nscrape_error") {
		t.Errorf("/metrics/resource shows scrape_error, hidden upstream since its deprecation:\n%s", body)
	}
	if len(calls) != 1 || !calls[0] {
		t.Errorf("summary calls = %v, want one CPU-and-memory summary", calls)
	}
	rec = httptest.NewRecorder()
	ResourceHandler(fakeSummary(&calls, errors.New("down"))).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics/resource", nil))
	if !strings.Contains(rec.Body.String(), "resource_scrape_error 1\n") {
		t.Errorf("failing scrape:\n%s", rec.Body)
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
