package e2e

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/test/cluster"
)

// csiDriverName is the test driver's name: short, for the registration
// socket's path (<root-dir>/plugins_registry/<name>-reg.sock) to stay
// within a unix socket's 108 bytes.
const csiDriverName = "mock.csi.berth"

// csiMock is upstream's e2e CSI mock driver (tools/kube/cmd/csi-mock-driver)
// running on the host beside berth, registered through berth's
// plugins_registry; it logs every call it answers.
type csiMock struct {
	cmd     *exec.Cmd
	callLog string
}

// startCSIMock starts the mock driver, registering in berth's rootDir,
// with extra flags.
func startCSIMock(t *testing.T, rootDir string, extra ...string) *csiMock {
	t.Helper()
	return startNamedCSIMock(t, rootDir, csiDriverName, extra...)
}

// startNamedCSIMock is startCSIMock for a driver of another name.
func startNamedCSIMock(t *testing.T, rootDir, name string, extra ...string) *csiMock {
	t.Helper()
	bin, err := cluster.ResolveBinDir("")
	must(t, err)
	bin = filepath.Join(bin, "csi-mock-driver")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("csi-mock-driver binary: %v (run `make cluster-tools`)", err)
	}
	dir, err := os.MkdirTemp("", "csi")
	must(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	m := &csiMock{callLog: filepath.Join(dir, "calls.jsonl")}
	logFile, err := os.Create(filepath.Join(dir, "driver.log"))
	must(t, err)
	args := append([]string{"--name", name, "--csi-address", filepath.Join(dir, "csi.sock"),
		"--registration-dir", filepath.Join(rootDir, "plugins_registry"), "--call-log", m.callLog}, extra...)
	m.cmd = exec.Command(bin, args...)
	m.cmd.Stdout, m.cmd.Stderr = logFile, logFile
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	must(t, m.cmd.Start())
	t.Cleanup(func() {
		m.stop()
		logFile.Close()
		if t.Failed() {
			if b, err := os.ReadFile(logFile.Name()); err == nil {
				t.Logf("CSI mock driver log:\n%s", b)
			}
		}
	})
	return m
}

// stop ends the driver as a node-driver-registrar ends: its sockets go.
func (m *csiMock) stop() {
	if m.cmd.ProcessState != nil {
		return
	}
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	_ = m.cmd.Wait()
}

// calls returns the methods of the calls the driver answered, in order.
func (m *csiMock) calls(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(m.callLog)
	if os.IsNotExist(err) {
		return nil
	}
	must(t, err)
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line struct{ Method string }
		must(t, json.Unmarshal(sc.Bytes(), &line))
		out = append(out, line.Method)
	}
	return out
}

// registerCSIMock creates the mock driver's CSIDriver object with spec,
// starts the driver with extra flags and waits for berth to register it.
func (e *clusterEnv) registerCSIMock(t *testing.T, spec storagev1.CSIDriverSpec, extra ...string) *csiMock {
	t.Helper()
	return e.registerNamedCSIMock(t, csiDriverName, spec, extra...)
}

// registerNamedCSIMock is registerCSIMock for a driver of another name.
func (e *clusterEnv) registerNamedCSIMock(t *testing.T, name string, spec storagev1.CSIDriverSpec, extra ...string) *csiMock {
	t.Helper()
	_, err := e.admin.StorageV1().CSIDrivers().Create(context.Background(), &storagev1.CSIDriver{
		ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec,
	}, metav1.CreateOptions{})
	must(t, err)
	driver := startNamedCSIMock(t, e.node.rootDir, name, extra...)
	e.waitAPI(t, "the driver in the CSINode", func(ctx context.Context) (bool, error) {
		n, err := e.admin.StorageV1().CSINodes().Get(ctx, nodeName, metav1.GetOptions{})
		return err == nil && csiNodeDriver(n, name) != nil, nil
	})
	return driver
}

