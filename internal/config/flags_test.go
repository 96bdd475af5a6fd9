package config

import (
	"io"
	"net"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
)

func TestFlagsDefaultsAndIsSet(t *testing.T) {
	f := parseFlags(t, []string{"--v=3", "--pod-manifest-path", "/etc/m"})
	if f.RootDir != DefaultRootDir || f.CertDir != DefaultCertDir || f.PodInfraContainerImage != DefaultPodInfraContainerImage {
		t.Errorf("defaults not applied: %+v", f)
	}
	for name, want := range map[string]bool{"v": true, "pod-manifest-path": true, "root-dir": false, "container-runtime-endpoint": false} {
		if got := f.IsSet(name); got != want {
			t.Errorf("IsSet(%q) = %v, want %v", name, got, want)
		}
	}
	if (&Flags{}).IsSet("v") {
		t.Error("IsSet on Flags without a flag set must be false")
	}
}

func TestVerbosityShortAndLongForms(t *testing.T) {
	for _, args := range [][]string{{"-v", "4"}, {"-v=4"}, {"--v=4"}, {"--v", "4"}} {
		f := NewFlags()
		fs := pflag.NewFlagSet("berth", pflag.ContinueOnError)
		f.AddFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatalf("parse %q: %v", args, err)
		}
		if f.kubelet.Logging.Verbosity != 4 || !f.IsSet("v") {
			t.Errorf("%q: verbosity = %d, set = %v", args, f.kubelet.Logging.Verbosity, f.IsSet("v"))
		}
	}
}

