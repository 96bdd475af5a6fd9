package stats

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

func cadvisorTestView() cadvisorView {
	now := metav1.NewTime(epoch)
	c := ctr("c1", "sb1", "app", true)
	c.Labels = map[string]string{"io.kubernetes.pod.uid": "u1"}
	c.Image = &runtimeapi.ImageSpec{Image: "sha256:abc", UserSpecifiedImage: "nginx:1.27"}
	old := ctr("c0", "old", "app", true)
	old.Labels = map[string]string{"io.kubernetes.pod.uid": "u1"}
	snap := criSnapshot{
		Sandboxes:  []*runtimeapi.PodSandbox{sandbox("old", "u1", "web", false, 1), sandbox("sb1", "u1", "web", true, 2)},
		Containers: []*runtimeapi.Container{old, c},
	}
	eth0 := statsapi.InterfaceStats{Name: "eth0", RxBytes: p64(10), TxBytes: p64(20)}
	return cadvisorView{
		Summary: &statsapi.Summary{
			Node: statsapi.NodeStats{CPU: &statsapi.CPUStats{Time: now, UsageCoreNanoSeconds: p64(4e9)},
				Memory: &statsapi.MemoryStats{Time: now, WorkingSetBytes: p64(8192), RSSBytes: p64(4096), UsageBytes: p64(9000)}},
			Pods: []statsapi.PodStats{{
				PodRef: statsapi.PodReference{Name: "web", Namespace: "ns", UID: "u1"}, StartTime: now,
				CPU: &statsapi.CPUStats{Time: now, UsageCoreNanoSeconds: p64(2e9)},
				// Only the default interface, as containerd 1.6 answers.
				Network: &statsapi.NetworkStats{Time: now, InterfaceStats: eth0},
				Containers: []statsapi.ContainerStats{{Name: "app", StartTime: now,
					CPU:    &statsapi.CPUStats{Time: now, UsageCoreNanoSeconds: p64(1.5e9)},
					Memory: &statsapi.MemoryStats{Time: now, WorkingSetBytes: p64(1024)},
					Rootfs: &statsapi.FsStats{Time: now, UsedBytes: p64(300)}}},
			}},
		},
		Runtime: runtimeIndex(snap),
		Machine: machine{Cores: 2, MemoryBytes: 1 << 30, MachineID: "m", BootID: "b"},
		Device:  "/dev/vda1",
		Now:     epoch,
	}
}

func TestCadvisorRows(t *testing.T) {
	var got [][]string
	for _, r := range cadvisorRows(cadvisorTestView()) {
		got = append(got, r.labels)
	}
	// container, id, image, name, namespace, pod
	want := [][]string{
		{"", "/", "", "", "", ""},
		{"", "sb1", "", "", "ns", "web"},
		{"app", "c1", "nginx:1.27", "c1", "ns", "web"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}

func TestCadvisorHandler(t *testing.T) {
	v := cadvisorTestView()
	rec := httptest.NewRecorder()
	cadvisorHandler(func(context.Context) (cadvisorView, error) { return v, nil }).
		ServeHTTP(rec, httptest.NewRequest("GET", "/metrics/cadvisor", nil))
	body := rec.Body.String()
	ms := itoa(epoch.UnixMilli())
	app := `container="app",id="c1",image="nginx:1.27",name="c1",namespace="ns",pod="web"`
	pod := `container="",id="sb1",image="",name="",namespace="ns",pod="web"`
	for _, want := range []string{
		"# HELP container_cpu_usage_seconds_total Cumulative cpu time consumed in seconds.",
		"# TYPE container_cpu_usage_seconds_total counter",
		`container_cpu_usage_seconds_total{container="app",cpu="total",id="c1",image="nginx:1.27",name="c1",namespace="ns",pod="web"} 1.5 ` + ms,
		`container_cpu_usage_seconds_total{container="",cpu="total",id="/",image="",name="",namespace="",pod=""} 4 ` + ms,
		`container_memory_working_set_bytes{` + app + `} 1024 ` + ms,
		`container_memory_rss{container="",id="/",image="",name="",namespace="",pod=""} 4096 ` + ms,
		`container_memory_usage_bytes{container="",id="/",image="",name="",namespace="",pod=""} 9000 ` + ms,
		`container_fs_usage_bytes{container="app",device="/dev/vda1",id="c1",image="nginx:1.27",name="c1",namespace="ns",pod="web"} 300 ` + ms,
		`container_network_receive_bytes_total{container="",id="sb1",image="",interface="eth0",name="",namespace="ns",pod="web"} 10 ` + ms,
		`container_network_transmit_bytes_total{container="",id="sb1",image="",interface="eth0",name="",namespace="ns",pod="web"} 20 ` + ms,
		`container_start_time_seconds{` + app + `} 1.7953776e+09` + "\n",
		`container_start_time_seconds{` + pod + `} 1.7953776e+09` + "\n",
		`machine_cpu_cores{boot_id="b",machine_id="m",system_uuid=""} 2 ` + ms,
		`machine_memory_bytes{boot_id="b",machine_id="m",system_uuid=""} 1.073741824e+09 ` + ms,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics/cadvisor lacks %q:\n%s", want, body)
		}
	}
	rec = httptest.NewRecorder()
	cadvisorHandler(func(context.Context) (cadvisorView, error) { return cadvisorView{}, errors.New("down") }).
		ServeHTTP(rec, httptest.NewRequest("GET", "/metrics/cadvisor", nil))
	if rec.Code != 200 || strings.Contains(rec.Body.String(), "container_") {
		t.Errorf("failing scrape: %d\n%s", rec.Code, rec.Body)
	}
}
