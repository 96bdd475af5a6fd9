package kuberuntime

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/volumes/subpath"
)

func TestMountSpecs(t *testing.T) {
	vols := map[string]string{"data": "/v/data", "conf": "/v/conf"}
	vars := map[string]string{"POD_NAME": "web-1"}
	priv := &corev1.SecurityContext{Privileged: ptr.To(true)}
	tests := []struct {
		name    string
		mounts  []corev1.VolumeMount
		sc      *corev1.SecurityContext
		want    []mountSpec
		wantErr string
	}{
		{name: "whole volume", mounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
			want: []mountSpec{{Volume: "data", VolumeDir: "/v/data", ContainerPath: "/data", Propagation: runtimeapi.MountPropagation_PROPAGATION_PRIVATE}}},
		{name: "read-only subPath", mounts: []corev1.VolumeMount{{Name: "conf", MountPath: "/etc/app.conf", SubPath: "app.conf", ReadOnly: true}},
			want: []mountSpec{{Volume: "conf", VolumeDir: "/v/conf", SubPath: "app.conf", ContainerPath: "/etc/app.conf", ReadOnly: true, Propagation: runtimeapi.MountPropagation_PROPAGATION_PRIVATE}}},
		{name: "subPathExpr expands the environment", mounts: []corev1.VolumeMount{{Name: "data", MountPath: "/out", SubPathExpr: "logs/$(POD_NAME)"}},
			want: []mountSpec{{Volume: "data", VolumeDir: "/v/data", SubPath: "logs/web-1", ContainerPath: "/out", Propagation: runtimeapi.MountPropagation_PROPAGATION_PRIVATE}}},
		{name: "host to container", mounts: []corev1.VolumeMount{{Name: "data", MountPath: "/d", MountPropagation: ptr.To(corev1.MountPropagationHostToContainer)}},
			want: []mountSpec{{Volume: "data", VolumeDir: "/v/data", ContainerPath: "/d", Propagation: runtimeapi.MountPropagation_PROPAGATION_HOST_TO_CONTAINER}}},
		{name: "bidirectional needs privileged", mounts: []corev1.VolumeMount{{Name: "data", MountPath: "/d", MountPropagation: ptr.To(corev1.MountPropagationBidirectional)}},
			wantErr: "only to privileged containers"},
		{name: "bidirectional privileged", sc: priv, mounts: []corev1.VolumeMount{{Name: "data", MountPath: "/d", MountPropagation: ptr.To(corev1.MountPropagationBidirectional)}},
			want: []mountSpec{{Volume: "data", VolumeDir: "/v/data", ContainerPath: "/d", Propagation: runtimeapi.MountPropagation_PROPAGATION_BIDIRECTIONAL}}},
		{name: "each mount keeps its index", mounts: []corev1.VolumeMount{{Name: "data", MountPath: "/a"}, {Name: "conf", MountPath: "/b", SubPath: "x"}},
			want: []mountSpec{
				{Volume: "data", VolumeDir: "/v/data", ContainerPath: "/a", Propagation: runtimeapi.MountPropagation_PROPAGATION_PRIVATE},
				{Volume: "conf", Index: 1, VolumeDir: "/v/conf", SubPath: "x", ContainerPath: "/b", Propagation: runtimeapi.MountPropagation_PROPAGATION_PRIVATE},
			}},
		{name: "volume not set up", mounts: []corev1.VolumeMount{{Name: "missing", MountPath: "/m"}}, wantErr: `volume "missing"`},
		{name: "dot-dot in subPathExpr", mounts: []corev1.VolumeMount{{Name: "data", MountPath: "/m", SubPathExpr: "../$(POD_NAME)"}}, wantErr: "without '..'"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &corev1.Container{Name: "app", VolumeMounts: tc.mounts, SecurityContext: tc.sc}
			got, err := mountSpecs(&corev1.Pod{}, c, mountVolumes{Dirs: vols}, vars)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestStartContainerBindsSubPath: the CRI mount of a subPath is its bind
// under the pod's volume-subpaths, which keeps showing the checked
// directory when the volume's path is swapped for a symlink to the host
// right after the container was prepared.
func TestStartContainerBindsSubPath(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("subPath binds are real mounts: run as root")
	}
	e := newEnv(t)
	e.fake.AddImage("busybox:1.36")
	vol, outside := t.TempDir(), t.TempDir()
	must(t, os.MkdirAll(filepath.Join(vol, "logs", "app"), 0o755))
	must(t, os.MkdirAll(filepath.Join(outside, "app"), 0o755))
	podDir := filepath.Join(e.pods, "uid-1")
	t.Cleanup(func() { must(t, subpath.New(subpath.Config{}).CleanPod(e.ctx, podDir)) })
	pod := subPathPod("logs/app")
	res, err := e.apply(pod, e.status(pod), nil, map[string]string{"data": vol})
	if err != nil || len(res.Failures) != 0 {
		t.Fatalf("SyncPod: %v, failures %v", err, res.Failures)
	}
	st, err := e.fake.ContainerStatus(e.ctx, &runtimeapi.ContainerStatusRequest{ContainerId: e.running(pod, "app").ID})
	must(t, err)
	var host string
	for _, m := range st.GetStatus().GetMounts() {
		if m.GetContainerPath() == "/logs" {
			host = m.GetHostPath()
		}
	}
	if want := filepath.Join(podDir, "volume-subpaths", "data", "app", "0"); host != want {
		t.Fatalf("CRI mount of the subPath = %q, want the bind %q", host, want)
	}
	checked := statID(t, filepath.Join(vol, "logs", "app"))
	must(t, os.Rename(filepath.Join(vol, "logs"), filepath.Join(vol, "logs.old")))
	must(t, os.Symlink(outside, filepath.Join(vol, "logs")))
	if got := statID(t, host); got != checked {
		t.Errorf("after the swap the runtime's path %q shows %v, not the checked directory %v", host, got, checked)
	}
}

// TestStartContainerRefusesEscapingSubPath: a subPath a symlink leads out
// of its volume fails the start with CreateContainerConfigError.
func TestStartContainerRefusesEscapingSubPath(t *testing.T) {
	e := newEnv(t)
	e.fake.AddImage("busybox:1.36")
	vol := t.TempDir()
	must(t, os.Symlink(t.TempDir(), filepath.Join(vol, "link")))
	pod := subPathPod("link")
	res, err := e.apply(pod, e.status(pod), nil, map[string]string{"data": vol})
	must(t, err)
	f := res.Failures["app"]
	if f.Reason != ReasonCreateContainerConfigError || !strings.Contains(f.Message, "escapes its volume") {
		t.Errorf("failure = %+v, want CreateContainerConfigError with an escape refusal", f)
	}
}

func subPathPod(sub string) *corev1.Pod {
	pod := basePod()
	pod.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/logs", SubPath: sub}}
	return pod
}

// statID is path's device and inode, symlinks followed.
func statID(t *testing.T, path string) [2]uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	must(t, err)
	st := fi.Sys().(*syscall.Stat_t)
	return [2]uint64{st.Dev, st.Ino}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestMountsOfWrittenVolumesAreReadOnly: configMap, secret, downwardAPI
// and projected volumes reach the CRI read-only even when the volumeMount
// asks for read-write (CVE-2017-1002102); emptyDir and hostPath keep what
// the volumeMount says.
func TestMountsOfWrittenVolumesAreReadOnly(t *testing.T) {
	sources := map[string]corev1.VolumeSource{
		"cm":        {ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "c"}}},
		"secret":    {Secret: &corev1.SecretVolumeSource{SecretName: "s"}},
		"downward":  {DownwardAPI: &corev1.DownwardAPIVolumeSource{}},
		"projected": {Projected: &corev1.ProjectedVolumeSource{}},
		"empty":     {EmptyDir: &corev1.EmptyDirVolumeSource{}},
		"host":      {HostPath: &corev1.HostPathVolumeSource{Path: "/srv"}},
	}
	pod := &corev1.Pod{}
	vols := map[string]string{}
	var mounts []corev1.VolumeMount
	for _, name := range []string{"cm", "secret", "downward", "projected", "empty", "host"} {
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: name, VolumeSource: sources[name]})
		vols[name] = filepath.Join(t.TempDir(), name)
		mounts = append(mounts,
			corev1.VolumeMount{Name: name, MountPath: "/rw/" + name},
			corev1.VolumeMount{Name: name, MountPath: "/ro/" + name, ReadOnly: true})
	}
	c := &corev1.Container{Name: "app", VolumeMounts: mounts}
	specs, err := mountSpecs(pod, c, mountVolumes{Dirs: vols}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Whole volumes only: resolveMounts needs no subPath binder for them.
	got, err := (&Manager{}).resolveMounts(context.Background(), pod, c, specs)
	if err != nil {
		t.Fatal(err)
	}
	readOnly := map[string]bool{}
	for _, m := range got {
		readOnly[m.ContainerPath] = m.Readonly
	}
	want := map[string]bool{
		"/rw/cm": true, "/rw/secret": true, "/rw/downward": true, "/rw/projected": true, "/rw/empty": false, "/rw/host": false,
		"/ro/cm": true, "/ro/secret": true, "/ro/downward": true, "/ro/projected": true, "/ro/empty": true, "/ro/host": true,
	}
	if diff := cmp.Diff(want, readOnly); diff != "" {
		t.Errorf("CRI mount Readonly by container path (-want +got):\n%s", diff)
	}
	// A subPath of a configMap is read-only too.
	specs, err = mountSpecs(pod, &corev1.Container{Name: "app", VolumeMounts: []corev1.VolumeMount{{Name: "cm", MountPath: "/etc/app.conf", SubPath: "app.conf"}}}, mountVolumes{Dirs: vols}, nil)
	if err != nil || len(specs) != 1 || !specs[0].ReadOnly {
		t.Errorf("subPath of a configMap: specs = %+v, %v; want read-only", specs, err)
	}
}