// csiNodeDriver returns the CSINode's entry of the driver, if any.
func csiNodeDriver(n *storagev1.CSINode, name string) *storagev1.CSINodeDriver {
	for i := range n.Spec.Drivers {
		if n.Spec.Drivers[i].Name == name {
			return &n.Spec.Drivers[i]
		}
	}
	return nil
}

// TestCSIDriverRegistration: berth creates the node's CSINode at start,
// owned by the Node, naming the in-tree plugins it migrates; a CSI driver
// that announces itself in <root-dir>/plugins_registry is registered as
// upstream's kubelet registers it (its CSINode entry with node ID,
// topology keys and volume limit; the Node's node ID annotation and
// topology label); when the driver goes, its entry and annotation go and
// the label stays.
func TestCSIDriverRegistration(t *testing.T) {
	e := startClusterEnv(t)
	e.node.start()
	ctx := context.Background()
	var csiNode *storagev1.CSINode
	e.waitAPI(t, "the node's CSINode", func(ctx context.Context) (bool, error) {
		n, err := e.admin.StorageV1().CSINodes().Get(ctx, nodeName, metav1.GetOptions{})
		csiNode = n
		return err == nil, err
	})
	node, err := e.admin.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	must(t, err)
	if refs := csiNode.OwnerReferences; len(refs) != 1 || refs[0].Kind != "Node" || refs[0].UID != node.UID {
		t.Errorf("CSINode owners %+v, want the Node %s", refs, node.UID)
	}
	if got, want := csiNode.Annotations["storage.alpha.kubernetes.io/migrated-plugins"],
		"kubernetes.io/aws-ebs,kubernetes.io/azure-disk,kubernetes.io/azure-file,kubernetes.io/cinder,kubernetes.io/gce-pd,kubernetes.io/portworx-volume,kubernetes.io/vsphere-volume"; got != want {
		t.Errorf("migrated-plugins annotation %q, want %q", got, want)
	}
	e.waitAPI(t, "the node Ready", func(ctx context.Context) (bool, error) {
		n, err := e.admin.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status == corev1.ConditionTrue, nil
			}
		}
		return false, nil
	})

	driver := startCSIMock(t, e.node.rootDir, "--enable-topology", "--attach-limit", "7", "--disable-attach")
	var entry *storagev1.CSINodeDriver
	e.waitAPI(t, "the driver in the CSINode", func(ctx context.Context) (bool, error) {
		n, err := e.admin.StorageV1().CSINodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		entry = csiNodeDriver(n, csiDriverName)
		return entry != nil, nil
	})
	if entry.NodeID != csiDriverName { // the mock's node ID is its name
		t.Errorf("node ID %q, want %q", entry.NodeID, csiDriverName)
	}
	if len(entry.TopologyKeys) != 1 || entry.TopologyKeys[0] != "io.kubernetes.storage.mock/node" {
		t.Errorf("topology keys %v", entry.TopologyKeys)
	}
	if entry.Allocatable == nil || entry.Allocatable.Count == nil || *entry.Allocatable.Count != 7 {
		t.Errorf("allocatable %+v, want a count of 7", entry.Allocatable)
	}
	node, err = e.admin.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	must(t, err)
	if got, want := node.Annotations["csi.volume.kubernetes.io/nodeid"], `{"`+csiDriverName+`":"`+csiDriverName+`"}`; got != want {
		t.Errorf("node ID annotation %q, want %q", got, want)
	}
	if got := node.Labels["io.kubernetes.storage.mock/node"]; got != "some-mock-node" {
		t.Errorf("topology label %q, want some-mock-node", got)
	}
	calls := driver.calls(t)
	if len(calls) < 3 || calls[0] != "/pluginregistration.Registration/GetInfo" || calls[len(calls)-1] != "/pluginregistration.Registration/NotifyRegistrationStatus" {
		t.Errorf("driver calls %v: want GetInfo first and NotifyRegistrationStatus last", calls)
	}

	driver.stop()
	e.waitAPI(t, "the driver gone from the CSINode", func(ctx context.Context) (bool, error) {
		n, err := e.admin.StorageV1().CSINodes().Get(ctx, nodeName, metav1.GetOptions{})
		return err == nil && csiNodeDriver(n, csiDriverName) == nil, err
	})
	e.waitAPI(t, "the node ID annotation gone", func(ctx context.Context) (bool, error) {
		n, err := e.admin.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		_, ok := n.Annotations["csi.volume.kubernetes.io/nodeid"]
		return !ok && n.Labels["io.kubernetes.storage.mock/node"] == "some-mock-node", nil
	})
}

