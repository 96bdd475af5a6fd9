package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// atomicVolumes are the volume kinds whose content berth writes, by the
// name the pod below gives them and their plugin directory.
var atomicVolumes = []struct{ name, plugin string }{
	{"cm", "kubernetes.io~configmap"},
	{"sec", "kubernetes.io~secret"},
	{"dapi", "kubernetes.io~downward-api"},
	{"proj", "kubernetes.io~projected"},
}

// TestSecurityAtomicVolumes is CVE-2017-1002102 on berth: a container
// tries to write into its configMap, secret, downwardAPI and projected
// volumes and to replace each ..data with a symlink to a host directory.
// Both must fail (the mounts are read-only whatever the volumeMount
// says), and after berth rewrote every volume (configMap and secret
// edited, a label changed) the host directory and its marker file are
// untouched. On a berth that mounted these volumes read-write, the
// relative link planted here made the refresh read the host directory
// and remove it.
func TestSecurityAtomicVolumes(t *testing.T) {
	env := startClusterEnv(t)
	env.node.start()
	ctx := context.Background()
	env.waitAPI(t, "default service account", func(ctx context.Context) (bool, error) {
		_, err := env.admin.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	hostDir := filepath.Join(t.TempDir(), "host")
	must(t, os.MkdirAll(hostDir, 0o755))
	must(t, os.WriteFile(filepath.Join(hostDir, "marker"), []byte("host file\n"), 0o644))
	// The volume directories are <root>/pods/<uid>/volumes/<plugin>/<name>:
	// a relative path from there to hostDir does not depend on the UID.
	target, err := filepath.Rel(filepath.Join(env.node.rootDir, "pods", "uid", "volumes", "plugin", "name"), hostDir)
	must(t, err)

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "atomic-cm", Namespace: "default"}, Data: map[string]string{"key": "v1"}}
	_, err = env.admin.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{})
	must(t, err)
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "atomic-sec", Namespace: "default"}, Data: map[string][]byte{"key": []byte("s1")}}
	_, err = env.admin.CoreV1().Secrets("default").Create(ctx, sec, metav1.CreateOptions{})
	must(t, err)
	created, err := env.admin.CoreV1().Pods("default").Create(ctx, atomicAttackPod(target), metav1.CreateOptions{})
	must(t, err)
	env.waitPodRunning(t, "atomic")
	volDir := func(name, plugin string) string {
		return filepath.Join(env.node.rootDir, "pods", string(created.UID), "volumes", plugin, name)
	}

	var result string
	env.node.waitFor("the container's attempts", func() bool {
		result, _ = readFile(filepath.Join(volDir("out", "kubernetes.io~empty-dir"), "result"))
		return strings.HasSuffix(result, "done\n")
	})
	checkRefusedReadOnly(t, result)

	// Make berth rewrite every volume now: new configMap and secret
	// content, and a label change (the pod update wakes the refresh).
	cm.Data["key"] = "v2"
	_, err = env.admin.CoreV1().ConfigMaps("default").Update(ctx, cm, metav1.UpdateOptions{})
	must(t, err)
	sec.Data["key"] = []byte("s2")
	_, err = env.admin.CoreV1().Secrets("default").Update(ctx, sec, metav1.UpdateOptions{})
	must(t, err)
	_, err = env.admin.CoreV1().Pods("default").Patch(ctx, "atomic", types.StrategicMergePatchType,
		[]byte(`{"metadata":{"labels":{"rev":"2"}}}`), metav1.PatchOptions{})
	must(t, err)
	waitRewritten(env, volDir)
	checkHostAndVolumes(t, hostDir, volDir)

	must(t, env.admin.CoreV1().Pods("default").Delete(ctx, "atomic", metav1.DeleteOptions{}))
	env.waitAPI(t, "pod atomic gone", func(ctx context.Context) (bool, error) {
		_, err := env.admin.CoreV1().Pods("default").Get(ctx, "atomic", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// checkRefusedReadOnly checks the container's report: every write and
// every link into the four volumes failed with a read-only file system.
func checkRefusedReadOnly(t *testing.T, result string) {
	t.Helper()
	lines := map[string]string{}
	for _, line := range strings.Split(result, "\n") {
		if v, rest, ok := strings.Cut(line, " "); ok {
			what, _, _ := strings.Cut(rest, " ")
			lines[v+" "+what] = line
		}
	}
	for _, v := range atomicVolumes {
		for _, what := range []string{"write", "link"} {
			line := lines[v.name+" "+what]
			if !strings.Contains(line, " refused: ") || !strings.Contains(line, "Read-only file system") {
				t.Errorf("%s into %s was not refused as read-only: %q", what, v.name, line)
			}
		}
	}
}

// waitRewritten waits until berth wrote the new configMap, secret and
// label values into every volume.
func waitRewritten(env *clusterEnv, volDir func(name, plugin string) string) {
	want := map[string]string{"cm/key": "v2", "sec/key": "s2", "dapi/labels": `rev="2"`, "proj/key": "v2", "proj/labels": `rev="2"`}
	plugins := map[string]string{}
	for _, v := range atomicVolumes {
		plugins[v.name] = v.plugin
	}
	for file, content := range want {
		name, rel, _ := strings.Cut(file, "/")
		env.node.waitFor(file+" rewritten by berth", func() bool {
			got, _ := readFile(filepath.Join(volDir(name, plugins[name]), rel))
			return strings.Contains(got, content)
		})
	}
}

// checkHostAndVolumes checks, after the rewrite, that the host directory
// is as the test made it and every ..data points at a version of berth's.
func checkHostAndVolumes(t *testing.T, hostDir string, volDir func(name, plugin string) string) {
	t.Helper()
	if got, err := readFile(filepath.Join(hostDir, "marker")); err != nil || got != "host file\n" {
		t.Errorf("host marker after the refresh = %q, %v; want it untouched", got, err)
	}
	if entries, err := os.ReadDir(hostDir); err != nil || len(entries) != 1 {
		t.Errorf("host directory after the refresh: %d entries, %v; want only the marker", len(entries), err)
	}
	for _, v := range atomicVolumes {
		link, err := os.Readlink(filepath.Join(volDir(v.name, v.plugin), "..data"))
		if err != nil || !strings.HasPrefix(link, "..20") || strings.Contains(link, "/") {
			t.Errorf("%s/..data -> %q, %v; want a version directory of berth's", v.name, link, err)
		}
		if info, err := os.Stat(volDir(v.name, v.plugin)); err != nil {
			t.Error(err)
		} else if info.Mode().Perm() != 0o755 {
			t.Errorf("%s directory mode = %v, want 0755", v.name, info.Mode())
		}
	}
}

// atomicAttackPod mounts a configMap, a secret, a downwardAPI and a
// projected volume read-write (as far as its volumeMounts say) and tries
// to write a file into each and to point each ..data at target. It
// reports what happened in result in the emptyDir out, which the test
// reads on the host. out is mounted beneath the read-only configMap, so
// the pod also needs the nested mount point berth makes for it.
func atomicAttackPod(target string) *corev1.Pod {
	labels := []corev1.DownwardAPIVolumeFile{{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}}}
	cmRef := corev1.LocalObjectReference{Name: "atomic-cm"}
	mounts := []corev1.VolumeMount{{Name: "out", MountPath: "/vols/cm/out"}}
	for _, v := range atomicVolumes {
		mounts = append(mounts, corev1.VolumeMount{Name: v.name, MountPath: "/vols/" + v.name})
	}
	script := fmt.Sprintf(`for v in cm sec dapi proj; do
  if msg=$( { echo x > /vols/$v/planted; } 2>&1 ); then echo "$v write allowed"; else echo "$v write refused: $msg"; fi
  if msg=$( { rm /vols/$v/..data && ln -s %q /vols/$v/..data; } 2>&1 ); then echo "$v link allowed"; else echo "$v link refused: $msg"; fi
done > /vols/cm/out/result
echo done >> /vols/cm/out/result
exec sleep 3600`, target)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "atomic", Namespace: "default", Labels: map[string]string{"rev": "1"}},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken:  ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Volumes: []corev1.Volume{
				{Name: "out", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "cm", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: cmRef}}},
				{Name: "sec", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "atomic-sec"}}},
				{Name: "dapi", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: labels}}},
				{Name: "proj", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: cmRef}},
					{DownwardAPI: &corev1.DownwardAPIProjection{Items: labels}},
				}}}},
			},
			Containers: []corev1.Container{{
				Name: "app", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
				Command:      []string{"sh", "-c", script},
				VolumeMounts: mounts,
			}},
		},
	}
}
