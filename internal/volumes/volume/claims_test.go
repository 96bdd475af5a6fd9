package volume

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/volumes/transient"
)

// claimPod is testPod mounting the claim volume "data" (and, unmounted,
// "spare", whose claim does not exist).
func claimPod(src corev1.VolumeSource) *corev1.Pod {
	pod := testPod()
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "data", VolumeSource: src},
		{Name: "spare", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "missing"}}},
	}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	return pod
}

func pvcSource(name string, readOnly bool) corev1.VolumeSource {
	return corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: name, ReadOnly: readOnly}}
}

// boundClaim returns a claim bound to a volume of the source, named pvName.
func boundClaim(name, pvName string, src corev1.PersistentVolumeSource) (*corev1.PersistentVolumeClaim, *corev1.PersistentVolume) {
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name)},
		Spec:       corev1.PersistentVolumeClaimSpec{VolumeName: pvName},
		Status:     corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound},
	}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pvName},
		Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: src,
			ClaimRef: &corev1.ObjectReference{Namespace: "ns", Name: name, UID: pvc.UID}},
	}
	return pvc, pv
}

// TestCheckClaim pins upstream's refusals (the volume manager's
// desired-state populator), whose words FailedMount events show.
func TestCheckClaim(t *testing.T) {
	now := metav1.Now()
	bound, pv := boundClaim("c", "pv1", corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/x"}})
	for _, tc := range []struct {
		name string
		edit func(*corev1.PersistentVolumeClaim)
		want string
	}{
		{"bound", func(*corev1.PersistentVolumeClaim) {}, ""},
		{"pending", func(c *corev1.PersistentVolumeClaim) { c.Status.Phase = corev1.ClaimPending }, "PVC is not bound"},
		{"no volume name", func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeName = "" }, "PVC has empty pvc.Spec.VolumeName"},
		{"being deleted", func(c *corev1.PersistentVolumeClaim) { c.DeletionTimestamp = &now }, "PVC is being deleted"},
		{"being deleted, still protected", func(c *corev1.PersistentVolumeClaim) {
			c.DeletionTimestamp, c.Finalizers = &now, []string{"kubernetes.io/pvc-protection"}
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := bound.DeepCopy()
			tc.edit(c)
			if got := errString(checkClaim(c)); got != tc.want {
				t.Errorf("checkClaim() = %q, want %q", got, tc.want)
			}
		})
	}
	unbound := pv.DeepCopy()
	unbound.Spec.ClaimRef = nil
	other := pv.DeepCopy()
	other.Spec.ClaimRef.UID = "someone-else"
	for pv, want := range map[*corev1.PersistentVolume]string{
		pv:      "",
		unbound: "found PV object pv1 but it has a nil pv.Spec.ClaimRef indicating it is not yet bound to the claim",
		other:   "found PV object pv1 but its pv.Spec.ClaimRef.UID someone-else does not point to claim.UID uid-c",
	} {
		if got := errString(checkBinding(pv, bound)); got != want {
			t.Errorf("checkBinding() = %q, want %q", got, want)
		}
	}
}

// TestCheckVolumeMode pins upstream's volumeMode refusals.
func TestCheckVolumeMode(t *testing.T) {
	block, fs := ptr.To(corev1.PersistentVolumeBlock), ptr.To(corev1.PersistentVolumeFilesystem)
	mounted := claimPod(pvcSource("c", false))
	device := claimPod(pvcSource("c", false))
	device.Spec.Containers[0].VolumeMounts = nil
	device.Spec.Containers[0].VolumeDevices = []corev1.VolumeDevice{{Name: "data", DevicePath: "/dev/xvda"}}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		mode *corev1.PersistentVolumeMode
		want string
	}{
		{"filesystem mounted", mounted, fs, ""},
		{"default mounted", mounted, nil, ""},
		{"block mounted", mounted, block, "volume data has volumeMode Block, but is specified in volumeMounts"},
		{"filesystem as device", device, fs, "volume data has volumeMode Filesystem, but is specified in volumeDevices"},
		{"block as device", device, block, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pv := &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{VolumeMode: tc.mode}}
			if got := errString(checkVolumeMode(tc.pod, "data", pv)); got != tc.want {
				t.Errorf("checkVolumeMode() = %q, want %q", got, tc.want)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestClaimOnHostPath: a claim bound to a hostPath volume is the host path
// itself, as an inline hostPath; the claim and volume are read once per
// pod; a claim no container uses is not read at all; a claim asked for
// read-only is mounted read-only.
func TestClaimOnHostPath(t *testing.T) {
	host := t.TempDir()
	pvc, pv := boundClaim("c", "pv1", corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: host}})
	e := newEnv(t, pvc, pv)
	pod := claimPod(pvcSource("c", true))
	for range 2 {
		paths, err := e.m.SetUp(context.Background(), pod)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[string]string{"data": host}, paths); diff != "" {
			t.Errorf("SetUp() paths (-want +got):\n%s", diff)
		}
	}
	var reads []string
	for _, a := range e.client.Actions() {
		if a.GetVerb() == "get" {
			reads = append(reads, a.GetResource().Resource)
		}
	}
	if diff := cmp.Diff([]string{"persistentvolumeclaims", "persistentvolumes"}, reads); diff != "" {
		t.Errorf("API reads over two SetUps (-want +got):\n%s", diff)
	}
	if !ForcedReadOnly(pod.Spec.Volumes[0]) {
		t.Error("a claim asked for read-only is not mounted read-only")
	}
	if ForcedReadOnly(claimPod(pvcSource("c", false)).Spec.Volumes[0]) {
		t.Error("a read-write claim is mounted read-only")
	}
}