// TestMountsRelabel: the volumes the volume manager names in Relabel reach
// the CRI with SelinuxRelabel, the others without it, whole volumes and
// subPaths (as upstream's makeMounts, which sets it for a subPath of a
// relabelled volume too).
func TestMountsRelabel(t *testing.T) {
	e := newEnv(t)
	e.fake.AddImage("busybox:1.36")
	pod := basePod()
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/srv"}}},
	}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}, {Name: "host", MountPath: "/srv"}}
	want := map[string]bool{"/data": true, "/srv": false}
	if os.Geteuid() == 0 {
		// A subPath is a bind under the pod's volume-subpaths: real mounts.
		pod.Spec.Containers[0].VolumeMounts = append(pod.Spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "data", MountPath: "/logs", SubPath: "logs"})
		want["/logs"] = true
		t.Cleanup(func() { must(t, subpath.New(subpath.Config{}).CleanPod(e.ctx, filepath.Join(e.pods, "uid-1"))) })
	}
	dirs := map[string]string{"data": t.TempDir(), "host": t.TempDir()}
	res, err := e.applyWith(pod, e.status(pod), nil, ApplyOptions{Volumes: dirs, Relabel: map[string]bool{"data": true}})
	if err != nil || len(res.Failures) != 0 {
		t.Fatalf("SyncPod: %v, failures %v", err, res.Failures)
	}
	st, err := e.fake.ContainerStatus(e.ctx, &runtimeapi.ContainerStatusRequest{ContainerId: e.running(pod, "app").ID})
	must(t, err)
	got := map[string]bool{}
	for _, m := range st.GetStatus().GetMounts() {
		if _, ok := want[m.GetContainerPath()]; ok {
			got[m.GetContainerPath()] = m.GetSelinuxRelabel()
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CRI mount SelinuxRelabel by container path (-want +got):\n%s", diff)
	}
}

