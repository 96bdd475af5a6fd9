package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/test/cluster"
)

// draDriverName is the name upstream's test driver uses by default.
const draDriverName = "test-driver.cdi.k8s.io"

// draDriver is upstream's DRA test driver (tools/dradriver) in its
// kubelet-plugin mode beside berth: it registers in berth's
// plugins_registry, publishes the node's ResourceSlices with the admin's
// kubeconfig and writes its CDI specs to /var/run/cdi, where containerd 2
// reads them.
type draDriver struct {
	cmd *exec.Cmd
	log string
}

func startDRADriver(t *testing.T, env *clusterEnv) *draDriver {
	t.Helper()
	bin, err := cluster.ResolveBinDir("")
	must(t, err)
	bin = filepath.Join(bin, "dra-test-driver")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("dra-test-driver binary: %v (run `make cluster-tools`)", err)
	}
	dir, err := os.MkdirTemp("", "dra")
	must(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	// The driver makes the parent of its socket directory, not the
	// directory (upstream's deployment mounts it).
	must(t, os.MkdirAll(filepath.Join(dir, draDriverName), 0o750))
	d := &draDriver{log: filepath.Join(dir, "driver.log")}
	logFile, err := os.OpenFile(d.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	must(t, err)
	d.cmd = exec.Command(bin, "--kubeconfig", env.cl.AdminKubeconfig(), "-v", "5", "kubelet-plugin",
		"--node-name", nodeName, "--plugin-registration-path", filepath.Join(env.node.rootDir, "plugins_registry"),
		"--datadir", dir, "--cdi-dir", "/var/run/cdi")
	d.cmd.Stdout, d.cmd.Stderr = logFile, logFile
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	must(t, d.cmd.Start())
	t.Cleanup(func() {
		d.stop()
		logFile.Close()
		if t.Failed() {
			if b, err := os.ReadFile(d.log); err == nil {
				t.Logf("DRA test driver log:\n%s", b)
			}
		}
	})
	return d
}

// stop ends the driver (SIGTERM: it removes its sockets).
func (d *draDriver) stop() {
	if d.cmd.ProcessState != nil {
		return
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	_ = d.cmd.Wait()
}

// draObjects creates the DeviceClass of the driver's devices and a
// ResourceClaimTemplate whose opaque parameters {"a": "b"} the driver's
// CDI device sets as user_a=b.
func draObjects(t *testing.T, env *clusterEnv) {
	t.Helper()
	ctx := context.Background()
	_, err := env.admin.ResourceV1().DeviceClasses().Create(ctx, &resourceapi.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: "example"},
		Spec: resourceapi.DeviceClassSpec{Selectors: []resourceapi.DeviceSelector{{
			CEL: &resourceapi.CELDeviceSelector{Expression: `device.driver == "` + draDriverName + `"`},
		}}},
	}, metav1.CreateOptions{})
	must(t, err)
	_, err = env.admin.ResourceV1().ResourceClaimTemplates("default").Create(ctx, &resourceapi.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu"},
		Spec: resourceapi.ResourceClaimTemplateSpec{Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{
			Requests: []resourceapi.DeviceRequest{{Name: "dev", Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: "example"}}},
			Config: []resourceapi.DeviceClaimConfiguration{{DeviceConfiguration: resourceapi.DeviceConfiguration{
				Opaque: &resourceapi.OpaqueDeviceConfiguration{Driver: draDriverName, Parameters: runtime.RawExtension{Raw: []byte(`{"a":"b"}`)}},
			}}},
		}}},
	}, metav1.CreateOptions{})
	must(t, err)
}

// draPod is a pod of the template's claim: an init container waits for
// the file go in out (so berth can be restarted between the claim's
// preparation and the container's start), then the container writes its
// environment to out/env and sleeps.
func draPod(name, out string) *corev1.Pod {
	mount := []corev1.VolumeMount{{Name: "out", MountPath: "/out"}}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			InitContainers: []corev1.Container{{
				Name: "wait", Image: busybox, ImagePullPolicy: corev1.PullNever, VolumeMounts: mount,
				Command: []string{"sh", "-c", "while [ ! -f /out/go ]; do sleep 0.2; done"},
			}},
			Containers: []corev1.Container{{
				Name: "app", Image: busybox, ImagePullPolicy: corev1.PullNever, VolumeMounts: mount,
				Command:   []string{"sh", "-c", "env > /out/env.tmp && mv /out/env.tmp /out/env && exec sleep 3600"},
				Resources: corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: "gpu"}}},
			}},
			ResourceClaims: []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To("gpu")}},
			Volumes:        []corev1.Volume{{Name: "out", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: out}}}},
		},
	}
}

