package sysctl

import (
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

func TestParseDefaults(t *testing.T) {
	tests := []struct {
		name     string
		in       map[string]string
		want     Defaults
		wantErrs []string
	}{
		{name: "none", in: nil, want: Defaults{}},
		{name: "normalized", in: map[string]string{"net/ipv4/ip_forward": "1", "kernel.shmall": "5"},
			want: Defaults{"net.ipv4.ip_forward": "1", "kernel.shmall": "5"}},
		{name: "invalid name", in: map[string]string{"Net.ipv4": "1"}, want: Defaults{},
			wantErrs: []string{`"Net.ipv4" is not a valid sysctl name for defaultPodSysctls`}},
		{name: "too long", in: map[string]string{"net." + strings.Repeat("a", 250): "1"}, want: Defaults{},
			wantErrs: []string{`"net.` + strings.Repeat("a", 250) + `" is not a valid sysctl name for defaultPodSysctls`}},
		{name: "not namespaced", in: map[string]string{"vm.swappiness": "1"}, want: Defaults{"vm.swappiness": "1"},
			wantErrs: []string{`"vm.swappiness" is not known to be namespaced for defaultPodSysctls`}},
		{name: "duplicate once normalized", in: map[string]string{"net.ipv4.ip_forward": "1", "net/ipv4/ip_forward": "0"},
			want:     Defaults{"net.ipv4.ip_forward": "0"},
			wantErrs: []string{`duplicate sysctl "net.ipv4.ip_forward" found in defaultPodSysctls`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, errs := ParseDefaults(tt.in)
			var msgs []string
			for _, e := range errs {
				msgs = append(msgs, e.Error())
			}
			if diff := cmp.Diff(tt.wantErrs, msgs); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("defaults (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDefaultsForPod(t *testing.T) {
	d := Defaults{
		"kernel.shmall": "1", "fs.mqueue.msg_max": "2", "net.ipv4.ip_forward": "3",
		"user.max_user_namespaces": "4", "kernel.domainname": "example", "kernel.hostname": "no",
	}
	all := map[string]string{"kernel.shmall": "1", "fs.mqueue.msg_max": "2", "net.ipv4.ip_forward": "3", "kernel.domainname": "example"}
	tests := []struct {
		name string
		spec corev1.PodSpec
		want map[string]string
	}{
		{name: "own namespaces, host users", want: all},
		{name: "own user namespace", spec: corev1.PodSpec{HostUsers: ptr.To(false)},
			want: map[string]string{"kernel.shmall": "1", "fs.mqueue.msg_max": "2", "net.ipv4.ip_forward": "3", "kernel.domainname": "example", "user.max_user_namespaces": "4"}},
		{name: "host IPC", spec: corev1.PodSpec{HostIPC: true}, want: map[string]string{"net.ipv4.ip_forward": "3", "kernel.domainname": "example"}},
		{name: "host network", spec: corev1.PodSpec{HostNetwork: true}, want: map[string]string{"kernel.shmall": "1", "fs.mqueue.msg_max": "2"}},
		{name: "host everything", spec: corev1.PodSpec{HostNetwork: true, HostIPC: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, d.ForPod(&corev1.Pod{Spec: tt.spec})); diff != "" {
				t.Errorf("ForPod (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDefaultsTablesMatchUpstream pins the name format and the IPC sysctls
// to upstream's validation and kuberuntime.
func TestDefaultsTablesMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	if got := src.Value("k8s.io/kubernetes/pkg/kubelet/apis/config/validation", "sysctlContainSlashFmt").AsString(); got != nameFmt {
		t.Errorf("upstream sysctl name format %q, berth %q", got, nameFmt)
	}
	if got := src.Value("k8s.io/kubernetes/pkg/kubelet/apis/config/validation", "sysctlMaxLength").AsInt(); got != maxLength {
		t.Errorf("upstream sysctl max length %d, berth %d", got, maxLength)
	}
	var upstream []string
	for _, e := range src.Value("k8s.io/kubernetes/pkg/kubelet/kuberuntime", "validSysctlMap").Entries() {
		upstream = append(upstream, e.Key.AsString())
	}
	ours := append([]string(nil), ipcSysctls...)
	sort.Strings(upstream)
	sort.Strings(ours)
	if diff := cmp.Diff(upstream, ours); diff != "" {
		t.Errorf("IPC sysctls (-upstream +berth):\n%s", diff)
	}
}