func TestParseNodeIPs(t *testing.T) {
	tests := []struct {
		in      string
		want    []net.IP
		wantErr bool
	}{
		{in: "", want: nil},
		{in: "10.0.0.1", want: []net.IP{net.ParseIP("10.0.0.1")}},
		{in: "::", want: []net.IP{net.ParseIP("::")}},
		{in: "10.0.0.1, fd00::1", want: []net.IP{net.ParseIP("10.0.0.1"), net.ParseIP("fd00::1")}},
		{in: "fd00::1,10.0.0.1", want: []net.IP{net.ParseIP("fd00::1"), net.ParseIP("10.0.0.1")}},
		{in: "10.0.0.1,10.0.0.2", wantErr: true},
		{in: "0.0.0.0,fd00::1", wantErr: true},
		{in: "10.0.0.1,fd00::1,10.0.0.3", wantErr: true},
		{in: "10.0.0", wantErr: true},
		{in: "node.example", wantErr: true},
	}
	for _, tc := range tests {
		got, err := parseNodeIPs(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("parseNodeIPs(%q) error = %v, wantErr %v", tc.in, err, tc.wantErr)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("parseNodeIPs(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestParseNodeLabels(t *testing.T) {
	tests := []struct {
		in      []string
		want    map[string]string
		wantErr bool
	}{
		{in: nil, want: nil},
		{in: []string{"a=b", " c = d "}, want: map[string]string{"a": "b", "c": "d"}},
		{in: []string{"empty="}, want: map[string]string{"empty": ""}},
		{in: []string{"kubernetes.io/hostname=n1", "topology.kubernetes.io/zone=z"}, want: map[string]string{"kubernetes.io/hostname": "n1", "topology.kubernetes.io/zone": "z"}},
		{in: []string{"node.kubernetes.io/pool=a", "x.kubelet.kubernetes.io/y=b"}, want: map[string]string{"node.kubernetes.io/pool": "a", "x.kubelet.kubernetes.io/y": "b"}},
		{in: []string{"example.com/team=a"}, want: map[string]string{"example.com/team": "a"}},
		{in: []string{"node-role.kubernetes.io/master="}, wantErr: true},
		{in: []string{"k8s.io/anything=x"}, wantErr: true},
		{in: []string{"novalue"}, wantErr: true},
		{in: []string{"a=has space"}, wantErr: true},
		{in: []string{"-bad=x"}, wantErr: true},
	}
	for _, tc := range tests {
		got, err := parseNodeLabels(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("parseNodeLabels(%q) error = %v, wantErr %v", tc.in, err, tc.wantErr)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("parseNodeLabels(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestParseTaints(t *testing.T) {
	tests := []struct {
		in      []string
		want    []corev1.Taint
		wantErr bool
	}{
		{in: nil, want: nil},
		{in: []string{"a=b:NoSchedule"}, want: []corev1.Taint{{Key: "a", Value: "b", Effect: corev1.TaintEffectNoSchedule}}},
		{in: []string{"a:NoExecute", "example.com/x=y:PreferNoSchedule"}, want: []corev1.Taint{
			{Key: "a", Effect: corev1.TaintEffectNoExecute},
			{Key: "example.com/x", Value: "y", Effect: corev1.TaintEffectPreferNoSchedule},
		}},
		{in: []string{"a=b:NoSchedule", "a=c:NoExecute"}, want: []corev1.Taint{
			{Key: "a", Value: "b", Effect: corev1.TaintEffectNoSchedule},
			{Key: "a", Value: "c", Effect: corev1.TaintEffectNoExecute},
		}},
		{in: []string{"a=b:NoSchedule", "a=c:NoSchedule"}, wantErr: true},
		{in: []string{"a=b"}, wantErr: true},
		{in: []string{"a=b:Never"}, wantErr: true},
		{in: []string{":NoSchedule"}, wantErr: true},
		{in: []string{"a=b c:NoSchedule"}, wantErr: true},
	}
	for _, tc := range tests {
		got, err := parseTaints(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("parseTaints(%q) error = %v, wantErr %v", tc.in, err, tc.wantErr)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("parseTaints(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

// TestFlagParseErrors: values upstream's flag types refuse are refused while
// parsing, as upstream does, naming the flag.
func TestFlagParseErrors(t *testing.T) {
	for _, arg := range []string{
		"-v=-1",
		"--register-with-taints=a=b:Sometimes",
		"--register-with-taints=c:NoSchedule,c:NoSchedule",
		"--address=not-an-ip",
		"--healthz-bind-address=10.0.0",
		"--reserved-memory=0:cpu=1",
		"--reserved-memory=x:memory=1Gi",
		"--max-pods=many",
		"--sync-frequency=often",
		"--feature-gates=A=maybe",
		"--eviction-hard=memory.available",
	} {
		f := NewFlags()
		fs := pflag.NewFlagSet("berth", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		f.AddFlags(fs)
		name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		err := fs.Parse([]string{arg})
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("parse %q: error %v, want one naming %q", arg, err, name)
		}
	}
}

func TestCheckArgs(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // "" for no error
	}{
		{name: "all known", args: []string{"--config", "/c", "-v", "3", "--max-pods=5", "--register-node", "--max_pods=6", "pos", "--", "--nope"}},
		{name: "a value that looks like a flag", args: []string{"--hostname-override", "--nope"}},
		{name: "all unknown flags at once, with suggestions", args: []string{
			"--max-pod=5", "--kubeconfg", "/k", "--container-runtime=remote", "--network-plugin=cni",
			"--node-status-report-frequency=1m", "--static-pod-path", "/x", "--zzzzzz", "-q",
		}, want: "unknown flags (8): " +
			"--max-pod (did you mean --max-pods (KubeletConfiguration maxPods)?); " +
			"--kubeconfg (did you mean --kubeconfig?); " +
			"--container-runtime (removed upstream in v1.27: the runtime is always a CRI one, give --container-runtime-endpoint); " +
			"--network-plugin (removed upstream in v1.24 with dockershim: networking is the CRI runtime's job); " +
			"--node-status-report-frequency (set nodeStatusReportFrequency in --config; did you mean --node-status-update-frequency (KubeletConfiguration nodeStatusUpdateFrequency)?); " +
			"--static-pod-path (set staticPodPath in --config); " +
			"--zzzzzz; -q"},
		{name: "long names are cut", args: []string{"--" + strings.Repeat("x", 200)},
			want: "unknown flags (1): --" + strings.Repeat("x", maxFlagName-2) + "..."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := pflag.NewFlagSet("berth", pflag.ContinueOnError)
			NewFlags().AddFlags(fs)
			got := ""
			if err := CheckArgs(fs, tc.args); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("CheckArgs(%q) (-want +got):\n%s", tc.args, diff)
			}
		})
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"max-pod", "max-pods", 1}, {"flaw", "lawn", 2}} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