// berthLogCount counts the lines of berth's log that contain s.
func berthLogCount(t *testing.T, n *node, s string) int {
	t.Helper()
	b, err := os.ReadFile(n.logPath)
	must(t, err)
	return strings.Count(string(b), s)
}

// waitClaimUnprepared waits for the claim to leave dra_manager_state,
// which berth writes once the driver's NodeUnprepareResources returned
// (so the call's log line comes first, and reading the checkpoint right
// after it races with the write), and checks that the driver was called.
func waitClaimUnprepared(t *testing.T, env *clusterEnv, claim string) {
	t.Helper()
	env.waitAPI(t, "the claim unprepared and out of dra_manager_state", func(context.Context) (bool, error) {
		state, err := os.ReadFile(filepath.Join(env.node.rootDir, "dra_manager_state"))
		return err == nil && !strings.Contains(string(state), claim), err
	})
	if berthLogCount(t, env.node, "Calling NodeUnprepareResources") < 1 {
		t.Errorf("the claim %s left dra_manager_state without a NodeUnprepareResources call", claim)
	}
}

// nodeSlices counts the driver's ResourceSlices of the node.
func nodeSlices(ctx context.Context, env *clusterEnv) (int, error) {
	l, err := env.admin.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{
		FieldSelector: resourceapi.ResourceSliceSelectorNodeName + "=" + nodeName + "," + resourceapi.ResourceSliceSelectorDriver + "=" + draDriverName,
	})
	if err != nil {
		return 0, err
	}
	return len(l.Items), nil
}

// TestDRA runs upstream's DRA test driver with berth on containerd 2 and
// the scheduler: the driver registers and publishes its slices; a pod of
// a ResourceClaimTemplate is scheduled, its generated claim allocated and
// prepared before its sandbox, and its container sees the CDI
// environment the driver wrote; berth killed between the preparation and
// the container's start and started again prepares nothing twice (the
// checkpoint gives the container its CDI device); berth follows the
// driver's health stream and the container's status shows its claim's
// device (checkDRAHealth); the claim is unprepared once the pod is
// deleted; the driver gone has its slices wiped 30 s later. Last, on
// containerd 1.6 (no CDI), a pod's container that needs a CDI device
// waits with a CreateContainerConfigError saying so.
func TestDRA(t *testing.T) {
	ctrd := startContainerd2(t)
	env := startClusterEnv(t)
	useRuntime(t, env.node, ctrd.endpoint)
	env.node.start()
	env.waitServiceAccount(t)
	ctx := context.Background()
	driver := startDRADriver(t, env)
	env.waitAPI(t, "the driver's ResourceSlice", func(ctx context.Context) (bool, error) {
		n, err := nodeSlices(ctx, env)
		return n > 0, err
	})
	draObjects(t, env)

	out := t.TempDir()
	_, err := env.admin.CoreV1().Pods("default").Create(ctx, draPod("dra", out), metav1.CreateOptions{})
	must(t, err)
	env.waitAPI(t, "the claim prepared", func(context.Context) (bool, error) {
		return berthLogCount(t, env.node, "Calling NodePrepareResources") >= 1, nil
	})
	env.node.waitFor("the init container running", func() bool {
		p, err := env.admin.CoreV1().Pods("default").Get(ctx, "dra", metav1.GetOptions{})
		return err == nil && len(p.Status.InitContainerStatuses) == 1 && p.Status.InitContainerStatuses[0].State.Running != nil
	})
	// Killed, not stopped: the checkpoint is all the next run has.
	must(t, env.node.cmd.Process.Kill())
	<-env.node.exited
	env.node.start()
	must(t, os.WriteFile(filepath.Join(out, "go"), nil, 0o644))
	pod := env.waitPodRunning(t, "dra")
	env.node.waitFor("the container's environment", func() bool {
		_, err := os.Stat(filepath.Join(out, "env"))
		return err == nil
	})
	seen, err := os.ReadFile(filepath.Join(out, "env"))
	must(t, err)
	claim := *pod.Status.ResourceClaimStatuses[0].ResourceClaimName
	for _, want := range []string{"user_a=b", "claim_" + strings.ReplaceAll(claim, "-", "_") + "_dev=true"} {
		if !strings.Contains(string(seen), want+"\n") {
			t.Errorf("the container's environment has no %s:\n%s", want, seen)
		}
	}
	if n := berthLogCount(t, env.node, "Calling NodePrepareResources"); n != 1 {
		t.Errorf("berth called NodePrepareResources %d times, want once (the restart prepares nothing again)", n)
	}
	checkDRAHealth(t, env, pod)

	must(t, env.admin.CoreV1().Pods("default").Delete(ctx, "dra", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}))
	waitClaimUnprepared(t, env, claim)

	driver.stop()
	env.waitAPI(t, "the driver's slices wiped", func(ctx context.Context) (bool, error) {
		n, err := nodeSlices(ctx, env)
		return n == 0, err
	})
	testDRAOnContainerd16(t, env)
}

