package kuberuntime

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/internal/pod/timeline"
)

// TestApplyRecordsStages: the applies of a pod's start record its
// sandbox, each image (present, or pulled with its bytes) and each
// container's create and start in the timeline, a failed create as a
// failed stage the retry follows.
func TestApplyRecordsStages(t *testing.T) {
	var rec *timeline.Recorder
	e := newEnv(t, func(c *Config) {
		var err error
		if rec, err = timeline.New(timeline.Config{Clock: c.Clock}); err != nil {
			t.Fatal(err)
		}
		c.Observe.Stages = rec
	})
	e.fake.AddImage("busybox:1.36")
	e.fake.AllowPull("nginx:1.27")
	pod := basePod()
	pod.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox:1.36", ImagePullPolicy: corev1.PullIfNotPresent}}
	pod.Spec.Containers[0].Image = "nginx:1.27"

	e.fake.InjectError("CreateContainer", cri.StatusError(cri.ErrUnavailable, "disk on fire"))
	e.sync(pod) // the sandbox; init fails to create
	e.sync(pod) // init created and started
	init := e.running(pod, "init")
	if err := e.fake.ExitContainer(init.ID, 0, "Completed"); err != nil {
		t.Fatal(err)
	}
	e.sync(pod) // app pulled, created and started
	e.running(pod, "app")

	got, ok := rec.Get("default", "web")
	if !ok {
		t.Fatal("no timeline")
	}
	type row struct {
		Name, Target string
		Outcome      timeline.Outcome
		Message      string
		Pulled       bool
	}
	var rows []row
	for _, s := range got.Stages {
		if s.End == nil || s.DurationSeconds < 0 {
			t.Errorf("stage %s %s not ended: %+v", s.Name, s.Target, s)
		}
		rows = append(rows, row{s.Name, s.Target, s.Outcome, s.Message, s.Bytes > 0})
	}
	want := []row{
		{timeline.StageSandbox, "", timeline.OutcomeOK, "", false},
		{timeline.StageImage, "busybox:1.36", timeline.OutcomeOK, "already present", true},
		{timeline.StageContainerStart, "init", timeline.OutcomeFailed, "CreateContainer: disk on fire", false},
		{timeline.StageImage, "busybox:1.36", timeline.OutcomeOK, "already present", true},
		{timeline.StageContainerStart, "init", timeline.OutcomeOK, "", false},
		{timeline.StageImage, "nginx:1.27", timeline.OutcomeOK, "pulled", true},
		{timeline.StageContainerStart, "app", timeline.OutcomeOK, "", false},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("stages (-want +got):\n%s", diff)
	}
}
