package e2e

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berthk8s/berth/internal/pod/timeline"
)

// TestClusterPodTimeline reads a pod's start timeline, GET
// /pods/{namespace}/{pod}/timeline, through the API server's node proxy
// (kubectl get --raw) once the pod runs: a pod with an init container, an
// emptyDir volume and a readiness probe. Every stage of its start is
// there, ended ok, in order, and the sequential ones add up to no more
// than its creation to its status written Running.
func TestClusterPodTimeline(t *testing.T) {
	e := startClusterEnv(t)
	e.node.start()
	ctx := context.Background()
	e.waitServiceAccount(t)
	pod := apiWebPod("timeline-web")
	pod.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	pod.Spec.InitContainers = []corev1.Container{{
		Name: "setup", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
		Command:      []string{"sh", "-c", "sleep 1; echo ready > /scratch/ready"},
		VolumeMounts: []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}},
	}}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}
	pod.Spec.Containers[0].ReadinessProbe = execProbe(1, 1, "cat", "/scratch/ready")
	_, err := e.admin.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	must(t, err)
	running := e.waitPodRunning(t, "timeline-web")

	body, err := e.cl.Kubectl(ctx, "get", "--raw", "/api/v1/nodes/"+nodeName+"/proxy/pods/default/timeline-web/timeline")
	if err != nil {
		t.Fatalf("GET the timeline through the node proxy: %v: %s", err, body)
	}
	t.Logf("timeline: %s", body)
	var tl timeline.Timeline
	must(t, json.Unmarshal([]byte(body), &tl))
	if tl.Pod != "default/timeline-web" || tl.UID != running.UID {
		t.Errorf("timeline of %s %s, want default/timeline-web %s", tl.Pod, tl.UID, running.UID)
	}

	type key struct{ name, target string }
	want := []key{
		{timeline.StageAdmitted, ""}, {timeline.StageVolume, "scratch"}, {timeline.StageSandbox, ""},
		{timeline.StageImage, busybox}, {timeline.StageContainerStart, "setup"}, {timeline.StageInitContainer, "setup"},
		{timeline.StageImage, busybox}, {timeline.StageContainerStart, "web"}, {timeline.StageProbe, "web readiness"},
		{timeline.StageStatusWritten, ""},
	}
	var got []key
	byKey := map[key][]timeline.Stage{}
	for i, s := range tl.Stages {
		k := key{s.Name, s.Target}
		got = append(got, k)
		byKey[k] = append(byKey[k], s)
		if s.Outcome != timeline.OutcomeOK || s.End == nil || s.DurationSeconds < 0 {
			t.Errorf("stage %d %s %q: %s, end %v, %vs; want ok, ended, a non-negative duration", i, s.Name, s.Target, s.Outcome, s.End, s.DurationSeconds)
		}
		if s.End != nil && math.Abs(s.End.Sub(s.Start).Seconds()-s.DurationSeconds) > 1e-6 {
			t.Errorf("stage %s %q: %vs from %s to %s", s.Name, s.Target, s.DurationSeconds, s.Start, s.End)
		}
		if i > 0 && s.Start.Before(tl.Stages[i-1].Start) {
			t.Errorf("stage %d %s %q starts before the one before it", i, s.Name, s.Target)
		}
	}
	if !slices.Equal(want, got) {
		t.Fatalf("stages %v, want %v", got, want)
	}
	for _, s := range byKey[key{timeline.StageImage, busybox}] {
		if s.Message != "already present" && s.Message != "pulled" {
			t.Errorf("image stage message %q, want pulled or already present", s.Message)
		}
	}

	// The sequential stages follow each other and take no more than the
	// pod's creation (to the second, as the API keeps it) to its status
	// written Running.
	seq := []key{{timeline.StageAdmitted, ""}, {timeline.StageVolume, "scratch"}, {timeline.StageSandbox, ""}}
	var sum float64
	var prevEnd time.Time
	for _, s := range tl.Stages {
		if !slices.Contains(seq, key{s.Name, s.Target}) && s.Name != timeline.StageImage && s.Name != timeline.StageContainerStart {
			continue
		}
		if s.Start.Before(prevEnd) {
			t.Errorf("stage %s %q starts at %s, before the stage before it ended (%s)", s.Name, s.Target, s.Start, prevEnd)
		}
		prevEnd = *s.End
		sum += s.DurationSeconds
	}
	sum += byKey[key{timeline.StageInitContainer, "setup"}][0].DurationSeconds
	written := byKey[key{timeline.StageStatusWritten, ""}][0]
	total := written.End.Sub(running.CreationTimestamp.Time).Seconds()
	if sum > total {
		t.Errorf("the sequential stages take %.3fs, more than the %.3fs from creation to Running written", sum, total)
	}
	if first := tl.Stages[0].Start; first.Before(running.CreationTimestamp.Time) {
		t.Errorf("admitted at %s, before the pod was created (%s)", first, running.CreationTimestamp)
	}
	if init := byKey[key{timeline.StageInitContainer, "setup"}][0]; init.DurationSeconds < 1 {
		t.Errorf("the init container ran %.3fs, want at least its 1s sleep", init.DurationSeconds)
	}
	t.Logf("sequential stages %.3fs of %.3fs from creation to Running written", sum, total)

	// A browser's Accept gets the page, through the proxy too; a pod the
	// node has no timeline of is a 404 that says so.
	proxy := "/api/v1/nodes/" + nodeName + "/proxy/pods/default/"
	page, err := e.admin.CoreV1().RESTClient().Get().AbsPath(proxy+"timeline-web/timeline").SetHeader("Accept", "text/html").DoRaw(ctx)
	if err != nil || !strings.Contains(string(page), "<h1>Start timeline of default/timeline-web</h1>") || !strings.Contains(string(page), `class="bar ok"`) {
		t.Errorf("GET the timeline page through the node proxy: %v: %s", err, page)
	}
	body, err = e.cl.Kubectl(ctx, "get", "--raw", proxy+"no-such-pod/timeline")
	if err == nil || !strings.Contains(body+err.Error(), "NotFound") {
		t.Errorf("GET the timeline of an unknown pod: %v: %s, want NotFound", err, body)
	}
	t.Logf("unknown pod: %v: %s", err, body)
}
