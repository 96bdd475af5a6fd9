package server

import (
	"context"
	"encoding/json"
	"net/http"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// HealthFunc reports why berth is unhealthy, or nil.
type HealthFunc func() error

// PodsFunc returns the pods berth runs, with their current status.
type PodsFunc func() []corev1.Pod

// RunningPodsFunc lists the pods the container runtime holds
// (kuberuntime.Manager.ListPods), which /runningpods/ shows as upstream
// (toRunningPods).
type RunningPodsFunc func(ctx context.Context) (map[types.UID]*runtimestate.Pod, error)

// healthz answers "ok" with 200, or the failure with 500, as upstream.
func healthz(check HealthFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if err := check(); err != nil {
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte("[-]berth failed: " + err.Error() + "\nhealthz check failed\n"))
			return
		}
		_, _ = w.Write([]byte("ok"))
	}
}

// pods answers a v1.PodList, as the upstream /pods endpoint does.
func pods(list PodsFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		writePodList(w, list())
	}
}

// runningPods answers the runtime's pods as a v1.PodList.
func runningPods(list RunningPodsFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		listed, err := list(r.Context())
		if err != nil {
			http.Error(w, "list running pods: list runtime pods: "+err.Error(), http.StatusInternalServerError)
			return
		}
		writePodList(w, toRunningPods(listed))
	}
}

// toRunningPods converts the runtime's pods as upstream's /runningpods/ shows
// them: pods with a ready sandbox or a running container, each with its
// name, namespace, UID and running containers' names and images, by UID.
func toRunningPods(list map[types.UID]*runtimestate.Pod) []corev1.Pod {
	out := make([]corev1.Pod, 0, len(list))
	for _, p := range list {
		pod := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID}}
		for _, c := range p.Containers {
			if c.State == runtimestate.ContainerRunning {
				pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: c.Name, Image: c.Image})
			}
		}
		if sb := p.LatestSandbox(); len(pod.Spec.Containers) == 0 && (sb == nil || sb.State != runtimestate.SandboxReady) {
			continue
		}
		out = append(out, pod)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UID < out[j].UID })
	return out
}

func writePodList(w http.ResponseWriter, items []corev1.Pod) {
	out := corev1.PodList{
		TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"},
		Items:    items,
	}
	if out.Items == nil {
		out.Items = []corev1.Pod{}
	}
	writeJSON(w, &out)
}

// configz answers {"kubeletconfig": cfg}, as upstream's /configz.
func configz(cfg any) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, map[string]any{"kubeletconfig": cfg})
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "encode response: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}
