package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/test/cluster"
)

// TestStorage: the development cluster's storage, through the same
// cluster.StartStorage as make cluster (the local provisioner and its
// default StorageClass), with pods placed by the scheduler. The subtests
// share the cluster and run in order.
func TestStorage(t *testing.T) {
	e := startClusterEnv(t)
	must(t, e.cl.StartStorage(context.Background(), nodeName))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s log: %s", cluster.LocalProvisioner, e.cl.LogPath(cluster.LocalProvisioner))
		}
	})
	e.node.start()
	e.waitServiceAccount(t)
	t.Run("StatefulSetOnTheDefaultClass", e.testStatefulSet)
	t.Run("LocalVolumeWaitsForFirstConsumer", e.testWaitForFirstConsumer)
}

// statefulSetScript appends the pod's name to the volume's log and writes
// how many lines it saw: 1 the first time, 2 once a new pod of the same
// name has found the first one's line.
const statefulSetScript = `echo $HOSTNAME >> /data/log && wc -l < /data/log > /data/seen && exec sleep 3600`

func dataStatefulSet() *appsv1.StatefulSet {
	labels := map[string]string{"app": "data"}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default"},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            ptr.To[int32](2),
			ServiceName:         "data",
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Selector:            &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					AutomountServiceAccountToken:  ptr.To(false),
					TerminationGracePeriodSeconds: ptr.To[int64](1),
					Containers: []corev1.Container{{
						Name: "main", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
						Command:      []string{"sh", "-c", statefulSetScript},
						VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
					}},
				},
			},
			// No storageClassName: the default class's.
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")}},
				},
			}},
		},
	}
}