// csiCall is one line of the mock driver's call log.
type csiCall struct {
	Method  string
	Request map[string]any
}

// nodeCalls returns the driver's node service calls, in order.
func (m *csiMock) nodeCalls(t *testing.T) []csiCall {
	t.Helper()
	data, err := os.ReadFile(m.callLog)
	if os.IsNotExist(err) {
		return nil
	}
	must(t, err)
	var out []csiCall
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var c csiCall
		must(t, json.Unmarshal([]byte(line), &c))
		if strings.HasPrefix(c.Method, "/csi.v1.Node/Node") && c.Method != "/csi.v1.Node/NodeGetCapabilities" && c.Method != "/csi.v1.Node/NodeGetInfo" {
			c.Method = strings.TrimPrefix(c.Method, "/csi.v1.Node/")
			out = append(out, c)
		}
	}
	return out
}

// TestCSIVolumes: with the e2e CSI mock driver registered, a pod with a
// claim bound to a CSI PersistentVolume and an inline CSI volume runs; the
// driver is asked as upstream's kubelet asks (stage, then publish at
// upstream's paths with the pod's information; an inline volume published
// only), the pod writes through both; berth restarted under the running
// pod publishes nothing again; once the pod is deleted the volumes are
// unpublished, then unstaged, and nothing of them is left on disk.
func TestCSIVolumes(t *testing.T) {
	e := startClusterEnv(t)
	e.node.start()
	ctx := context.Background()
	e.waitServiceAccount(t)
	driver := e.registerCSIMock(t, storagev1.CSIDriverSpec{
		AttachRequired: ptr.To(false), PodInfoOnMount: ptr.To(true),
		VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent, storagev1.VolumeLifecycleEphemeral},
	}, "--disable-attach")
	pv := claimVolume("e2e-csi", "e2e-csi", corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
		Driver: csiDriverName, VolumeHandle: "1", FSType: "ext4", VolumeAttributes: map[string]string{"from": "pv"},
	}})
	_, err := e.admin.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
	must(t, err)
	_, err = e.admin.CoreV1().PersistentVolumeClaims("default").Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "csi-data"}, Spec: claimSpec("e2e-csi")}, metav1.CreateOptions{})
	must(t, err)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "csi"},
		Spec: corev1.PodSpec{
			NodeName: nodeName, AutomountServiceAccountToken: ptr.To(false),
			Volumes: []corev1.Volume{
				{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "csi-data"}}},
				{Name: "inline", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{
					Driver: csiDriverName, VolumeAttributes: map[string]string{"from": "inline"}}}},
			},
			Containers: []corev1.Container{{
				Name: "main", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
				Command:      []string{"sh", "-c", "echo pv > /data/out && echo inline > /inline/out && sleep 3600"},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}, {Name: "inline", MountPath: "/inline"}},
			}},
		},
	}
	created, err := e.admin.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	must(t, err)
	uid := string(created.UID)
	running := e.waitPodRunning(t, "csi")
	podDir := filepath.Join(e.node.rootDir, "pods", uid, "volumes", "kubernetes.io~csi")
	for path, want := range map[string]string{filepath.Join(podDir, "e2e-csi", "mount", "out"): "pv\n", filepath.Join(podDir, "inline", "mount", "out"): "inline\n"} {
		e.node.waitFor("the pod's write to "+path, func() bool { got, err := readFile(path); return err == nil && got == want })
	}
	var methods []string
	publishes := map[string]map[string]any{}
	staged := false
	for _, c := range driver.nodeCalls(t) {
		methods = append(methods, c.Method+" "+c.Request["volume_id"].(string))
		switch c.Method {
		case "NodeStageVolume":
			staged = staged || c.Request["volume_id"] == "1"
		case "NodePublishVolume":
			if c.Request["volume_id"] == "1" && !staged {
				t.Errorf("the PV was published before it was staged: %v", methods)
			}
			publishes[c.Request["volume_id"].(string)] = c.Request
		}
	}
	if len(methods) != 3 || len(publishes) != 2 || !staged {
		t.Fatalf("node calls %v, want the PV's stage and a publish of each volume", methods)
	}
	staging := filepath.Join(e.node.rootDir, "plugins", "kubernetes.io", "csi", csiDriverName,
		fmt.Sprintf("%x", sha256.Sum256([]byte("1"))), "globalmount")
	pvPub := publishes["1"]
	if pvPub["staging_target_path"] != staging || pvPub["target_path"] != filepath.Join(podDir, "e2e-csi", "mount") {
		t.Errorf("PV publish paths: staging %v, target %v; want %s and the pod's", pvPub["staging_target_path"], pvPub["target_path"], staging)
	}
	volCtx, _ := pvPub["volume_context"].(map[string]any)
	for k, want := range map[string]string{
		"from": "pv", "csi.storage.k8s.io/pod.name": "csi", "csi.storage.k8s.io/pod.namespace": "default",
		"csi.storage.k8s.io/pod.uid": uid, "csi.storage.k8s.io/serviceAccount.name": "default", "csi.storage.k8s.io/ephemeral": "false",
	} {
		if volCtx[k] != want {
			t.Errorf("PV publish volume context %s = %v, want %q", k, volCtx[k], want)
		}
	}
	inlineHandle := fmt.Sprintf("csi-%x", sha256.Sum256([]byte(uid+"inline")))
	if inl := publishes[inlineHandle]; inl == nil {
		t.Errorf("no publish of the inline volume %s: %v", inlineHandle, publishes)
	} else if c, _ := inl["volume_context"].(map[string]any); c["csi.storage.k8s.io/ephemeral"] != "true" || c["from"] != "inline" {
		t.Errorf("inline publish volume context %v", c)
	}

	// berth restarted under the running pod: nothing published again, no
	// container restarted.
	e.node.stop()
	e.node.start()
	e.node.waitFor("berth synced the pod again", func() bool {
		p, err := e.admin.CoreV1().Pods("default").Get(ctx, "csi", metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning
	})
	time.Sleep(5 * time.Second) // a few syncs
	if n := len(driver.nodeCalls(t)); n != 3 {
		t.Errorf("%d node calls after berth restarted, want still 3: %v", n, driver.nodeCalls(t))
	}
	after, err := e.admin.CoreV1().Pods("default").Get(ctx, "csi", metav1.GetOptions{})
	must(t, err)
	if after.Status.ContainerStatuses[0].RestartCount != 0 || after.Status.ContainerStatuses[0].ContainerID != running.Status.ContainerStatuses[0].ContainerID {
		t.Errorf("the container restarted under berth's restart: %+v", after.Status.ContainerStatuses[0])
	}

	must(t, e.admin.CoreV1().Pods("default").Delete(ctx, "csi", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](1)}))
	e.node.waitFor("the volumes unpublished and unstaged", func() bool { return len(driver.nodeCalls(t)) >= 6 })
	var down []string
	for _, c := range driver.nodeCalls(t)[3:] {
		down = append(down, c.Method+" "+c.Request["volume_id"].(string))
	}
	pvDown := strings.Join(down, ",")
	if len(down) != 3 || !strings.Contains(pvDown, "NodeUnpublishVolume 1,NodeUnstageVolume 1") ||
		!strings.Contains(pvDown, "NodeUnpublishVolume "+inlineHandle) {
		t.Errorf("tear-down calls %v, want the PV unpublished then unstaged, and the inline volume unpublished", down)
	}
	e.node.waitFor("the pod's directory removed", func() bool {
		_, err := os.Stat(filepath.Join(e.node.rootDir, "pods", uid))
		return os.IsNotExist(err)
	})
	if _, err := os.Stat(filepath.Dir(staging)); !os.IsNotExist(err) {
		t.Errorf("the staging directory is left: %v", err)
	}
}

