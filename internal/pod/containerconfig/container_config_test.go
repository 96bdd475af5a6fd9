package containerconfig

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func baseContainerConfig() *runtimeapi.ContainerConfig {
	return &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "app", Attempt: 2},
		Image:    &runtimeapi.ImageSpec{Image: "sha256:abc", UserSpecifiedImage: "busybox:1.36"},
		Labels: map[string]string{
			"io.kubernetes.pod.name": "web", "io.kubernetes.pod.namespace": "default", "io.kubernetes.pod.uid": "uid-1",
			"io.kubernetes.container.name": "app",
		},
		Annotations: map[string]string{
			"io.kubernetes.container.hash":                     "1f",
			"io.kubernetes.container.restartCount":             "2",
			"io.kubernetes.container.terminationMessagePath":   "/dev/termination-log",
			"io.kubernetes.container.terminationMessagePolicy": "File",
			"io.kubernetes.container.type":                     "container",
			"io.kubernetes.pod.terminationGracePeriod":         "30",
		},
		LogPath: "app/2.log",
		Mounts:  []*runtimeapi.Mount{{HostPath: "/pods/uid-1/containers/app/2", ContainerPath: "/dev/termination-log"}},
		Linux: &runtimeapi.LinuxContainerConfig{
			Resources: &runtimeapi.LinuxContainerResources{CpuShares: 2, CpuPeriod: 100000, OomScoreAdj: 1000},
			SecurityContext: &runtimeapi.LinuxContainerSecurityContext{
				NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD, Pid: runtimeapi.NamespaceMode_CONTAINER, Ipc: runtimeapi.NamespaceMode_POD, UsernsOptions: nodeUserns},
				MaskedPaths:      defaultMaskedPaths(nil),
				ReadonlyPaths:    slices.Clone(defaultReadonlyPaths),
				Seccomp:          &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined},
			},
		},
	}
}

func kv(pairs ...string) []*runtimeapi.KeyValue {
	var out []*runtimeapi.KeyValue
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, &runtimeapi.KeyValue{Key: pairs[i], Value: []byte(pairs[i+1])})
	}
	return out
}

