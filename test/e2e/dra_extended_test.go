package e2e

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"
	"k8s.io/utils/ptr"
)

// draExtendedResource is the extended resource the DeviceClass of
// TestDRAExtendedResource serves; the node's allocatable has none.
const draExtendedResource = "example.com/dra-gpu"

// draImplicitResource is the same DeviceClass's implicit extended resource
// name (deviceclass.resource.kubernetes.io/<class>).
const draImplicitResource = corev1.ResourceName(resourceapi.ResourceDeviceClassPrefix + "example-extended")

// TestDRAExtendedResource runs a pod asking for an extended resource that
// a DeviceClass serves (spec.extendedResourceName, DRAExtendedResource, GA
// in 1.37) with upstream's DRA test driver, scheduled by the real
// kube-scheduler: the scheduler allocates a claim for it and sets the
// pod's status.extendedResourceClaimStatus; berth admits the pod although
// its allocatable has no such resource (nor the class's implicit name,
// which a second container asks for), prepares the claim once before the
// sandbox, gives each container the CDI environment of its request, lists
// the claim in the pod resources API, and unprepares it once the pod is
// deleted.
func TestDRAExtendedResource(t *testing.T) {
	ctrd := startContainerd2(t)
	env := startClusterEnv(t)
	useRuntime(t, env.node, ctrd.endpoint)
	env.node.start()
	env.waitServiceAccount(t)
	ctx := context.Background()
	startDRADriver(t, env)
	env.waitAPI(t, "the driver's ResourceSlice", func(ctx context.Context) (bool, error) {
		n, err := nodeSlices(ctx, env)
		return n > 0, err
	})
	_, err := env.admin.ResourceV1().DeviceClasses().Create(ctx, &resourceapi.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: "example-extended"},
		Spec: resourceapi.DeviceClassSpec{
			Selectors: []resourceapi.DeviceSelector{{
				CEL: &resourceapi.CELDeviceSelector{Expression: `device.driver == "` + draDriverName + `"`},
			}},
			ExtendedResourceName: ptr.To(draExtendedResource),
		},
	}, metav1.CreateOptions{})
	must(t, err)

	out := t.TempDir()
	one := resource.MustParse("1")
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "dra-extended", Namespace: "default"},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers: []corev1.Container{
				{
					Name: "app", Image: busybox, ImagePullPolicy: corev1.PullNever,
					VolumeMounts: []corev1.VolumeMount{{Name: "out", MountPath: "/out"}},
					Command:      []string{"sh", "-c", "env > /out/env.tmp && mv /out/env.tmp /out/env && exec sleep 3600"},
					Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{draExtendedResource: one}, Limits: corev1.ResourceList{draExtendedResource: one},
					},
				},
				{
					// The class's implicit name, which no node's allocatable
					// has: admission must leave it to DRA.
					Name: "implicit", Image: busybox, ImagePullPolicy: corev1.PullNever,
					VolumeMounts: []corev1.VolumeMount{{Name: "out", MountPath: "/out"}},
					Command:      []string{"sh", "-c", "env > /out/implicit.tmp && mv /out/implicit.tmp /out/implicit && exec sleep 3600"},
					Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{draImplicitResource: one}, Limits: corev1.ResourceList{draImplicitResource: one},
					},
				},
				{Name: "plain", Image: busybox, ImagePullPolicy: corev1.PullNever, Command: []string{"sleep", "3600"}},
			},
			Volumes: []corev1.Volume{{Name: "out", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: out}}}},
		},
	}
	_, err = env.admin.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	must(t, err)
	running := env.waitPodRunning(t, pod.Name)
	st := running.Status.ExtendedResourceClaimStatus
	if st == nil || st.ResourceClaimName == "" || len(st.RequestMappings) != 2 {
		t.Fatalf("the scheduler left status.extendedResourceClaimStatus %+v, want a claim with two request mappings", st)
	}
	requests := map[string]string{} // container: request
	for _, m := range st.RequestMappings {
		requests[m.ContainerName] = m.RequestName
		if want := map[string]string{"app": draExtendedResource, "implicit": string(draImplicitResource)}[m.ContainerName]; m.ResourceName != want {
			t.Errorf("request mapping %+v, want resource %s", m, want)
		}
	}
	// The test driver's CDI device sets claim_<claim>_<request>=true: each
	// container has its own request's and not the other's.
	envVar := func(container string) string {
		return regexp.MustCompile(`[^a-zA-Z0-9]`).ReplaceAllString("claim_"+st.ResourceClaimName+"_"+requests[container], "_") + "=true\n"
	}
	for file, c := range map[string][2]string{"env": {"app", "implicit"}, "implicit": {"implicit", "app"}} {
		env.node.waitFor("the container's environment", func() bool {
			_, err := os.Stat(filepath.Join(out, file))
			return err == nil
		})
		seen, err := os.ReadFile(filepath.Join(out, file))
		must(t, err)
		if !strings.Contains(string(seen), envVar(c[0])) || strings.Contains(string(seen), envVar(c[1])) {
			t.Errorf("container %s's environment: want %s, not %s:\n%s", c[0], envVar(c[0]), envVar(c[1]), seen)
		}
	}
	if n := berthLogCount(t, env.node, "Calling NodePrepareResources"); n != 1 {
		t.Errorf("berth called NodePrepareResources %d times, want once", n)
	}
	state, err := os.ReadFile(filepath.Join(env.node.rootDir, "dra_manager_state"))
	must(t, err)
	if !strings.Contains(string(state), st.ResourceClaimName) {
		t.Errorf("dra_manager_state has no %s: %s", st.ResourceClaimName, state)
	}
	checkExtendedPodResources(t, env, running, st.ResourceClaimName)

	must(t, env.admin.CoreV1().Pods("default").Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}))
	waitClaimUnprepared(t, env, st.ResourceClaimName)
}

// checkExtendedPodResources: the pod resources API's Get lists the
// extended resource claim for each container a request mapping names,
// with all of the claim's devices (upstream's GetContainerClaimInfos: the
// claim, not the container's requests), each with the driver's CDI ID; the
// container no mapping names has none.
func checkExtendedPodResources(t *testing.T, env *clusterEnv, pod *corev1.Pod, claim string) {
	t.Helper()
	conn := dialSocket(t, filepath.Join(env.node.rootDir, "pod-resources", "kubelet.sock"))
	resp, err := podresourcesv1.NewPodResourcesListerClient(conn).Get(context.Background(),
		&podresourcesv1.GetPodResourcesRequest{PodName: pod.Name, PodNamespace: pod.Namespace})
	must(t, err)
	for _, c := range resp.GetPodResources().GetContainers() {
		dr := c.GetDynamicResources()
		if c.GetName() == "plain" {
			if len(dr) != 0 {
				t.Errorf("pod resources of container plain: %v, want none", dr)
			}
			continue
		}
		ok := len(dr) == 1 && dr[0].GetClaimName() == claim && len(dr[0].GetClaimResources()) == 2
		for _, r := range dr[0].GetClaimResources() {
			ok = ok && r.GetDriverName() == draDriverName && len(r.GetCdiDevices()) == 1
		}
		if !ok {
			t.Errorf("pod resources of container %s: %v, want claim %s with its two devices of %s, one CDI ID each", c.GetName(), dr, claim, draDriverName)
		}
	}
}
