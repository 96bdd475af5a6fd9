package kuberuntime

import (
	"context"
	"errors"
	"slices"
	"testing"

	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/node/devicemanager"
)

// imageStatusFunc is a runtimeapi.ImageServiceClient whose ImageStatus
// answers with a fixed image; other methods are not called.
type imageStatusFunc struct {
	runtimeapi.ImageServiceClient
	image *runtimeapi.Image
	calls int
}

func (f *imageStatusFunc) ImageStatus(context.Context, *runtimeapi.ImageStatusRequest, ...grpc.CallOption) (*runtimeapi.ImageStatusResponse, error) {
	f.calls++
	return &runtimeapi.ImageStatusResponse{Image: f.image}, nil
}

func TestCheckNonRootAsksForTheImageUserOnlyWhenNeeded(t *testing.T) {
	tru, user := true, int64(1000)
	tests := []struct {
		name      string
		sc        *corev1.SecurityContext
		image     *runtimeapi.Image
		wantCalls int
		wantErr   bool
	}{
		{name: "no runAsNonRoot", image: &runtimeapi.Image{}},
		{name: "runAsUser set", sc: &corev1.SecurityContext{RunAsNonRoot: &tru, RunAsUser: &user}, image: &runtimeapi.Image{}},
		{name: "root image", sc: &corev1.SecurityContext{RunAsNonRoot: &tru}, image: &runtimeapi.Image{}, wantCalls: 1, wantErr: true},
		{name: "non-root image", sc: &corev1.SecurityContext{RunAsNonRoot: &tru}, image: &runtimeapi.Image{Uid: &runtimeapi.Int64Value{Value: 7}}, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			images := &imageStatusFunc{image: tt.image}
			m := &Manager{cfg: Config{Images: images}}
			pod := basePod()
			pod.Spec.Containers[0].SecurityContext = tt.sc
			err := m.checkNonRoot(context.Background(), pod, &pod.Spec.Containers[0], "sha256:abc")
			if (err != nil) != tt.wantErr || images.calls != tt.wantCalls {
				t.Errorf("checkNonRoot = %v with %d ImageStatus calls, want error %v with %d", err, images.calls, tt.wantErr, tt.wantCalls)
			}
		})
	}
}

func TestSyncPodRunAsNonRootRootImage(t *testing.T) {
	e := newEnv(t)
	e.fake.AddImage("busybox:1.36") // the fake's images run as root
	pod := basePod()
	pod.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)}
	const msg = `container has runAsNonRoot and image will run as root (pod: "web_default(uid-1)", container: app)`
	f := e.sync(pod)["app"]
	if f.Reason != ReasonCreateContainerConfigError || f.Message != msg {
		t.Errorf("failure = %+v", f)
	}
	if evs := e.events.take(); !hasEvent(evs, "Warning Failed Error: "+msg) {
		t.Errorf("events %q lack the Failed event", evs)
	}
	pod.Spec.SecurityContext.RunAsUser = ptr.To[int64](1000)
	if f := e.sync(pod); len(f) != 0 {
		t.Errorf("with runAsUser 1000: failures %+v", f)
	}
	e.running(pod, "app")
}

// cpus is a CPU manager that pins every container of pod uid-1 to 1.
type cpus struct{}

func (cpus) CPUSet(podUID, container string) string {
	if podUID == "uid-1" {
		return "1"
	}
	return ""
}

func TestContainersGetTheCPUManagersCPUSet(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Assigners.CPUs = cpus{} })
	e.fake.AddImage("busybox:1.36")
	pod := basePod()
	if f := e.sync(pod); len(f) != 0 {
		t.Fatalf("failures %+v", f)
	}
	e.running(pod, "app")
	for _, c := range e.fake.Containers() {
		if got := c.GetResources().GetLinux().GetCpusetCpus(); got != "1" {
			t.Errorf("container %s created with cpuset %q, want 1", c.GetMetadata().GetName(), got)
		}
	}
}

// memory is a memory manager that binds every container of pod uid-1 to
// NUMA nodes 0 and 1.
type memory struct{}

func (memory) CPUSetMems(podUID, container string) string {
	if podUID == "uid-1" {
		return "0,1"
	}
	return ""
}