// TestClaimWaits: a claim not yet bound fails the set-up with upstream's
// words and one FailedMount event; once bound, the next set-up succeeds.
func TestClaimWaits(t *testing.T) {
	host := t.TempDir()
	pvc, pv := boundClaim("c", "pv1", corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: host}})
	pending := pvc.DeepCopy()
	pending.Status.Phase, pending.Spec.VolumeName = corev1.ClaimPending, ""
	e := newEnv(t, pending, pv)
	pod := claimPod(pvcSource("c", false))
	ctx := context.Background()
	for range 2 {
		_, err := e.m.SetUp(ctx, pod)
		if want := `volume "data": error processing PVC ns/c: PVC is not bound`; errString(err) != want {
			t.Fatalf("SetUp() error = %v, want %s", err, want)
		}
		if !transient.IsWaiting(err) {
			t.Error("a Pending claim is not a wait the pod worker polls (transient.Waiting)")
		}
	}
	want := []string{`Warning FailedMount MountVolume.SetUp failed for volume "data" : error processing PVC ns/c: PVC is not bound`}
	if diff := cmp.Diff(want, e.events.messages); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if _, err := e.client.CoreV1().PersistentVolumeClaims("ns").Update(ctx, pvc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if paths, err := e.m.SetUp(ctx, pod); err != nil || paths["data"] != host {
		t.Errorf("SetUp() once bound = %v, %v", paths, err)
	}
}

// TestClaimWaitsOnlyWhileItMay: a claim missing or Pending while the pod
// is new is a wait (the ephemeral controller creates a generic ephemeral
// volume's claim after the pod; a provisioner binds a claim); after
// transient.WaitWindow, or Lost, or being deleted, it is a failure the pod
// worker retries at its usual back-off.
func TestClaimWaitsOnlyWhileItMay(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	pod := claimPod(corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}})
	_, err := e.m.SetUp(ctx, pod)
	if want := `volume "data": error processing PVC ns/web-data: failed to fetch PVC from API server: persistentvolumeclaims "web-data" not found`; errString(err) != want {
		t.Fatalf("SetUp() error = %v, want %s", err, want)
	}
	if !transient.IsWaiting(err) {
		t.Error("the claim of a new pod, missing, is not a wait")
	}
	e.clock.Step(transient.WaitWindow)
	if _, err := e.m.SetUp(ctx, pod); err == nil || transient.IsWaiting(err) {
		t.Errorf("SetUp() of a pod seen %s ago, its claim missing = %v, want an error that is not a wait", transient.WaitWindow, err)
	}

	pvc, pv := boundClaim("c", "pv1", corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: t.TempDir()}})
	lost := pvc.DeepCopy()
	lost.Status.Phase = corev1.ClaimLost
	deleted := pvc.DeepCopy()
	deleted.Status.Phase, deleted.Spec.VolumeName = corev1.ClaimPending, ""
	deleted.DeletionTimestamp, deleted.Finalizers = &metav1.Time{}, []string{pvcProtectionFinalizer}
	for name, c := range map[string]*corev1.PersistentVolumeClaim{"Lost": lost, "Pending and deleted": deleted} {
		_, err = newEnv(t, c, pv).m.SetUp(ctx, claimPod(pvcSource("c", false)))
		if want := `volume "data": error processing PVC ns/c: PVC is not bound`; errString(err) != want || transient.IsWaiting(err) {
			t.Errorf("SetUp() of a claim %s = %v (a wait: %v), want %s, not a wait", name, err, transient.IsWaiting(err), want)
		}
	}
}

