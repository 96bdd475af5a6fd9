package e2e

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/test/cluster"
)

// sampleResource is the resource upstream's sample device plugin serves:
// two devices, Dev-1 and Dev-2, each given to a container as a mount of
// the host file /tmp/<device>.
const sampleResource corev1.ResourceName = "example.com/resource"

// fixedDevicePluginDir is where the sample plugin (as every device
// plugin) finds the registration socket, whatever berth's root directory.
const fixedDevicePluginDir = "/var/lib/kubelet/device-plugins"

// TestDevicePlugin runs upstream's sample device plugin
// (tools/deviceplugin) beside a berth node of a real cluster: the node
// advertises its two devices, a pod gets one (its mount visible in the
// container), a pod asking past what is free is refused, berth restarted
// under the pod keeps it running with the same device and the plugin
// registers again, and a restarted plugin registers again.
func TestDevicePlugin(t *testing.T) {
	env := startClusterEnv(t)
	bindDevicePluginDir(t, filepath.Join(env.node.rootDir, "device-plugins"))
	t.Cleanup(func() { // the files the plugin creates for the devices it gives out
		for _, d := range []string{"/tmp/Dev-1", "/tmp/Dev-2"} {
			_ = os.Remove(d)
		}
	})
	env.node.start()
	env.waitServiceAccount(t)
	plugin := startSamplePlugin(t)
	env.waitRegistrations(t, 1)
	env.waitDevices(t, 2, 2)

	ctx := context.Background()
	_, err := env.admin.CoreV1().Pods("default").Create(ctx, devicePod("with-device", 1, ""), metav1.CreateOptions{})
	must(t, err)
	pod := env.waitPodRunning(t, "with-device")
	device, id := podDevice(t, pod)

	// The scheduler would keep it pending: bound by hand, berth refuses it.
	_, err = env.admin.CoreV1().Pods("default").Create(ctx, devicePod("past-capacity", 2, nodeName), metav1.CreateOptions{})
	must(t, err)
	refused := env.waitPodPhase(t, "past-capacity", corev1.PodFailed)
	// The status message is upstream's rejectPod's: "Pod was rejected: "
	// and the admit handler's message.
	want := "Pod was rejected: Allocate failed due to requested number of devices unavailable for example.com/resource. Requested: 2, Available: 1, which is unexpected"
	if refused.Status.Reason != "UnexpectedAdmissionError" || refused.Status.Message != want {
		t.Errorf("refused pod: reason %q message %q; want UnexpectedAdmissionError %q", refused.Status.Reason, refused.Status.Message, want)
	}

	env.node.stop()
	env.node.start()
	env.waitRegistrations(t, 2) // the plugin saw the new registration socket
	env.waitDevices(t, 2, 2)
	after := env.waitPodRunning(t, "with-device")
	if d, i := podDevice(t, after); d != device || i != id || after.Status.ContainerStatuses[0].RestartCount != 0 {
		t.Errorf("after berth restarted: device %s container %s restarts %d; want %s %s 0", d, i, after.Status.ContainerStatuses[0].RestartCount, device, id)
	}
	cp, err := os.ReadFile(filepath.Join(env.node.rootDir, "device-plugins", "kubelet_internal_checkpoint"))
	must(t, err)
	if !strings.Contains(string(cp), string(pod.UID)) || !strings.Contains(string(cp), device) {
		t.Errorf("checkpoint lacks the pod's assignment of %s:\n%s", device, cp)
	}

	plugin.stop()
	env.waitDevices(t, 2, 0) // gone: capacity kept for the grace period, nothing allocatable
	startSamplePlugin(t)
	env.waitRegistrations(t, 3)
	env.waitDevices(t, 2, 2)
	must(t, env.admin.CoreV1().Pods("default").Delete(ctx, "with-device", metav1.DeleteOptions{}))
	must(t, env.admin.CoreV1().Pods("default").Delete(ctx, "past-capacity", metav1.DeleteOptions{}))
}

// bindDevicePluginDir makes fixedDevicePluginDir the node's device plugin
// directory for the test: a bind mount of dir, created for it, undone (and
// the directories it created removed) at the end. It refuses to hide a
// directory some kubelet uses.
func bindDevicePluginDir(t *testing.T, dir string) {
	t.Helper()
	must(t, os.MkdirAll(dir, 0o750))
	var created []string
	for d := fixedDevicePluginDir; d != "/"; d = filepath.Dir(d) {
		if _, err := os.Stat(d); errors.Is(err, fs.ErrNotExist) {
			created = append(created, d)
		}
	}
	// A kubelet serving there now would lose its plugins under the bind
	// mount; files a stopped one left (make bench's, make soak's) are only
	// hidden for the test.
	if conn, err := net.DialTimeout("unix", filepath.Join(fixedDevicePluginDir, "kubelet.sock"), time.Second); err == nil {
		conn.Close()
		t.Fatalf("%s is in use: a kubelet serves its kubelet.sock on this host", fixedDevicePluginDir)
	}
	must(t, os.MkdirAll(fixedDevicePluginDir, 0o750))
	must(t, syscall.Mount(dir, fixedDevicePluginDir, "", syscall.MS_BIND, ""))
	t.Cleanup(func() {
		if err := syscall.Unmount(fixedDevicePluginDir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", fixedDevicePluginDir, err)
		}
		for _, d := range created { // deepest first
			if err := os.Remove(d); err != nil {
				t.Errorf("remove %s: %v", d, err)
			}
		}
	})
}