// TestCSIAttach: for a driver whose CSIDriver requires attach, berth waits
// for the VolumeAttachment the attach/detach controller makes (the test
// marks it attached, as an external attacher would, with the device the
// mock driver wants in its publish context), reports the volume in the
// Node's status.volumesInUse while it is mounted, and no longer once the
// pod is gone.
func TestCSIAttach(t *testing.T) {
	e := startClusterEnv(t)
	e.node.start()
	ctx := context.Background()
	e.waitServiceAccount(t)
	driver := e.registerCSIMock(t, storagev1.CSIDriverSpec{AttachRequired: ptr.To(true)})
	_, err := e.admin.CoreV1().PersistentVolumes().Create(ctx, claimVolume("e2e-attach", "e2e-attach", corev1.PersistentVolumeSource{
		CSI: &corev1.CSIPersistentVolumeSource{Driver: csiDriverName, VolumeHandle: "2", FSType: "ext4"}}), metav1.CreateOptions{})
	must(t, err)
	_, err = e.admin.CoreV1().PersistentVolumeClaims("default").Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "attached"}, Spec: claimSpec("e2e-attach")}, metav1.CreateOptions{})
	must(t, err)
	_, err = e.admin.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "attach"},
		Spec: corev1.PodSpec{
			NodeName: nodeName, AutomountServiceAccountToken: ptr.To(false),
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "attached"}}}},
			Containers: []corev1.Container{{
				Name: "main", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
				Command: []string{"sleep", "3600"}, VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
			}},
		},
	}, metav1.CreateOptions{})
	must(t, err)

	var va *storagev1.VolumeAttachment
	e.waitAPI(t, "the controller's VolumeAttachment", func(ctx context.Context) (bool, error) {
		list, err := e.admin.StorageV1().VolumeAttachments().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for i := range list.Items {
			if list.Items[i].Spec.NodeName == nodeName && list.Items[i].Spec.Attacher == csiDriverName {
				va = &list.Items[i]
				return true, nil
			}
		}
		return false, nil
	})
	time.Sleep(3 * time.Second) // berth waits meanwhile
	if calls := driver.nodeCalls(t); len(calls) != 0 {
		t.Fatalf("node calls %v before the volume was attached", calls)
	}
	unique := corev1.UniqueVolumeName("kubernetes.io/csi/" + csiDriverName + "^2")
	va.Status = storagev1.VolumeAttachmentStatus{Attached: true, AttachmentMetadata: map[string]string{"device": "/dev/mock"}}
	_, err = e.admin.StorageV1().VolumeAttachments().UpdateStatus(ctx, va, metav1.UpdateOptions{})
	must(t, err)
	e.waitPodRunning(t, "attach")
	for _, c := range driver.nodeCalls(t) {
		if pc, _ := c.Request["publish_context"].(map[string]any); pc["device"] != "/dev/mock" {
			t.Errorf("%s publish context %v, want the attachment's", c.Method, c.Request["publish_context"])
		}
	}
	e.waitAPI(t, "the volume in status.volumesInUse", func(ctx context.Context) (bool, error) {
		n, err := e.admin.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		return err == nil && slices.Contains(n.Status.VolumesInUse, unique), err
	})

	must(t, e.admin.CoreV1().Pods("default").Delete(ctx, "attach", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](1)}))
	e.waitAPI(t, "the volume gone from status.volumesInUse", func(ctx context.Context) (bool, error) {
		n, err := e.admin.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		return err == nil && !slices.Contains(n.Status.VolumesInUse, unique), err
	})
	var methods []string
	for _, c := range driver.nodeCalls(t) {
		methods = append(methods, c.Method)
	}
	if want := "NodeStageVolume,NodePublishVolume,NodeUnpublishVolume,NodeUnstageVolume"; strings.Join(methods, ",") != want {
		t.Errorf("node calls %v, want %s", methods, want)
	}
}
