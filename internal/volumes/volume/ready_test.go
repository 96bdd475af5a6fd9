package volume

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

// TestSetUpAfterRestartDoesNotWalkAgain: fsGroup ownership is applied
// once per volume and recorded on disk. A fresh Manager on the same
// directories (berth restarted while the pod runs) must not walk the
// volumes again: a file the container made stays as it made it. A tmpfs
// that is gone (the node rebooted) is set up, and walked, anew.
func TestSetUpAfterRestartDoesNotWalkAgain(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, clusterObjects()...)
	pod := testPod()
	pod.Spec.SecurityContext = &corev1.PodSecurityContext{FSGroup: ptr.To(int64(os.Getgid()))}
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "mem", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: ptr.To(resource.MustParse("1Mi"))}}},
		{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}},
	}
	paths, err := e.m.SetUp(ctx, pod)
	if err != nil {
		t.Fatal(err)
	}
	// The container writes private files; an fsGroup walk would make them 0660.
	containerFile := func(volume string) string {
		p := filepath.Join(paths[volume], "app.db")
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cache, mem := containerFile("cache"), containerFile("mem")
	mode := func(p string) os.FileMode {
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return info.Mode().Perm()
	}

	// A restart: a fresh Manager with the same configuration and directories.
	restarted, err := New(e.m.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := restarted.SetUp(ctx, pod); err != nil {
		t.Fatal(err)
	}
	if got := mode(cache); got != 0o600 {
		t.Errorf("after a restart, SetUp walked the emptyDir again: app.db is %v, want 0600", got)
	}
	if got := readFile(t, filepath.Join(paths["cfg"], "k")); got != "v1" {
		t.Errorf("configMap after a restart = %q, want v1", got)
	}

	// A reboot: the tmpfs is gone, the directory and marker are not.
	if err := e.mounter.Unmount(paths["mem"]); err != nil {
		t.Fatal(err)
	}
	rebooted, err := New(e.m.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rebooted.SetUp(ctx, pod); err != nil {
		t.Fatal(err)
	}
	if got := mode(mem); got != 0o660 {
		t.Errorf("a newly mounted tmpfs was not set up again: app.db is %v, want 0660", got)
	}
	if got := mode(cache); got != 0o600 {
		t.Errorf("after a reboot, SetUp walked the emptyDir again: app.db is %v, want 0600", got)
	}

	if err := rebooted.TearDown(ctx, pod.UID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(readyMarkers(e.dir, pod.UID)); !os.IsNotExist(err) {
		t.Errorf("ready markers after TearDown: %v", err)
	}
}