// TestDeviceSpecs: a volumeDevice is its block volume's link, read-write
// with mknod unless the claim is read-only, as upstream's
// makeBlockVolumes; a volume not set up fails the container.
func TestDeviceSpecs(t *testing.T) {
	for _, readOnly := range []bool{false, true} {
		pod := &corev1.Pod{Spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: "disk", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c", ReadOnly: readOnly}}}}}}
		c := &corev1.Container{Name: "app", VolumeDevices: []corev1.VolumeDevice{{Name: "disk", DevicePath: "/dev/xvda"}}}
		got, err := deviceSpecs(pod, c, map[string]string{"disk": "/pods/u/volumeDevices/kubernetes.io~local-volume/pv"})
		if err != nil {
			t.Fatal(err)
		}
		perm := map[bool]string{false: "mrw", true: "r"}[readOnly]
		if len(got) != 1 || got[0].GetContainerPath() != "/dev/xvda" || got[0].GetHostPath() != "/pods/u/volumeDevices/kubernetes.io~local-volume/pv" || got[0].GetPermissions() != perm {
			t.Errorf("read-only %v: devices %v, want /dev/xvda from the link with %q", readOnly, got, perm)
		}
		if _, err := deviceSpecs(pod, c, map[string]string{}); err == nil || !strings.Contains(err.Error(), `volume "disk" of volumeDevice "/dev/xvda" is not set up`) {
			t.Errorf("a device not set up: %v", err)
		}
	}
}
