package containerconfig

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/podkit/sysctl"
)

func TestSeccompProfile(t *testing.T) {
	profile := "profiles/audit.json"
	empty := ""
	runtimeDefault := &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}
	unconfined := &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}
	tests := []struct {
		name           string
		profile        *corev1.SeccompProfile
		seccompDefault bool
		want           *runtimeapi.SecurityProfile
		wantErr        bool
	}{
		{name: "none", want: unconfined},
		{name: "none under seccompDefault", seccompDefault: true, want: runtimeDefault},
		{name: "RuntimeDefault", profile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}, want: runtimeDefault},
		{name: "Unconfined beats seccompDefault", profile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}, seccompDefault: true, want: unconfined},
		{
			name:    "Localhost is a path under the seccomp root",
			profile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: &profile},
			want:    &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Localhost, LocalhostRef: "/var/lib/berth/seccomp/profiles/audit.json"},
		},
		{name: "Localhost without a profile", profile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost}, wantErr: true},
		{name: "Localhost with an empty profile", profile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: &empty}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := seccompProfile(tt.profile, "/var/lib/berth/seccomp", tt.seccompDefault)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error = %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got, protocmp.Transform()); diff != "" {
				t.Errorf("seccompProfile (-want +got):\n%s", diff)
			}
		})
	}
}

func TestContainerSecurity(t *testing.T) {
	tru, fls := true, false
	uid, gid, fsGroup := int64(1000), int64(3000), int64(2000)
	podUID := int64(500)
	unmasked := corev1.UnmaskedProcMount
	strict := corev1.SupplementalGroupsPolicyStrict
	localhost := "my.json"
	lp := testNode()
	lp.SeccompProfileRoot = "/root/seccomp"
	withSeccompDefault := testNode()
	withSeccompDefault.SeccompDefault = true
	withThermal := testNode()
	withThermal.MaskedPaths = defaultMaskedPaths([]string{"/sys/devices/system/cpu/cpu0/thermal_throttle"})
	base := func() *runtimeapi.LinuxContainerSecurityContext {
		return &runtimeapi.LinuxContainerSecurityContext{
			NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD, Pid: runtimeapi.NamespaceMode_CONTAINER, Ipc: runtimeapi.NamespaceMode_POD, UsernsOptions: nodeUserns},
			MaskedPaths:      defaultMaskedPaths(nil),
			ReadonlyPaths:    slices.Clone(defaultReadonlyPaths),
			Seccomp:          &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined},
		}
	}
	tests := []struct {
		name    string
		mutate  func(*corev1.Pod)
		lp      *Node
		want    func(*runtimeapi.LinuxContainerSecurityContext)
		wantErr string
	}{
		{name: "nothing set"},
		{
			name: "users and groups: pod values, the container's user wins",
			mutate: func(p *corev1.Pod) {
				p.Spec.SecurityContext = &corev1.PodSecurityContext{
					RunAsUser: &podUID, RunAsGroup: &gid, FSGroup: &fsGroup, SupplementalGroups: []int64{4000},
					SupplementalGroupsPolicy: &strict,
				}
				p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{RunAsUser: &uid}
			},
			want: func(sc *runtimeapi.LinuxContainerSecurityContext) {
				sc.RunAsUser = &runtimeapi.Int64Value{Value: 1000}
				sc.RunAsGroup = &runtimeapi.Int64Value{Value: 3000}
				sc.SupplementalGroups = []int64{2000, 4000}
				sc.SupplementalGroupsPolicy = runtimeapi.SupplementalGroupsPolicy_Strict
			},
		},
		{
			name: "seccomp: the container's profile wins over the pod's",
			mutate: func(p *corev1.Pod) {
				p.Spec.SecurityContext = &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
				p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: &localhost}}
			},
			want: func(sc *runtimeapi.LinuxContainerSecurityContext) {
				sc.Seccomp = &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Localhost, LocalhostRef: "/root/seccomp/my.json"}
			},
		},
		{
			name: "seccomp: the pod's profile applies",
			mutate: func(p *corev1.Pod) {
				p.Spec.SecurityContext = &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
			},
			want: func(sc *runtimeapi.LinuxContainerSecurityContext) {
				sc.Seccomp = &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}
			},
		},
		{
			name: "seccompDefault",
			lp:   &withSeccompDefault,
			want: func(sc *runtimeapi.LinuxContainerSecurityContext) {
				sc.Seccomp = &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}
			},
		},
		{
			name: "unmasked proc mount, read-only rootfs, no privilege escalation",
			mutate: func(p *corev1.Pod) {
				p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{ProcMount: &unmasked, ReadOnlyRootFilesystem: &tru, AllowPrivilegeEscalation: &fls}
			},
			want: func(sc *runtimeapi.LinuxContainerSecurityContext) {
				sc.MaskedPaths, sc.ReadonlyPaths = nil, nil
				sc.ReadonlyRootfs, sc.NoNewPrivs = true, true
			},
		},
		{
			name: "allowPrivilegeEscalation true keeps no_new_privs off",
			mutate: func(p *corev1.Pod) {
				p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{AllowPrivilegeEscalation: &tru}
			},
		},
		{
			name: "namespaces: shareProcessNamespace, host network and IPC",
			mutate: func(p *corev1.Pod) {
				p.Spec.ShareProcessNamespace = &tru
				p.Spec.HostNetwork, p.Spec.HostIPC = true, true
			},
			want: func(sc *runtimeapi.LinuxContainerSecurityContext) {
				sc.NamespaceOptions = &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE, Pid: runtimeapi.NamespaceMode_POD, Ipc: runtimeapi.NamespaceMode_NODE, UsernsOptions: nodeUserns}
			},
		},
		{
			name: "SELinux options: the container's win",
			mutate: func(p *corev1.Pod) {
				p.Spec.SecurityContext = &corev1.PodSecurityContext{SELinuxOptions: &corev1.SELinuxOptions{Level: "s0:c1"}}
				p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{SELinuxOptions: &corev1.SELinuxOptions{Type: "spc_t"}}
			},
			want: func(sc *runtimeapi.LinuxContainerSecurityContext) {
				sc.SelinuxOptions = &runtimeapi.SELinuxOption{Type: "spc_t"}
			},
		},
		{
			name: "AppArmor is refused",
			mutate: func(p *corev1.Pod) {
				p.Spec.SecurityContext = &corev1.PodSecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeRuntimeDefault}}
			},
			wantErr: "appArmorProfile is not supported yet",
		},
		{
			name: "Localhost seccomp without a profile",
			mutate: func(p *corev1.Pod) {
				p.Spec.SecurityContext = &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost}}
			},
			wantErr: "localhostProfile must be set if seccompProfile type is Localhost.",
		},
		{
			name: "the host's thermal_throttle directories are masked after the fixed paths",
			lp:   &withThermal,
			want: func(sc *runtimeapi.LinuxContainerSecurityContext) {
				sc.MaskedPaths = append(sc.MaskedPaths, "/sys/devices/system/cpu/cpu0/thermal_throttle")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := basePod()
			if tt.mutate != nil {
				tt.mutate(pod)
			}
			p := lp
			if tt.lp != nil {
				p = *tt.lp
			}
			got, err := containerSecurity(pod, &pod.Spec.Containers[0], p, nil, nil)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := base()
			if tt.want != nil {
				tt.want(want)
			}
			if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
				t.Errorf("containerSecurity (-want +got):\n%s", diff)
			}
		})
	}
}