// samplePlugin is upstream's sample device plugin running on the host.
type samplePlugin struct {
	cmd *exec.Cmd
}

func startSamplePlugin(t *testing.T) *samplePlugin {
	t.Helper()
	bin, err := cluster.ResolveBinDir("")
	must(t, err)
	bin = filepath.Join(bin, "sample-device-plugin")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("sample-device-plugin binary: %v (run `make cluster-tools`)", err)
	}
	logFile, err := os.CreateTemp("", "sample-device-plugin-*.log")
	must(t, err)
	p := &samplePlugin{cmd: exec.Command(bin)}
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	must(t, p.cmd.Start())
	t.Cleanup(func() {
		p.stop()
		logFile.Close()
		if t.Failed() {
			if b, err := os.ReadFile(logFile.Name()); err == nil {
				t.Logf("sample device plugin log:\n%s", b)
			}
		}
		os.Remove(logFile.Name())
	})
	return p
}

// stop ends the plugin with SIGTERM: it stops serving and removes its
// socket.
func (p *samplePlugin) stop() {
	if p.cmd.ProcessState != nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	_ = p.cmd.Wait()
}

// waitRegistrations waits for berth's log (all its runs) to show n
// device plugin registrations.
func (e *clusterEnv) waitRegistrations(t *testing.T, n int) {
	t.Helper()
	e.node.waitFor("device plugin registrations", func() bool {
		b, err := os.ReadFile(e.node.logPath)
		return err == nil && strings.Count(string(b), "Got registration request from device plugin") >= n
	})
}

// waitDevices waits for the Node to show the sample resource at capacity
// and allocatable.
func (e *clusterEnv) waitDevices(t *testing.T, capacity, allocatable int64) {
	t.Helper()
	e.waitAPI(t, "node's example.com/resource", func(ctx context.Context) (bool, error) {
		n, err := e.admin.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c, a := n.Status.Capacity[sampleResource], n.Status.Allocatable[sampleResource]
		return c.Value() == capacity && a.Value() == allocatable, nil
	})
}

func (e *clusterEnv) waitPodPhase(t *testing.T, name string, phase corev1.PodPhase) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	e.waitAPI(t, "pod "+name+" "+string(phase), func(ctx context.Context) (bool, error) {
		p, err := e.admin.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		pod = p
		return p.Status.Phase == phase, nil
	})
	return pod
}

// devicePod asks for n sample devices; its container runs only if a
// device's file is mounted in it. nodeName binds it without the
// scheduler.
func devicePod(name string, n int64, nodeName string) *corev1.Pod {
	l := corev1.ResourceList{sampleResource: *resource.NewQuantity(n, resource.DecimalSI)}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{
			NodeName:                      nodeName,
			AutomountServiceAccountToken:  ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []corev1.Container{{
				Name: "app", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
				Command:   []string{"sh", "-c", "ls /tmp/Dev-* && exec sleep 3600"},
				Resources: corev1.ResourceRequirements{Limits: l, Requests: l},
			}},
		},
	}
}

// podDevice is the sample device mounted in the pod's container, from the
// runtime's view of it, and the container's ID.
func podDevice(t *testing.T, pod *corev1.Pod) (device, id string) {
	t.Helper()
	c := runtimeClient(t)
	_, cs := runtimeObjects(t, c, string(pod.UID))
	for _, ctr := range cs {
		if ctr.GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING {
			continue
		}
		st, err := c.Runtime.ContainerStatus(context.Background(), &runtimeapi.ContainerStatusRequest{ContainerId: ctr.GetId()})
		must(t, err)
		for _, m := range st.GetStatus().GetMounts() {
			if strings.HasPrefix(m.GetContainerPath(), "/tmp/Dev-") {
				if device != "" {
					t.Errorf("container %s has two sample devices", ctr.GetId())
				}
				device, id = strings.TrimPrefix(m.GetContainerPath(), "/tmp/"), "containerd://"+ctr.GetId()
			}
		}
	}
	if device == "" {
		t.Fatalf("no running container of pod %s mounts a sample device", pod.Name)
	}
	return device, id
}
