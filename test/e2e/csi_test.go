package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
	args := append([]string{"--name", csiDriverName, "--csi-address", filepath.Join(dir, "csi.sock"),
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