func TestBuildContainerConfig(t *testing.T) {
	tru, fls := true, false
	uid := int64(1000)
	root := int64(0)
	tests := []struct {
		name    string
		mutate  func(*corev1.Pod, *ContainerParams)
		want    func(*runtimeapi.ContainerConfig)
		wantErr string
	}{
		{name: "base"},
		{
			name: "env and expansion",
			mutate: func(p *corev1.Pod, cp *ContainerParams) {
				c := &p.Spec.Containers[0]
				c.Env = []corev1.EnvVar{
					{Name: "HOST", Value: "db"}, {Name: "URL", Value: "http://$(HOST):$(PORT)"},
					{Name: "PORT", Value: "5432"}, {Name: "HOST", Value: "db2"},
				}
				// The environment kuberuntime resolves from c.Env
				// (its TestResolveEnv has the same case).
				cp.Env = kv("HOST", "db2", "URL", "http://db:$(PORT)", "PORT", "5432")
				cp.Vars = map[string]string{"HOST": "db2", "URL": "http://db:$(PORT)", "PORT": "5432"}
				c.Command = []string{"/bin/app", "--url=$(URL)", "$$(HOST)"}
				c.Args = []string{"$(PORT)", "$(MISSING)"}
				c.WorkingDir = "/srv"
				c.TTY, c.Stdin, c.StdinOnce = true, true, true
			},
			want: func(c *runtimeapi.ContainerConfig) {
				c.Envs = kv("HOST", "db2", "URL", "http://db:$(PORT)", "PORT", "5432")
				c.Command = []string{"/bin/app", "--url=http://db:$(PORT)", "$(HOST)"}
				c.Args = []string{"5432", "$(MISSING)"}
				c.WorkingDir = "/srv"
				c.Tty, c.Stdin, c.StdinOnce = true, true, true
			},
		},
		{
			name: "resolved volume mounts come before the termination message",
			mutate: func(p *corev1.Pod, cp *ContainerParams) {
				cp.Mounts = []*runtimeapi.Mount{{HostPath: "/pods/uid-1/volumes/data", ContainerPath: "/data", Readonly: true}}
			},
			want: func(c *runtimeapi.ContainerConfig) {
				c.Mounts = append([]*runtimeapi.Mount{{HostPath: "/pods/uid-1/volumes/data", ContainerPath: "/data", Readonly: true}}, c.Mounts...)
			},
		},
		{
			name: "the CPU manager's cpuset",
			mutate: func(p *corev1.Pod, cp *ContainerParams) {
				cp.CPUSet = "1,5"
			},
			want: func(c *runtimeapi.ContainerConfig) {
				c.Linux.Resources.CpusetCpus = "1,5"
			},
		},
		{
			name: "resources",
			mutate: func(p *corev1.Pod, _ *ContainerParams) {
				p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")},
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("64Mi")},
				}
			},
			want: func(c *runtimeapi.ContainerConfig) {
				c.Linux.Resources = &runtimeapi.LinuxContainerResources{CpuShares: 256, CpuPeriod: 100000, CpuQuota: 100000, MemoryLimitInBytes: 64 << 20, OomScoreAdj: 999}
			},
		},
		{
			name: "the memory manager's NUMA nodes",
			mutate: func(p *corev1.Pod, cp *ContainerParams) {
				cp.CPUSetMems = "0,1"
			},
			want: func(c *runtimeapi.ContainerConfig) {
				c.Linux.Resources.CpusetMems = "0,1"
			},
		},
		{
			name: "ephemeral container with a target: the target's PID namespace",
			mutate: func(p *corev1.Pod, cp *ContainerParams) {
				cp.Type, cp.TargetID = TypeEphemeral, "web-1"
			},
			want: func(c *runtimeapi.ContainerConfig) {
				c.Annotations["io.kubernetes.container.type"] = "ephemeral"
				c.Linux.SecurityContext.NamespaceOptions.Pid = runtimeapi.NamespaceMode_TARGET
				c.Linux.SecurityContext.NamespaceOptions.TargetId = "web-1"
			},
		},
		{
			name: "ephemeral container with a target in a pod sharing its PID namespace: the pod's",
			mutate: func(p *corev1.Pod, cp *ContainerParams) {
				share := true
				p.Spec.ShareProcessNamespace = &share
				cp.Type, cp.TargetID = TypeEphemeral, "web-1"
			},
			want: func(c *runtimeapi.ContainerConfig) {
				c.Annotations["io.kubernetes.container.type"] = "ephemeral"
				c.Linux.SecurityContext.NamespaceOptions.Pid = runtimeapi.NamespaceMode_POD
			},
		},
		{
			name: "ephemeral container with a target in a hostPID pod: the host's",
			mutate: func(p *corev1.Pod, cp *ContainerParams) {
				p.Spec.HostPID = true
				cp.Type, cp.TargetID = TypeEphemeral, "web-1"
			},
			want: func(c *runtimeapi.ContainerConfig) {
				c.Annotations["io.kubernetes.container.type"] = "ephemeral"
				c.Linux.SecurityContext.NamespaceOptions.Pid = runtimeapi.NamespaceMode_NODE
			},
		},
		{
			name: "ports annotation, init type, no termination message",
			mutate: func(p *corev1.Pod, cp *ContainerParams) {
				p.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP}}
				p.Spec.Containers[0].TerminationMessagePath = ""
				cp.Type = TypeInit
			},
			want: func(c *runtimeapi.ContainerConfig) {
				c.Annotations["io.kubernetes.container.ports"] = `[{"name":"http","containerPort":80,"protocol":"TCP"}]`
				c.Annotations["io.kubernetes.container.terminationMessagePath"] = ""
				c.Annotations["io.kubernetes.container.type"] = "init"
				c.Mounts = nil
			},
		},
		{
			name: "own user namespace: every mount idmapped",
			mutate: func(p *corev1.Pod, cp *ContainerParams) {
				p.Spec.HostUsers = new(false)
				cp.UserNamespace = &UserNamespace{HostID: 131072, Length: 65536}
				cp.Mounts = []*runtimeapi.Mount{{HostPath: "/pods/uid-1/volumes/kubernetes.io~empty-dir/data", ContainerPath: "/data"}}
				cp.HostsMount = &runtimeapi.Mount{HostPath: "/pods/uid-1/etc-hosts", ContainerPath: "/etc/hosts"}
			},
			want: func(c *runtimeapi.ContainerConfig) {
				u := podUserns()
				c.Linux.SecurityContext.NamespaceOptions.UsernsOptions = u
				c.Mounts = append([]*runtimeapi.Mount{{HostPath: "/pods/uid-1/volumes/kubernetes.io~empty-dir/data", ContainerPath: "/data"}}, c.Mounts...)
				c.Mounts = append(c.Mounts, &runtimeapi.Mount{HostPath: "/pods/uid-1/etc-hosts", ContainerPath: "/etc/hosts"})
				for _, m := range c.Mounts {
					m.UidMappings, m.GidMappings = u.Uids, u.Gids
				}
			},
		},
		{
			name: "security context",
			mutate: func(p *corev1.Pod, _ *ContainerParams) {
				p.Spec.HostPID = true
				p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: &root, SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
				p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{
					RunAsUser: &uid, RunAsNonRoot: &tru, ReadOnlyRootFilesystem: &tru, AllowPrivilegeEscalation: &fls,
					Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN"}, Drop: []corev1.Capability{"ALL"}},
				}
			},
			want: func(c *runtimeapi.ContainerConfig) {
				sc := c.Linux.SecurityContext
				sc.NamespaceOptions.Pid = runtimeapi.NamespaceMode_NODE
				sc.RunAsUser = &runtimeapi.Int64Value{Value: 1000}
				sc.ReadonlyRootfs, sc.NoNewPrivs = true, true
				sc.Capabilities = &runtimeapi.Capability{AddCapabilities: []string{"NET_ADMIN"}, DropCapabilities: []string{"ALL"}}
				sc.Seccomp = &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}
			},
		},
		{
			// Upstream relabels the termination message file when
			// selinux.GetEnabled(), for every container.
			name: "an SELinux host has the termination message file relabelled",
			mutate: func(_ *corev1.Pod, p *ContainerParams) {
				p.Node.SELinux = true
			},
			want: func(c *runtimeapi.ContainerConfig) {
				c.Mounts[0].SelinuxRelabel = true
			},
		},
		{
			// As upstream, masks follow procMount alone; runtimes drop
			// them for privileged containers.
			name: "privileged keeps the masks",
			mutate: func(p *corev1.Pod, _ *ContainerParams) {
				p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: &tru}
			},
			want: func(c *runtimeapi.ContainerConfig) {
				sc := c.Linux.SecurityContext
				sc.Privileged = true
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := basePod()
			params := ContainerParams{
				Pod: pod, Type: TypeRegular, Hash: 0x1f, RestartCount: 2, ImageRef: "sha256:abc",
				TerminationMessageHostPath: "/pods/uid-1/containers/app/2", Node: testNode(),
			}
			if tt.mutate != nil {
				tt.mutate(pod, &params)
			}
			params.Container = &pod.Spec.Containers[0]
			got, err := Container(params)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := baseContainerConfig()
			if tt.want != nil {
				tt.want(want)
			}
			if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
				t.Errorf("Container (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAnnotationsRoundTrip(t *testing.T) {
	pod := basePod()
	c := &pod.Spec.Containers[0]
	got := ReadAnnotations(containerAnnotations(pod, c, TypeRegular, 0xdeadbeefcafe, 7))
	grace := int64(30)
	want := Annotated{
		Hash: 0xdeadbeefcafe, RestartCount: 7, TerminationMessagePath: "/dev/termination-log",
		TerminationMessagePolicy: "File", TerminationGracePeriod: &grace,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadAnnotations (-want +got):\n%s", diff)
	}
}
