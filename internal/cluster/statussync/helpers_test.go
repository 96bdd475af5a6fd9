package statussync

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berthk8s/berth/internal/pod/podstatus"
	"github.com/berthk8s/berth/internal/podkit/podutil"
)

var (
	t0  = time.Date(2026, 11, 22, 19, 0, 0, 0, time.UTC)
	now = t0.Add(time.Minute)
)

func mt(t time.Time) metav1.Time { return metav1.NewTime(t) }

func cond(t corev1.PodConditionType, s corev1.ConditionStatus, at time.Time) corev1.PodCondition {
	return corev1.PodCondition{Type: t, Status: s, LastTransitionTime: mt(at)}
}

// apiPod is an API pod bound to node1 as the informer shows it.
func apiPod(uid string, phase corev1.PodPhase) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "default", UID: types.UID(uid),
			Annotations: map[string]string{podutil.ConfigSourceAnnotation: podutil.APISource},
		},
		Spec:   corev1.PodSpec{NodeName: "node1", Containers: []corev1.Container{{Name: "app", Image: "busybox"}}},
		Status: corev1.PodStatus{Phase: phase},
	}
}

// staticPod is a static pod from a file, with config hash uid.
func staticPod(uid string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "etcd-node1", Namespace: "kube-system", UID: types.UID(uid),
			Annotations: map[string]string{
				podutil.ConfigSourceAnnotation: podutil.FileSource,
				podutil.ConfigHashAnnotation:   uid,
			},
		},
		Spec: corev1.PodSpec{NodeName: "node1", Containers: []corev1.Container{{Name: "etcd", Image: "etcd"}}},
	}
}

// mirrorOf is the mirror pod of static, with UID uid.
func mirrorOf(static *corev1.Pod, uid string, phase corev1.PodPhase) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: static.Name, Namespace: static.Namespace, UID: types.UID(uid),
			Annotations: map[string]string{podutil.ConfigMirrorAnnotation: string(static.UID)},
		},
		Spec:   static.Spec,
		Status: corev1.PodStatus{Phase: phase},
	}
}

// running is a generated status of a running one-container pod.
func running() corev1.PodStatus {
	start := mt(t0)
	return corev1.PodStatus{
		Phase:     corev1.PodRunning,
		HostIP:    "10.0.0.1",
		HostIPs:   []corev1.HostIP{{IP: "10.0.0.1"}},
		PodIP:     "10.244.0.5",
		PodIPs:    []corev1.PodIP{{IP: "10.244.0.5"}},
		StartTime: &start,
		QOSClass:  corev1.PodQOSBestEffort,
		Conditions: []corev1.PodCondition{
			cond(corev1.PodReadyToStartContainers, corev1.ConditionTrue, t0),
			cond(corev1.PodInitialized, corev1.ConditionTrue, t0),
			cond(corev1.PodReady, corev1.ConditionTrue, t0),
			cond(corev1.ContainersReady, corev1.ConditionTrue, t0),
			cond(corev1.PodScheduled, corev1.ConditionTrue, t0),
		},
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: "app", Image: "busybox", ImageID: "sha256:1", ContainerID: "containerd://c1", Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: start}},
		}},
	}
}

// failed is running after its container exited with 1 (restartPolicy
// Never).
func failed() corev1.PodStatus {
	st := running()
	st.Phase = corev1.PodFailed
	for i := range st.Conditions {
		c := &st.Conditions[i]
		if c.Type == corev1.PodReady || c.Type == corev1.ContainersReady {
			*c = corev1.PodCondition{Type: c.Type, Status: corev1.ConditionFalse, Reason: podstatus.ReasonPodFailed, LastTransitionTime: mt(now)}
		}
	}
	st.ContainerStatuses[0].Ready = false
	st.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: 1, Reason: "Error", StartedAt: mt(t0), FinishedAt: mt(now), ContainerID: "containerd://c1",
	}}
	return st
}

func withStatus(p *corev1.Pod, st corev1.PodStatus) *corev1.Pod {
	p = p.DeepCopy()
	p.Status = st
	return p
}

func deleting(p *corev1.Pod) *corev1.Pod {
	p = p.DeepCopy()
	ts := mt(t0)
	p.DeletionTimestamp = &ts
	p.DeletionGracePeriodSeconds = new(int64)
	return p
}

const time10m = 10 * time.Minute

func ptrTime(t time.Time) *metav1.Time { m := mt(t); return &m }
