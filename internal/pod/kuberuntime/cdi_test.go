package kuberuntime

import (
	"errors"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestAppliesCDI(t *testing.T) {
	for _, tc := range []struct {
		name, version string
		want          bool
	}{
		{"containerd", "v1.6.20", false},
		{"containerd", "1.6.38", false},
		{"containerd", "v1.7.0", true},
		{"containerd", "v2.1.4", true},
		{"containerd", "2.0.0-rc.1", true},
		{"containerd", "unknown", true},
		{"cri-o", "1.20.0", true},
	} {
		if got := AppliesCDI(tc.name, tc.version); got != tc.want {
			t.Errorf("AppliesCDI(%q, %q) = %v, want %v", tc.name, tc.version, got, tc.want)
		}
	}
}

// claimDevices is a DRA manager that gives the container "app" of pod
// uid-1 two CDI devices, or fails.
type claimDevices struct{ err error }

func (c claimDevices) CDIDevices(pod *corev1.Pod, ctr *corev1.Container) ([]string, error) {
	if c.err != nil {
		return nil, c.err
	}
	if pod.UID == "uid-1" && ctr.Name == "app" {
		return []string{"example.com/gpu=a", "example.com/gpu=b"}, nil
	}
	return nil, nil
}

func claimsPod() *corev1.Pod {
	pod := basePod()
	pod.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To("gpu-claim")}}
	pod.Spec.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
	return pod
}

func TestContainersGetTheirClaimsCDIDevices(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.Claims = claimDevices{}
	})
	e.fake.AddImage("busybox:1.36")
	pod := claimsPod()
	if f := e.sync(pod); len(f) != 0 {
		t.Fatalf("failures %+v", f)
	}
	cfgs := e.fake.ContainerConfigs()
	if len(cfgs) != 1 {
		t.Fatalf("%d containers created, want 1", len(cfgs))
	}
	var got []string
	for _, d := range cfgs[0].GetCDIDevices() {
		got = append(got, d.GetName())
	}
	if want := []string{"example.com/gpu=a", "example.com/gpu=b"}; !slices.Equal(got, want) {
		t.Errorf("CDIDevices %q, want %q", got, want)
	}
}

// TestExtendedResourceContainersGetCDIDevices: a container that names no
// claim but whose extended resource the pod's extended resource claim
// serves (a RequestMapping names it) asks the DRA manager for its devices.
func TestExtendedResourceContainersGetCDIDevices(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.Claims = claimDevices{}
	})
	e.fake.AddImage("busybox:1.36")
	pod := basePod()
	pod.Status.ExtendedResourceClaimStatus = &corev1.PodExtendedResourceClaimStatus{ResourceClaimName: "x-extended-resources-1",
		RequestMappings: []corev1.ContainerExtendedResourceRequest{{ContainerName: "app", ResourceName: "example.com/gpu", RequestName: "container-0-request-0"}}}
	if f := e.sync(pod); len(f) != 0 {
		t.Fatalf("failures %+v", f)
	}
	cfgs := e.fake.ContainerConfigs()
	if len(cfgs) != 1 || len(cfgs[0].GetCDIDevices()) != 2 {
		t.Fatalf("container configs %v, want one with the claim's 2 CDI devices", cfgs)
	}
}

func TestContainersWithoutTheirCDIDevicesDoNotStart(t *testing.T) {
	for name, tc := range map[string]struct {
		opt  func(*Config)
		want string
	}{
		"no DRA manager":   {func(*Config) {}, "without a DRA manager"},
		"claim unprepared": {func(c *Config) { c.Claims = claimDevices{err: errors.New("unable to get claim info")} }, "unable to get claim info"},
		"containerd 1.6":   {func(c *Config) { c.Claims, c.RuntimeDropsCDI = claimDevices{}, true }, "the container runtime does not apply CDI devices"},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, tc.opt)
			e.fake.AddImage("busybox:1.36")
			f := e.sync(claimsPod())["app"]
			if f.Reason != ReasonCreateContainerConfigError || !strings.Contains(f.Message, tc.want) {
				t.Errorf("failure %+v, want CreateContainerConfigError saying %q", f, tc.want)
			}
			if n := len(e.fake.ContainerConfigs()); n != 0 {
				t.Errorf("%d containers created, want none", n)
			}
		})
	}
}