// checkDRAHealth: berth opens the driver's DRAResourceHealth stream (v1,
// which the driver lists beside v1alpha1) and the pod's status shows its
// claim's device as upstream's kubelet would for the driver's reports:
// the test driver reports no device (its health map is filled only in
// process), so the device reads Unknown, its ID the device's CDI ID
// (claim-<claim UID>-<request>), under "claim:<pod claim name>" in the
// container that uses the claim; the init container has none.
func checkDRAHealth(t *testing.T, env *clusterEnv, pod *corev1.Pod) {
	t.Helper()
	ctx := context.Background()
	env.waitAPI(t, "the driver's health stream", func(context.Context) (bool, error) {
		return berthLogCount(t, env.node, "Opened the DRA health stream") >= 1, nil
	})
	if berthLogCount(t, env.node, `healthService="v1.DRAResourceHealth"`) == 0 {
		t.Errorf("berth's log shows no health stream over v1.DRAResourceHealth")
	}
	claim, err := env.admin.ResourceV1().ResourceClaims("default").Get(ctx, *pod.Status.ResourceClaimStatuses[0].ResourceClaimName, metav1.GetOptions{})
	must(t, err)
	want := []corev1.ResourceStatus{{Name: "claim:gpu", Resources: []corev1.ResourceHealth{{
		ResourceID: corev1.ResourceID(draDriverName + "/test=claim-" + string(claim.UID) + "-dev"), Health: corev1.ResourceHealthStatusUnknown,
	}}}}
	var got *corev1.Pod
	env.waitAPI(t, "the claim's device health in the pod's status", func(ctx context.Context) (bool, error) {
		got, err = env.admin.CoreV1().Pods("default").Get(ctx, pod.Name, metav1.GetOptions{})
		return err == nil && len(got.Status.ContainerStatuses) == 1 && len(got.Status.ContainerStatuses[0].AllocatedResourcesStatus) > 0, err
	})
	if diff := cmp.Diff(want, got.Status.ContainerStatuses[0].AllocatedResourcesStatus); diff != "" {
		t.Errorf("the container's allocatedResourcesStatus (-want +got):\n%s", diff)
	}
	for _, c := range got.Status.InitContainerStatuses {
		if len(c.AllocatedResourcesStatus) > 0 {
			t.Errorf("init container %s shows allocatedResourcesStatus %v, want none (upstream sets containerStatuses only)", c.Name, c.AllocatedResourcesStatus)
		}
	}
}

// testDRAOnContainerd16 moves berth to the host's containerd 1.6, starts
// the driver again and creates a pod of the template: its sandbox runs,
// its container does not, saying why.
func testDRAOnContainerd16(t *testing.T, env *clusterEnv) {
	ctx := context.Background()
	env.node.stop()
	useRuntimeBack(t, env.node)
	env.node.start()
	startDRADriver(t, env)
	env.waitAPI(t, "the driver's ResourceSlice again", func(ctx context.Context) (bool, error) {
		n, err := nodeSlices(ctx, env)
		return n > 0, err
	})
	out := t.TempDir()
	must(t, os.WriteFile(filepath.Join(out, "go"), nil, 0o644))
	_, err := env.admin.CoreV1().Pods("default").Create(ctx, draPod("dra16", out), metav1.CreateOptions{})
	must(t, err)
	const want = "the container runtime does not apply CDI devices"
	env.waitAPI(t, "the container refused for want of CDI", func(ctx context.Context) (bool, error) {
		p, err := env.admin.CoreV1().Pods("default").Get(ctx, "dra16", metav1.GetOptions{})
		if err != nil || len(p.Status.ContainerStatuses) != 1 {
			return false, err
		}
		w := p.Status.ContainerStatuses[0].State.Waiting
		return w != nil && w.Reason == "CreateContainerConfigError" && strings.Contains(w.Message, want), nil
	})
	must(t, env.admin.CoreV1().Pods("default").Delete(ctx, "dra16", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}))
	env.waitAPI(t, "the pod gone", func(ctx context.Context) (bool, error) {
		_, err := env.admin.CoreV1().Pods("default").Get(ctx, "dra16", metav1.GetOptions{})
		return err != nil, nil
	})
}

// useRuntimeBack points the node's configuration at the host's containerd
// again (useRuntime moved it).
func useRuntimeBack(t *testing.T, n *node) {
	t.Helper()
	data, err := os.ReadFile(n.config)
	must(t, err)
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "containerRuntimeEndpoint: ") {
			lines[i] = "containerRuntimeEndpoint: " + criEndpoint
		}
	}
	must(t, os.WriteFile(n.config, []byte(strings.Join(lines, "\n")), 0o644))
}
