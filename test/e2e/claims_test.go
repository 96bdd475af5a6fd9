package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/utils/ptr"
)

// claimVolume is a PersistentVolume of class class with src, for a test
// claim to bind to.
func claimVolume(name, class string, src corev1.PersistentVolumeSource) *corev1.PersistentVolume {
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{
			StorageClassName:       class,
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Mi")},
			PersistentVolumeSource: src,
		},
	}
	if src.Local != nil { // a local volume must say where it is
		pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn, Values: []string{nodeName}}},
		}}}}
	}
	return pv
}

func claimSpec(class string) corev1.PersistentVolumeClaimSpec {
	return corev1.PersistentVolumeClaimSpec{
		StorageClassName: ptr.To(class),
		AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")}},
	}
}

// TestPersistentVolumeClaims: a pod with a persistentVolumeClaim (bound to
// a hostPath volume) and a generic ephemeral volume (its claim made by the
// controller manager, bound to a local volume) waits, with a FailedMount
// event in upstream's words, while its claim does not exist, then runs
// once the claims are bound and writes through both to the host; once the
// pod is deleted the local volume's bind mount is gone and its data stays.
func TestPersistentVolumeClaims(t *testing.T) {
	e := startClusterEnv(t)
	e.node.start()
	ctx := context.Background()
	e.waitServiceAccount(t)
	host, local := filepath.Join(t.TempDir(), "host"), filepath.Join(t.TempDir(), "local")
	must(t, os.MkdirAll(host, 0o755))
	must(t, os.MkdirAll(local, 0o755))

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "claims"},
		Spec: corev1.PodSpec{
			NodeName:                     nodeName,
			RestartPolicy:                corev1.RestartPolicyNever,
			AutomountServiceAccountToken: ptr.To(false),
			Volumes: []corev1.Volume{
				{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
				{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
					VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{Spec: claimSpec("e2e-local")},
				}}},
			},
			Containers: []corev1.Container{{
				Name: "main", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
				Command:      []string{"sh", "-c", "echo claimed > /data/out && echo scratch > /scratch/out"},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}, {Name: "scratch", MountPath: "/scratch"}},
			}},
		},
	}
	_, err := e.admin.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	must(t, err)
	e.waitAPI(t, "a FailedMount event for the missing claim", func(ctx context.Context) (bool, error) {
		evs, err := e.admin.CoreV1().Events("default").List(ctx, metav1.ListOptions{
			FieldSelector: fields.AndSelectors(fields.OneTermEqualSelector("involvedObject.name", "claims"), fields.OneTermEqualSelector("reason", "FailedMount")).String(),
		})
		if err != nil {
			return false, err
		}
		for _, ev := range evs.Items {
			if strings.Contains(ev.Message, `volume "data" : error processing PVC default/data: failed to fetch PVC from API server`) {
				return true, nil
			}
		}
		return false, nil
	})

	_, err = e.admin.CoreV1().PersistentVolumes().Create(ctx, claimVolume("e2e-host", "e2e-host", corev1.PersistentVolumeSource{
		HostPath: &corev1.HostPathVolumeSource{Path: host}}), metav1.CreateOptions{})
	must(t, err)
	_, err = e.admin.CoreV1().PersistentVolumes().Create(ctx, claimVolume("e2e-local", "e2e-local", corev1.PersistentVolumeSource{
		Local: &corev1.LocalVolumeSource{Path: local}}), metav1.CreateOptions{})
	must(t, err)
	_, err = e.admin.CoreV1().PersistentVolumeClaims("default").Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data"}, Spec: claimSpec("e2e-host")}, metav1.CreateOptions{})
	must(t, err)

	e.waitAPI(t, "pod succeeded", func(ctx context.Context) (bool, error) {
		p, err := e.admin.CoreV1().Pods("default").Get(ctx, "claims", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if p.Status.Phase == corev1.PodFailed {
			t.Fatalf("pod failed: %+v", p.Status)
		}
		return p.Status.Phase == corev1.PodSucceeded, nil
	})
	for path, want := range map[string]string{filepath.Join(host, "out"): "claimed\n", filepath.Join(local, "out"): "scratch\n"} {
		if got, err := readFile(path); err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q", path, got, err, want)
		}
	}
	claim, err := e.admin.CoreV1().PersistentVolumeClaims("default").Get(ctx, "claims-scratch", metav1.GetOptions{})
	must(t, err)
	if claim.Spec.VolumeName != "e2e-local" {
		t.Errorf("the ephemeral claim is bound to %q, want e2e-local", claim.Spec.VolumeName)
	}

	must(t, e.admin.CoreV1().Pods("default").Delete(ctx, "claims", metav1.DeleteOptions{}))
	e.waitAPI(t, "pod gone", func(ctx context.Context) (bool, error) {
		_, err := e.admin.CoreV1().Pods("default").Get(ctx, "claims", metav1.GetOptions{})
		return err != nil, nil
	})
	e.node.waitFor("the local volume unmounted", func() bool {
		data, err := os.ReadFile("/proc/self/mountinfo")
		return err == nil && !strings.Contains(string(data), "kubernetes.io~local-volume")
	})
	if got, err := readFile(filepath.Join(local, "out")); err != nil || got != "scratch\n" {
		t.Errorf("the local volume's data after the pod: %q, %v", got, err)
	}
}