// TestGenericEphemeralClaim: a generic ephemeral volume uses the claim
// <pod>-<volume>, and only when the pod owns it, as upstream.
func TestGenericEphemeralClaim(t *testing.T) {
	host := t.TempDir()
	pod := claimPod(corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}})
	pvc, pv := boundClaim("web-data", "pv1", corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: host}})
	owned := pvc.DeepCopy()
	owned.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: ptr.To(true)}}
	for _, tc := range []struct {
		name    string
		claim   *corev1.PersistentVolumeClaim
		wantErr string
	}{
		{"owned", owned, ""},
		{"not the pod's", pvc, `volume "data": PVC ns/web-data was not created for pod ns/web (pod is not owner)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.claim, pv)
			paths, err := e.m.SetUp(context.Background(), pod)
			if errString(err) != tc.wantErr {
				t.Fatalf("SetUp() error = %v, want %q", err, tc.wantErr)
			}
			if tc.wantErr == "" && paths["data"] != host {
				t.Errorf("SetUp() paths = %v, want data at %s", paths, host)
			}
		})
	}
}

// TestClaimOnUnservedVolume: a persistent volume of a type berth does not
// serve is named in the error.
func TestClaimOnUnservedVolume(t *testing.T) {
	pvc, pv := boundClaim("c", "pv1", corev1.PersistentVolumeSource{ISCSI: &corev1.ISCSIPersistentVolumeSource{TargetPortal: "t", IQN: "i"}})
	e := newEnv(t, pvc, pv)
	_, err := e.m.SetUp(context.Background(), claimPod(pvcSource("c", false)))
	if want := `volume "data": PersistentVolume pv1: type iscsi is not supported by berth yet`; errString(err) != want {
		t.Errorf("SetUp() error = %v, want %s", err, want)
	}
}

// TestLocalVolume: a local persistent volume is bound at
// volumes/kubernetes.io~local-volume/<pv> (read-only when the claim asks),
// gets the pod's fsGroup once unless read-only, and is unmounted at
// tear-down; a mount point that is not empty once unmounted (data of the
// volume) stops the tear-down before anything is removed.
func TestLocalVolume(t *testing.T) {
	for _, readOnly := range []bool{false, true} {
		t.Run(map[bool]string{false: "read-write", true: "read-only"}[readOnly], func(t *testing.T) {
			local := t.TempDir()
			pvc, pv := boundClaim("c", "local-pv", corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: local}})
			e := newEnv(t, []runtime.Object{pvc, pv}...)
			pod := claimPod(pvcSource("c", readOnly))
			group := fsGroupForTest()
			pod.Spec.SecurityContext = &corev1.PodSecurityContext{FSGroup: &group}
			paths, err := e.m.SetUp(context.Background(), pod)
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(e.dir, "uid-1", "volumes", "kubernetes.io~local-volume", "local-pv")
			if paths["data"] != dir {
				t.Errorf("SetUp() paths = %v, want data at %s", paths, dir)
			}
			wantMount := map[bool]int64{false: -1, true: -2}[readOnly]
			if got := e.mounter.snapshot(); got[dir] != wantMount {
				t.Errorf("mounts = %v, want %s bound (%d)", got, dir, wantMount)
			}
			info, err := os.Stat(dir)
			if err != nil {
				t.Fatal(err)
			}
			gid := int64(info.Sys().(*syscall.Stat_t).Gid)
			if owned := gid == group; owned == readOnly {
				t.Errorf("mount point group %d, fsGroup %d, read-only %v", gid, group, readOnly)
			}

			// The fake unmount leaves what the volume showed: a file.
			precious := filepath.Join(dir, "precious")
			if err := os.WriteFile(precious, []byte("data"), 0o600); err != nil {
				t.Fatal(err)
			}
			err = e.m.TearDown(context.Background(), pod.UID)
			if err == nil || !strings.Contains(err.Error(), "remove volume mount point") {
				t.Errorf("TearDown() = %v, want it to stop at the non-empty mount point", err)
			}
			if _, err := os.Stat(precious); err != nil {
				t.Errorf("the volume's data was removed: %v", err)
			}
			if got := e.mounter.snapshot(); got[dir] != 0 {
				t.Errorf("still mounted after TearDown: %v", got)
			}
			if err := os.Remove(precious); err != nil {
				t.Fatal(err)
			}
			if err := e.m.TearDown(context.Background(), pod.UID); err != nil {
				t.Errorf("TearDown() of an empty mount point = %v", err)
			}
			if _, err := os.Stat(filepath.Join(e.dir, "uid-1", "volumes")); !os.IsNotExist(err) {
				t.Errorf("volumes directory after TearDown: %v", err)
			}
		})
	}
}

// TestLocalVolumeNotADirectory: a local volume whose path is a regular
// file is refused, nothing mounted.
func TestLocalVolumeNotADirectory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "disk")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	pvc, pv := boundClaim("c", "local-pv", corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: file}})
	e := newEnv(t, pvc, pv)
	_, err := e.m.SetUp(context.Background(), claimPod(pvcSource("c", false)))
	if err == nil || !strings.Contains(err.Error(), "is neither a directory nor a block device") {
		t.Errorf("SetUp() error = %v, want a refusal", err)
	}
	if got := e.mounter.snapshot(); len(got) != 0 {
		t.Errorf("mounts = %v, want none", got)
	}
}

// TestLocalVolumeBadName: the PV's name becomes the mount point's path
// element; one that would leave the plugin directory is refused, nothing
// mounted.
func TestLocalVolumeBadName(t *testing.T) {
	for _, name := range []string{"..", "../../escape", "a/b"} {
		pvc, pv := boundClaim("c", name, corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: t.TempDir()}})
		e := newEnv(t, pvc, pv)
		_, err := e.m.SetUp(context.Background(), claimPod(pvcSource("c", false)))
		if err == nil || !strings.Contains(err.Error(), "cannot name its mount point") {
			t.Errorf("PV %q: SetUp() error = %v, want a refusal", name, err)
		}
		if got := e.mounter.snapshot(); len(got) != 0 {
			t.Errorf("PV %q: mounts = %v, want none", name, got)
		}
	}
}
