package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// distro is one distribution of the corpus in testdata/distros (issue 12):
// the configuration files and the kubelet command line it writes for a node,
// with only the runtime endpoint and local paths changed. Its SOURCE names
// where each file comes from.
type distro struct {
	dir   string // directory under testdata/distros
	title string // as the README lists it
	// stubs are files the node holds that the distribution does not write
	// itself (a CA bundle for a ".crt", else a kubeconfig), relative to root.
	stubs []string
	// plugins are executables the node holds that the distribution's
	// image installs, relative to root: its credential provider plugins.
	plugins []string
	// upstreamUnknownFlags are flags the distribution passes that the
	// upstream v1.37.2 kubelet does not register either (berth's flag table
	// is pinned to upstream's, flagtable_test.go): both refuse them.
	upstreamUnknownFlags []string
	// nodeResourceBlockers are the node-resource fields and flags berth
	// does not honour yet (the node-resources issue): only these may block.
	nodeResourceBlockers []string
}

// distros is the corpus. Keep in step with README.md's Compatibility
// section: TestDistroCompatReadme renders it from this table.
func distros() []distro {
	return []distro{
		{
			dir: "kubeadm", title: "kubeadm v1.37.2",
			stubs: []string{"etc/kubernetes/pki/ca.crt", "etc/kubernetes/kubelet.conf", "etc/kubernetes/bootstrap-kubelet.conf"},
		},
		{
			dir: "kind", title: "kind",
			stubs: []string{"etc/kubernetes/pki/ca.crt", "etc/kubernetes/kubelet.conf", "etc/kubernetes/bootstrap-kubelet.conf"},
		},
		{
			dir: "minikube", title: "minikube",
			stubs: []string{"var/lib/minikube/certs/ca.crt", "etc/kubernetes/kubelet.conf", "etc/kubernetes/bootstrap-kubelet.conf"},
		},
		{
			dir: "k3s", title: "k3s",
			stubs: []string{"var/lib/rancher/k3s/agent/client-ca.crt", "var/lib/rancher/k3s/agent/kubelet.kubeconfig"},
		},
		{
			dir: "k0s", title: "k0s",
			stubs:                []string{"run/k0s/kubelet/ca.crt", "var/lib/k0s/kubelet.conf"},
			upstreamUnknownFlags: []string{"--containerd"},
		},
		{
			dir: "talos", title: "Talos",
			stubs: []string{"etc/kubernetes/pki/ca.crt", "etc/kubernetes/kubeconfig-kubelet", "etc/kubernetes/bootstrap-kubeconfig"},
		},
		{
			dir: "eks", title: "EKS (nodeadm)",
			stubs:   []string{"etc/kubernetes/pki/ca.crt", "var/lib/kubelet/kubeconfig"},
			plugins: []string{"etc/eks/image-credential-provider/ecr-credential-provider"},
		},
		{
			dir: "gce", title: "GCE (kube-up)",
			stubs:   []string{"etc/srv/kubernetes/pki/ca-certificates.crt", "var/lib/kubelet/kubeconfig", "var/lib/kubelet/bootstrap-kubeconfig"},
			plugins: []string{"home/kubernetes/bin/auth-provider-gcp"},
		},
		{
			dir: "aks", title: "AKS (AgentBaker)",
			stubs: []string{"etc/kubernetes/certs/ca.crt", "var/lib/kubelet/kubeconfig", "var/lib/kubelet/bootstrap-kubeconfig"},
		},
		{
			dir: "capi", title: "Cluster API (CAPA)",
			stubs: []string{"etc/kubernetes/pki/ca.crt", "etc/kubernetes/kubelet.conf", "etc/kubernetes/bootstrap-kubelet.conf"},
		},
	}
}

// nodeResourceFields are the fields and flags of the node-resources issue:
// eviction, image GC, cgroup placement and QoS, node allocatable, container
// log rotation, the CPU, memory and topology managers.
func nodeResourceFields() map[string]bool {
	return map[string]bool{
		"evictionHard": true, "evictionSoft": true, "evictionSoftGracePeriod": true,
		"evictionPressureTransitionPeriod": true, "evictionMaxPodGracePeriod": true,
		"evictionMinimumReclaim": true, "mergeDefaultEvictionSettings": true,
		"imageMinimumGCAge": true, "imageMaximumGCAge": true,
		"imageGCHighThresholdPercent": true, "imageGCLowThresholdPercent": true,
		"cgroupsPerQOS": true, "cgroupRoot": true, "kubeletCgroups": true, "systemCgroups": true,
		"kubeReservedCgroup": true, "systemReservedCgroup": true, "--runtime-cgroups": true,
		"enforceNodeAllocatable": true, "--experimental-allocatable-ignore-eviction": true,
		"containerLogMaxSize": true, "containerLogMaxFiles": true,
		"containerLogMaxWorkers": true, "containerLogMonitorInterval": true,
		"cpuManagerPolicy": true, "cpuManagerPolicyOptions": true, "cpuManagerReconcilePeriod": true,
		"memoryManagerPolicy": true, "reservedMemory": true, "reservedSystemCPUs": true,
		"topologyManagerPolicy": true, "topologyManagerScope": true, "topologyManagerPolicyOptions": true,
		"qosReserved": true, "podPidsLimit": true, "cpuCFSQuota": true, "cpuCFSQuotaPeriod": true,
	}
}

// TestDistros loads each distribution's files and command line as cmd/berth
// does: berth starts, or exactly the listed fields block it, and every one
// of them is a node-resource field.
func TestDistros(t *testing.T) {
	for _, d := range distros() {
		t.Run(d.dir, func(t *testing.T) {
			for _, f := range d.nodeResourceBlockers {
				if !nodeResourceFields()[f] {
					t.Errorf("nodeResourceBlockers lists %q, which is not a node-resource field: berth must honour it", f)
				}
			}
			unknown, blockers := loadDistro(t, d)
			sorted := cmpopts.SortSlices(func(a, b string) bool { return a < b })
			if diff := cmp.Diff(d.upstreamUnknownFlags, unknown, sorted, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("flags berth does not know (-want +got):\n%s", diff)
			}
			want := sortedUnion(d.nodeResourceBlockers)
			if diff := cmp.Diff(want, blockers, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("blocking fields and flags (-want +got):\n%s", diff)
			}
		})
	}
}