// testStatefulSet: a StatefulSet with volumeClaimTemplates runs on berth,
// its claims given the default class, provisioned once the scheduler has
// picked berth's node and mounted; berth restarted under the pods restarts
// no container; a pod deleted comes back with its data; once the
// StatefulSet and its claims are deleted nothing is mounted under berth's
// root and the provisioner has removed the directories.
func (e *clusterEnv) testStatefulSet(t *testing.T) {
	ctx := context.Background()
	_, err := e.admin.CoreV1().Services("default").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec:       corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app": "data"}},
	}, metav1.CreateOptions{})
	must(t, err)
	_, err = e.admin.AppsV1().StatefulSets("default").Create(ctx, dataStatefulSet(), metav1.CreateOptions{})
	must(t, err)

	names := []string{"data-0", "data-1"}
	before := map[string]*corev1.Pod{}
	dirs := map[string]string{}
	for _, name := range names {
		before[name] = e.waitPodRunning(t, name)
		if got := before[name].Spec.NodeName; got != nodeName {
			t.Fatalf("pod %s on node %q, want %q", name, got, nodeName)
		}
		dirs[name] = e.checkProvisioned(t, "data-"+name)
		e.waitVolumeFile(t, dirs[name], "seen", "1")
	}

	// berth restarted under the pods: no container restarts.
	e.node.stop()
	e.node.start()
	time.Sleep(5 * time.Second) // a few syncs
	for _, name := range names {
		after := e.waitPodRunning(t, name)
		b, a := before[name].Status.ContainerStatuses[0], after.Status.ContainerStatuses[0]
		if a.RestartCount != 0 || a.ContainerID != b.ContainerID {
			t.Errorf("pod %s: the container restarted under berth's restart: %+v, before %+v", name, a, b)
		}
		if got, err := readFile(filepath.Join(dirs[name], "log")); err != nil || got != name+"\n" {
			t.Errorf("pod %s: the volume's log after berth's restart = %q, %v; want its one line", name, got, err)
		}
	}

	// A pod deleted is made again by the controller and finds its data.
	must(t, e.admin.CoreV1().Pods("default").Delete(ctx, "data-0", metav1.DeleteOptions{}))
	e.waitAPI(t, "data-0 made again and running", func(ctx context.Context) (bool, error) {
		p, err := e.admin.CoreV1().Pods("default").Get(ctx, "data-0", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		return p.UID != before["data-0"].UID && running(p), nil
	})
	e.waitVolumeFile(t, dirs["data-0"], "seen", "2")
	if got, err := readFile(filepath.Join(dirs["data-0"], "log")); err != nil || got != "data-0\ndata-0\n" {
		t.Errorf("data-0's volume log = %q, %v; want a line from each pod", got, err)
	}

	// The StatefulSet, then its claims (a StatefulSet keeps them): the
	// volumes are unmounted, the provisioner removes the directories and
	// the PVs.
	must(t, e.admin.AppsV1().StatefulSets("default").Delete(ctx, "data", metav1.DeleteOptions{}))
	for _, name := range names {
		e.waitAPI(t, "pod "+name+" gone", func(ctx context.Context) (bool, error) {
			_, err := e.admin.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		must(t, e.admin.CoreV1().PersistentVolumeClaims("default").Delete(ctx, "data-"+name, metav1.DeleteOptions{}))
	}
	e.waitAPI(t, "the provisioned PVs deleted", func(ctx context.Context) (bool, error) {
		pvs, err := e.admin.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, pv := range pvs.Items {
			if pv.Spec.StorageClassName == cluster.DefaultStorageClass {
				return false, nil
			}
		}
		return true, nil
	})
	for name, dir := range dirs {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("pod %s's volume directory %s after its claim was deleted: %v, want it removed", name, dir, err)
		}
	}
	e.node.waitFor("nothing mounted under berth's root dir", func() bool {
		return len(mountsUnder(e.node.rootDir)) == 0
	})
}

// checkProvisioned checks that claim got the default class, was
// provisioned on berth's node the scheduler selected, and is bound to a
// local PV under the cluster's volume directory pinned to the node; it
// returns the PV's directory.
func (e *clusterEnv) checkProvisioned(t *testing.T, claim string) string {
	t.Helper()
	ctx := context.Background()
	pvc, err := e.admin.CoreV1().PersistentVolumeClaims("default").Get(ctx, claim, metav1.GetOptions{})
	must(t, err)
	if got := ptr.Deref(pvc.Spec.StorageClassName, ""); got != cluster.DefaultStorageClass || pvc.Status.Phase != corev1.ClaimBound {
		t.Fatalf("claim %s: class %q, phase %s; want the default class %s, bound", claim, got, pvc.Status.Phase, cluster.DefaultStorageClass)
	}
	if got := pvc.Annotations["volume.kubernetes.io/selected-node"]; got != nodeName {
		t.Errorf("claim %s: selected node %q, want %q (the scheduler's pick)", claim, got, nodeName)
	}
	pv, err := e.admin.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
	must(t, err)
	if pv.Spec.Local == nil || filepath.Dir(pv.Spec.Local.Path) != e.cl.VolumesDir() {
		t.Fatalf("claim %s: PV %s source %+v, want a local volume under %s", claim, pv.Name, pv.Spec.PersistentVolumeSource, e.cl.VolumesDir())
	}
	affinity := pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0]
	if affinity.Key != corev1.LabelHostname || len(affinity.Values) != 1 || affinity.Values[0] != nodeName {
		t.Errorf("claim %s: PV node affinity %+v, want %s in [%s]", claim, affinity, corev1.LabelHostname, nodeName)
	}
	if pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete || pv.Annotations["pv.kubernetes.io/provisioned-by"] != cluster.ProvisionerName {
		t.Errorf("claim %s: PV reclaim policy %s, provisioned by %q", claim, pv.Spec.PersistentVolumeReclaimPolicy, pv.Annotations["pv.kubernetes.io/provisioned-by"])
	}
	return pv.Spec.Local.Path
}

