package volume

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/pod/timeline"
)

// TestSetUpRecordsStages: each volume's set-up is a stage of the pod's
// timeline until the pod's volumes were set up once; a volume that fails
// is a failed stage at each attempt, one set up is recorded once; Run's
// refreshes and the syncs after record nothing.
func TestSetUpRecordsStages(t *testing.T) {
	if stageVolume != timeline.StageVolume {
		t.Fatalf("stageVolume %q is not timeline.StageVolume %q", stageVolume, timeline.StageVolume)
	}
	ctx := context.Background()
	e := newEnv(t)
	rec, err := timeline.New(timeline.Config{Clock: e.clock})
	if err != nil {
		t.Fatal(err)
	}
	e.m.cfg.Stages = rec
	e.m.cfg.Client, e.m.cfg.Objects = nil, nil // standalone: the configMap cannot be read
	pod := testPod()
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}},
	}
	for range 2 {
		if _, err := e.m.SetUp(ctx, pod); err == nil {
			t.Fatal("SetUp of a configMap volume standalone succeeded")
		}
	}
	pod.Spec.Volumes = pod.Spec.Volumes[:1] // as if the pod no longer had it
	for range 2 {
		if _, err := e.m.SetUp(ctx, pod); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.m.setUpPod(ctx, pod, e.m.state(pod.UID), true); err != nil { // a refresh
		t.Fatal(err)
	}

	tl, _ := rec.Get("ns", "web")
	type row struct {
		Name, Target string
		Outcome      timeline.Outcome
		Message      string
	}
	var got []row
	for _, s := range tl.Stages {
		got = append(got, row{s.Name, s.Target, s.Outcome, s.Message})
	}
	failed := row{timeline.StageVolume, "cfg", timeline.OutcomeFailed, `configmap "cfg" needs an API server (berth runs standalone)`}
	want := []row{{timeline.StageVolume, "scratch", timeline.OutcomeOK, ""}, failed, failed}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stages (-want +got):\n%s", diff)
	}
}
