package config

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

func TestValidateNode(t *testing.T) {
	type kc = kubeletconfigv1beta1.KubeletConfiguration
	tests := []struct {
		name string
		set  func(*kc)
		want []string
	}{
		{name: "defaults", set: func(*kc) {}},
		{name: "podLogsDir elsewhere", set: func(c *kc) { c.PodLogsDir = "/srv/logs/pods" }},
		{name: "podLogsDir empty", set: func(c *kc) { c.PodLogsDir = "" },
			want: []string{`kubeletConfiguration field "podLogsDir": must be specified`}},
		{name: "podLogsDir relative", set: func(c *kc) { c.PodLogsDir = "logs/pods" },
			want: []string{`kubeletConfiguration field "podLogsDir": invalid value "logs/pods": must be an absolute path`}},
		{name: "podLogsDir not normalized", set: func(c *kc) { c.PodLogsDir = "/var/log/pods/" },
			want: []string{`kubeletConfiguration field "podLogsDir": invalid value "/var/log/pods/": must be normalized`}},
		{name: "podLogsDir dot-dot", set: func(c *kc) { c.PodLogsDir = "/var/log/../pods" },
			want: []string{`kubeletConfiguration field "podLogsDir": invalid value "/var/log/../pods": must be normalized`}},
		{name: "podLogsDir root", set: func(c *kc) { c.PodLogsDir = "/" },
			want: []string{`kubeletConfiguration field "podLogsDir": invalid value "/": must not be the root directory (berth's choice: upstream accepts it)`}},
		{name: "podLogsDir not ASCII", set: func(c *kc) { c.PodLogsDir = "/var/log/pöds" },
			want: []string{`kubeletConfiguration field "podLogsDir": invalid value "/var/log/pöds": must contain ASCII characters only`}},
		{name: "runOnce", set: func(c *kc) { c.RunOnce = true },
			want: []string{`kubeletConfiguration field "runOnce": invalid value true: Runonce mode has been deprecated and should not be set (upstream v1.37 refuses it)`}},
		{name: "iptables bits in range", set: func(c *kc) { c.IPTablesMasqueradeBit, c.IPTablesDropBit = ptr.To[int32](0), ptr.To[int32](31) }},
		{name: "iptables bits out of range", set: func(c *kc) { c.IPTablesMasqueradeBit, c.IPTablesDropBit = ptr.To[int32](32), ptr.To[int32](-1) },
			want: []string{
				`kubeletConfiguration field "iptablesMasqueradeBit": invalid value 32: must be between 0 and 31, inclusive`,
				`kubeletConfiguration field "iptablesDropBit": invalid value -1: must be between 0 and 31, inclusive`,
			}},
		{name: "showHiddenMetricsForVersion previous minor", set: func(c *kc) { c.ShowHiddenMetricsForVersion = "1.36" }},
		{name: "showHiddenMetricsForVersion current minor", set: func(c *kc) { c.ShowHiddenMetricsForVersion = "1.37" },
			want: []string{`kubeletConfiguration field "showHiddenMetricsForVersion": invalid showHiddenMetricsForVersion: showHiddenMetricsForVersion: Invalid value: "1.37": must be omitted or have the value '1.36'; only the previous minor version is allowed`}},
		{name: "enableSystemLogQuery with the handler", set: func(c *kc) { c.EnableSystemLogQuery = ptr.To(true) }},
		{name: "enableSystemLogQuery without the handler", set: func(c *kc) {
			c.EnableSystemLogQuery, c.EnableSystemLogHandler = ptr.To(true), ptr.To(false)
		}, want: []string{`kubeletConfiguration field "enableSystemLogQuery": enableSystemLogHandler is required`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c kc
			SetDefaults(&c)
			tt.set(&c)
			var got []string
			for _, p := range validateNode(&c) {
				got = append(got, p.msg)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("validateNode (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUpstreamKubeletHidesNoMetric pins the reason showHiddenMetricsForVersion
// changes nothing in berth: no metric of upstream's kubelet is deprecated,
// so none is hidden. When one is, berth must gain it and hide it.
func TestUpstreamKubeletHidesNoMetric(t *testing.T) {
	src := upstreamsrc.New(t)
	root := filepath.Join(src.ModuleDir("k8s.io/kubernetes"), "pkg", "kubelet")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), "DeprecatedVersion:") {
			t.Errorf("%s declares a deprecated metric: showHiddenMetricsForVersion would show it", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestHousekeepingInterval(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "c.yaml"), "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"+
		"authentication: {webhook: {enabled: false}}\nauthorization: {mode: AlwaysAllow}\n")
	tests := []struct {
		name    string
		args    []string
		want    time.Duration
		wantErr string
	}{
		{name: "default", want: 10 * time.Second},
		{name: "set", args: []string{"--housekeeping-interval=3s"}, want: 3 * time.Second},
		{name: "zero", args: []string{"--housekeeping-interval=0s"}, wantErr: `flag --housekeeping-interval: invalid value "0s": must be positive`},
		{name: "negative", args: []string{"--housekeeping-interval=-1s"}, wantErr: `flag --housekeeping-interval: invalid value "-1s": must be positive`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(context.Background(), parseFlags(t, append([]string{"--config=" + dir + "/c.yaml"}, tt.args...)), testEnv("node-a"))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Load: %v, want an error with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.HousekeepingInterval.Duration != tt.want {
				t.Errorf("HousekeepingInterval %v, want %v", cfg.HousekeepingInterval.Duration, tt.want)
			}
		})
	}
}