// testNode is the Node of a host with a recent kernel and no
// thermal_throttle directories.
func testNode() Node {
	return Node{MaskedPaths: defaultMaskedPaths(nil)}
}

// TestSandboxLinuxConfigPodSysctls: the pod's sysctls, safe or unsafe,
// reach the sandbox as given: admission (admission.Sysctls) decided that
// the pod may set them, as upstream's runtime manager takes them.
func TestSandboxLinuxConfigPodSysctls(t *testing.T) {
	pod := basePod()
	pod.Spec.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{
		{Name: "net.ipv4.tcp_syncookies", Value: "1"}, {Name: "kernel.msgmax", Value: "1"},
	}}
	want := map[string]string{"net.ipv4.tcp_syncookies": "1", "kernel.msgmax": "1"}
	if diff := cmp.Diff(want, sandboxLinuxConfig(pod, SandboxParams{}).GetSysctls()); diff != "" {
		t.Errorf("sysctls (-want +got):\n%s", diff)
	}
}

func TestSandboxLinuxConfigDefaultSysctls(t *testing.T) {
	defaults, errs := sysctl.ParseDefaults(map[string]string{"net/ipv4/ip_forward": "1", "kernel.shm_rmid_forced": "1"})
	if errs != nil {
		t.Fatal(errs)
	}
	tests := []struct {
		name   string
		mutate func(*corev1.Pod)
		want   map[string]string
	}{
		{name: "defaults applied", want: map[string]string{"net.ipv4.ip_forward": "1", "kernel.shm_rmid_forced": "1"}},
		{name: "the pod's own win", mutate: func(p *corev1.Pod) {
			p.Spec.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "kernel.shm_rmid_forced", Value: "0"}, {Name: "net.ipv4.ping_group_range", Value: "0 1"}}}
		}, want: map[string]string{"net.ipv4.ip_forward": "1", "kernel.shm_rmid_forced": "0", "net.ipv4.ping_group_range": "0 1"}},
		{name: "unsafe pod sysctls (admitted) too", mutate: func(p *corev1.Pod) {
			p.Spec.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "kernel.shm_rmid_forced", Value: "0"}, {Name: "kernel.msgmax", Value: "1"}}}
		}, want: map[string]string{"net.ipv4.ip_forward": "1", "kernel.shm_rmid_forced": "0", "kernel.msgmax": "1"}},
		{name: "host network: no net.*", mutate: func(p *corev1.Pod) { p.Spec.HostNetwork = true }, want: map[string]string{"kernel.shm_rmid_forced": "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := basePod()
			if tt.mutate != nil {
				tt.mutate(pod)
			}
			got := sandboxLinuxConfig(pod, SandboxParams{DefaultSysctls: defaults}).GetSysctls()
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("sysctls (-want +got):\n%s", diff)
			}
		})
	}
}
