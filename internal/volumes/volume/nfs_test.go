package volume

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestNFSMount pins upstream's nfs source and options.
func TestNFSMount(t *testing.T) {
	for _, tc := range []struct {
		server   string
		readOnly bool
		opts     []string
		want     string
	}{
		{"nfs.example", false, nil, "nfs.example:/export "},
		{"10.0.0.7", true, []string{"nfsvers=4.1", "", "hard"}, "10.0.0.7:/export hard,nfsvers=4.1,ro"},
		{"fd00::7", false, []string{"ro", "ro"}, "[fd00::7]:/export ro"},
	} {
		source, options := nfsMount(&corev1.NFSVolumeSource{Server: tc.server, Path: "/export"}, tc.readOnly, tc.opts)
		if got := source + " " + strings.Join(options, ","); got != tc.want {
			t.Errorf("nfsMount(%s, %v, %v) = %q, want %q", tc.server, tc.readOnly, tc.opts, got, tc.want)
		}
	}
}

// TestNFSVolumes: an inline nfs volume and a claim's nfs PersistentVolume
// are mounted at volumes/kubernetes.io~nfs/<name> (once), read-only as
// asked, with the PV's mountOptions; containers mount an inline read-only
// one read-only; at tear-down they are unmounted and a mount point that
// still shows data stops the tear-down.
func TestNFSVolumes(t *testing.T) {
	pvc, pv := boundClaim("c", "pv-nfs", corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs.example", Path: "/data"}})
	pv.Spec.MountOptions = []string{"nfsvers=4.1"}
	e := newEnv(t, pvc, pv)
	pod := claimPod(pvcSource("c", true))
	inline := corev1.Volume{Name: "shared", VolumeSource: corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "10.0.0.7", Path: "/shared", ReadOnly: true}}}
	pod.Spec.Volumes = append(pod.Spec.Volumes, inline)
	pod.Spec.Containers[0].VolumeMounts = append(pod.Spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "shared", MountPath: "/shared"})
	for range 2 {
		if _, err := e.m.SetUp(context.Background(), pod); err != nil {
			t.Fatal(err)
		}
	}
	base := filepath.Join(e.dir, "uid-1", "volumes", "kubernetes.io~nfs")
	want := map[string]string{
		filepath.Join(base, "pv-nfs"): "nfs.example:/data nfsvers=4.1,ro",
		filepath.Join(base, "shared"): "10.0.0.7:/shared ro",
	}
	e.mounter.mu.Lock()
	got := e.mounter.nfs
	e.mounter.mu.Unlock()
	if len(got) != 2 || got[filepath.Join(base, "pv-nfs")] != want[filepath.Join(base, "pv-nfs")] || got[filepath.Join(base, "shared")] != want[filepath.Join(base, "shared")] {
		t.Errorf("nfs mounts %v, want %v", got, want)
	}
	if !ForcedReadOnly(inline) {
		t.Error("a read-only inline nfs volume is not mounted read-only by containers")
	}
	precious := filepath.Join(base, "shared", "precious")
	if err := os.WriteFile(precious, []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := e.m.TearDown(context.Background(), pod.UID); err == nil || !strings.Contains(err.Error(), "remove volume mount point") {
		t.Errorf("TearDown() = %v, want it to stop at the mount point still showing data", err)
	}
	if _, err := os.Stat(precious); err != nil {
		t.Errorf("the export's data was removed: %v", err)
	}
	e.mounter.mu.Lock()
	unmounted := slices.Clone(e.mounter.unmount)
	e.mounter.mu.Unlock()
	if !slices.Contains(unmounted, filepath.Join(base, "shared")) {
		t.Errorf("unmounted %v, want the nfs mount", unmounted)
	}
}

// TestNFSMountFails: a failed mount (no nfs helper on the node, say)
// fails the volume with the mount's error and leaves no directory.
func TestNFSMountFails(t *testing.T) {
	e := newEnv(t)
	e.m.cfg.Mounter = failingNFS{e.mounter}
	pod := testPod()
	pod.Spec.Volumes = []corev1.Volume{{Name: "shared", VolumeSource: corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs", Path: "/x"}}}}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "shared", MountPath: "/shared"}}
	_, err := e.m.SetUp(context.Background(), pod)
	if err == nil || !strings.Contains(err.Error(), "you might need a /sbin/mount.<type> helper program") {
		t.Errorf("SetUp() = %v, want the mount's error", err)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "uid-1", "volumes", "kubernetes.io~nfs", "shared")); !os.IsNotExist(err) {
		t.Errorf("mount point after the failure: %v", err)
	}
}

type failingNFS struct{ *fakeMounter }

func (failingNFS) MountNFS(string, string, []string) error {
	return errors.New("mount failed: exit status 32\nOutput: mount: /x: bad option; for several filesystems (e.g. nfs, cifs) you might need a /sbin/mount.<type> helper program")
}