// waitVolumeFile waits until the file name in the volume directory dir
// holds want (spaces trimmed).
func (e *clusterEnv) waitVolumeFile(t *testing.T, dir, name, want string) {
	t.Helper()
	var got string
	e.node.waitFor(fmt.Sprintf("%s in %s to be %q", name, dir, want), func() bool {
		got, _ = readFile(filepath.Join(dir, name))
		return strings.TrimSpace(got) == want
	})
}

// mountsUnder lists the mount points below dir.
func mountsUnder(dir string) []string {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return []string{err.Error()}
	}
	var under []string
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			under = append(under, f[4])
		}
	}
	return under
}

// testWaitForFirstConsumer: a local PV of a WaitForFirstConsumer class
// made by the test is not bound to its claim until a pod using the claim
// is scheduled; then the scheduler puts the pod on berth's node (the PV's
// affinity), the claim binds and the pod runs, writing to the volume.
func (e *clusterEnv) testWaitForFirstConsumer(t *testing.T) {
	ctx := context.Background()
	const class = "e2e-wffc"
	_, err := e.admin.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: class},
		Provisioner:       "kubernetes.io/no-provisioner",
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
	}, metav1.CreateOptions{})
	must(t, err)
	dir := t.TempDir()
	_, err = e.admin.CoreV1().PersistentVolumes().Create(ctx, claimVolume(class, class, corev1.PersistentVolumeSource{
		Local: &corev1.LocalVolumeSource{Path: dir}}), metav1.CreateOptions{})
	must(t, err)
	_, err = e.admin.CoreV1().PersistentVolumeClaims("default").Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "wffc"}, Spec: claimSpec(class)}, metav1.CreateOptions{})
	must(t, err)
	e.waitAPI(t, "a WaitForFirstConsumer event for the claim", func(ctx context.Context) (bool, error) {
		evs, err := e.admin.CoreV1().Events("default").List(ctx, metav1.ListOptions{
			FieldSelector: fields.AndSelectors(fields.OneTermEqualSelector("involvedObject.name", "wffc"), fields.OneTermEqualSelector("reason", "WaitForFirstConsumer")).String(),
		})
		return err == nil && len(evs.Items) > 0, err
	})
	pvc, err := e.admin.CoreV1().PersistentVolumeClaims("default").Get(ctx, "wffc", metav1.GetOptions{})
	must(t, err)
	if pvc.Status.Phase != corev1.ClaimPending || pvc.Spec.VolumeName != "" {
		t.Fatalf("claim before any pod: phase %s, volume %q; want Pending and unbound", pvc.Status.Phase, pvc.Spec.VolumeName)
	}

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "wffc"},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken:  ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "wffc"}}}},
			Containers: []corev1.Container{{
				Name: "main", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
				Command:      []string{"sh", "-c", "echo bound > /data/out && exec sleep 3600"},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
			}},
		},
	}
	_, err = e.admin.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	must(t, err)
	running := e.waitPodRunning(t, "wffc")
	if running.Spec.NodeName != nodeName {
		t.Errorf("pod on node %q, want %q", running.Spec.NodeName, nodeName)
	}
	pvc, err = e.admin.CoreV1().PersistentVolumeClaims("default").Get(ctx, "wffc", metav1.GetOptions{})
	must(t, err)
	if pvc.Status.Phase != corev1.ClaimBound || pvc.Spec.VolumeName != class {
		t.Errorf("claim once the pod runs: phase %s, volume %q; want bound to %s", pvc.Status.Phase, pvc.Spec.VolumeName, class)
	}
	e.waitVolumeFile(t, dir, "out", "bound")

	must(t, e.admin.CoreV1().Pods("default").Delete(ctx, "wffc", metav1.DeleteOptions{}))
	e.waitAPI(t, "pod wffc gone", func(ctx context.Context) (bool, error) {
		_, err := e.admin.CoreV1().Pods("default").Get(ctx, "wffc", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	e.node.waitFor("nothing mounted under berth's root dir", func() bool {
		return len(mountsUnder(e.node.rootDir)) == 0
	})
}