func TestContainersGetTheMemoryManagersNUMANodes(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Assigners.Memory = memory{} })
	e.fake.AddImage("busybox:1.36")
	pod := basePod()
	if f := e.sync(pod); len(f) != 0 {
		t.Fatalf("failures %+v", f)
	}
	e.running(pod, "app")
	for _, c := range e.fake.Containers() {
		if got := c.GetResources().GetLinux().GetCpusetMems(); got != "0,1" {
			t.Errorf("container %s created with cpuset.mems %q, want 0,1", c.GetMetadata().GetName(), got)
		}
	}
}

// devices is a device manager that gives container app of pod uid-1 a
// device with its environment, mount, device node, annotation and CDI
// device, or fails with err.
type devices struct{ err error }

func (d devices) ContainerOptions(_ context.Context, pod *corev1.Pod, c *corev1.Container) (devicemanager.ContainerOptions, error) {
	if d.err != nil {
		return devicemanager.ContainerOptions{}, d.err
	}
	if pod.UID != "uid-1" || c.Name != "app" {
		return devicemanager.ContainerOptions{}, nil
	}
	return devicemanager.ContainerOptions{
		Envs:        kv("DEVICE", "dev-1", "SHARED", "plugin"),
		Mounts:      []*runtimeapi.Mount{{HostPath: "/tmp/dev-1", ContainerPath: "/tmp/dev-1"}},
		Devices:     []*runtimeapi.Device{{HostPath: "/dev/null", ContainerPath: "/dev/fake", Permissions: "rw"}},
		Annotations: map[string]string{"example.com/device": "dev-1", "io.kubernetes.container.restartCount": "99"},
		CDIDevices:  []*runtimeapi.CDIDevice{{Name: "example.com/resource=dev-1"}},
	}, nil
}

// TestContainersGetTheirDevicePluginDevices: the device plugin's options
// come before the container's own environment, mounts and devices (its
// own variables win), its annotations under the kubelet's, and its CDI
// devices; a failure is a CreateContainerConfigError.
func TestContainersGetTheirDevicePluginDevices(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Assigners.Devices = devices{} })
	e.fake.AddImage("busybox:1.36")
	pod := basePod()
	pod.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "SHARED", Value: "own"}}
	pod.Spec.Containers[0].Args = []string{"$(DEVICE)"}
	if f := e.sync(pod); len(f) != 0 {
		t.Fatalf("failures %+v", f)
	}
	cfgs := e.fake.ContainerConfigs()
	if len(cfgs) != 1 {
		t.Fatalf("%d containers created, want 1", len(cfgs))
	}
	cfg := cfgs[0]
	var env []string
	for _, kv := range cfg.GetEnvs() {
		env = append(env, kv.GetKey()+"="+string(kv.GetValue()))
	}
	if len(env) < 3 || env[0] != "DEVICE=dev-1" || env[1] != "SHARED=plugin" || !slices.Contains(env, "SHARED=own") ||
		slices.Index(env, "SHARED=own") < 2 {
		t.Errorf("env = %q, want the plugin's first, the container's after", env)
	}
	if got := cfg.GetArgs(); len(got) != 1 || got[0] != "dev-1" {
		t.Errorf("args = %q, want $(DEVICE) expanded to dev-1", got)
	}
	if m := cfg.GetMounts(); len(m) == 0 || m[0].GetContainerPath() != "/tmp/dev-1" {
		t.Errorf("mounts = %v, want the device's first", m)
	}
	if d := cfg.GetDevices(); len(d) != 1 || d[0].GetContainerPath() != "/dev/fake" || d[0].GetPermissions() != "rw" {
		t.Errorf("devices = %v", d)
	}
	a := cfg.GetAnnotations()
	if a["example.com/device"] != "dev-1" || a["io.kubernetes.container.restartCount"] != "0" {
		t.Errorf("annotations = %v, want the plugin's beside the kubelet's, which win", a)
	}
	if c := cfg.GetCDIDevices(); len(c) != 1 || c[0].GetName() != "example.com/resource=dev-1" {
		t.Errorf("CDI devices = %v", c)
	}

	failing := newEnv(t, func(c *Config) { c.Assigners.Devices = devices{err: errors.New("no devices found")} })
	failing.fake.AddImage("busybox:1.36")
	if f := failing.sync(basePod())["app"]; f.Reason != ReasonCreateContainerConfigError || f.Message != "no devices found" {
		t.Errorf("failure = %+v, want CreateContainerConfigError", f)
	}
}
