package kubeclient

import (
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"

	"github.com/berthk8s/berth/internal/config"
)

const kubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority: ca.crt
users:
- name: u
  user:
    token: secret-token
contexts:
- name: ctx
  context: {cluster: c, user: u}
current-context: ctx
`

// seen is what the tests compare of a rest.Config.
type seen struct {
	Host, UserAgent, ContentType, Accept, BearerToken, CAFile string
	QPS                                                       float32
	Burst                                                     int
	Timeout                                                   time.Duration
}

func view(c *rest.Config) seen {
	return seen{
		Host: c.Host, UserAgent: c.UserAgent, ContentType: c.ContentType, Accept: c.AcceptContentTypes,
		BearerToken: c.BearerToken, CAFile: c.TLSClientConfig.CAFile,
		QPS: c.QPS, Burst: c.Burst, Timeout: c.Timeout,
	}
}

// writeKubeconfig writes kubeconfig and a CA file beside it into a new
// directory and returns the kubeconfig's path.
func writeKubeconfig(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	ca, _, err := certutil.GenerateSelfSignedCertKey("berth-test-ca", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), ca, 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRestConfigs(t *testing.T) {
	path := writeKubeconfig(t)
	caFile := filepath.Join(filepath.Dir(path), "ca.crt")
	kc, err := (&clientcmd.ClientConfigLoadingRules{ExplicitPath: path}).Load()
	if err != nil {
		t.Fatal(err)
	}
	base := Options{
		QPS: 50, Burst: 100, EventQPS: 50, EventBurst: 100,
		NodeStatusUpdateFrequency: 10 * time.Second, NodeLeaseDuration: 40 * time.Second,
		UserAgent: "berth/test",
	}
	common := seen{
		Host: "https://127.0.0.1:6443", UserAgent: "berth/test", BearerToken: "secret-token", CAFile: caFile,
		ContentType: ContentTypeProtobuf, Accept: ContentTypeProtobuf + "," + ContentTypeJSON,
	}
	with := func(f func(*seen)) seen { s := common; f(&s); return s }
	tests := []struct {
		name                   string
		mutate                 func(*Options)
		main, heartbeat, event seen
	}{{
		name:      "defaults of the kubelet configuration",
		mutate:    func(*Options) {},
		main:      with(func(s *seen) { s.QPS, s.Burst = 50, 100 }),
		heartbeat: with(func(s *seen) { s.QPS, s.Burst, s.Timeout = -1, 100, 10*time.Second }),
		event:     with(func(s *seen) { s.QPS, s.Burst = 50, 100 }),
	}, {
		name:      "lease shorter than the status update frequency bounds the timeout",
		mutate:    func(o *Options) { o.NodeStatusUpdateFrequency, o.NodeLeaseDuration = time.Minute, 15*time.Second },
		main:      with(func(s *seen) { s.QPS, s.Burst = 50, 100 }),
		heartbeat: with(func(s *seen) { s.QPS, s.Burst, s.Timeout = -1, 100, 15*time.Second }),
		event:     with(func(s *seen) { s.QPS, s.Burst = 50, 100 }),
	}, {
		name:      "eventRecordQPS 0 means no limit",
		mutate:    func(o *Options) { o.EventQPS, o.EventBurst = 0, 7 },
		main:      with(func(s *seen) { s.QPS, s.Burst = 50, 100 }),
		heartbeat: with(func(s *seen) { s.QPS, s.Burst, s.Timeout = -1, 100, 10*time.Second }),
		event:     with(func(s *seen) { s.QPS, s.Burst = -1, 7 }),
	}, {
		name:   "JSON content type leaves Accept to the client",
		mutate: func(o *Options) { o.ContentType, o.QPS, o.Burst = ContentTypeJSON, 5, 10 },
		main:   with(func(s *seen) { s.ContentType, s.Accept, s.QPS, s.Burst = ContentTypeJSON, "", 5, 10 }),
		heartbeat: with(func(s *seen) {
			s.ContentType, s.Accept, s.QPS, s.Burst, s.Timeout = ContentTypeJSON, "", -1, 10, 10*time.Second
		}),
		event: with(func(s *seen) { s.ContentType, s.Accept, s.QPS, s.Burst = ContentTypeJSON, "", 50, 100 }),
	}, {
		name:      "empty user agent is berth's",
		mutate:    func(o *Options) { o.UserAgent = "" },
		main:      with(func(s *seen) { s.UserAgent, s.QPS, s.Burst = UserAgent("dev"), 50, 100 }),
		heartbeat: with(func(s *seen) { s.UserAgent, s.QPS, s.Burst, s.Timeout = UserAgent("dev"), -1, 100, 10*time.Second }),
		event:     with(func(s *seen) { s.UserAgent, s.QPS, s.Burst = UserAgent("dev"), 50, 100 }),
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := base
			tt.mutate(&o)
			got, err := restConfigs(kc, o)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				name      string
				got, want seen
			}{{"main", view(got.main), tt.main}, {"heartbeat", view(got.heartbeat), tt.heartbeat}, {"events", view(got.events), tt.event}} {
				if d := cmp.Diff(c.want, c.got); d != "" {
					t.Errorf("%s config (-want +got):\n%s", c.name, d)
				}
			}
		})
	}
}

func TestRestConfigsRejectsKubeconfigWithoutServer(t *testing.T) {
	kc, err := clientcmd.Load([]byte("apiVersion: v1\nkind: Config\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := restConfigs(kc, Options{}); err == nil {
		t.Fatal("restConfigs succeeded on an empty kubeconfig")
	}
}

func TestHeartbeatTimeout(t *testing.T) {
	tests := []struct {
		name          string
		status, lease time.Duration
		want          time.Duration
	}{
		{"status shorter", 10 * time.Second, 40 * time.Second, 10 * time.Second},
		{"lease shorter", time.Minute, 40 * time.Second, 40 * time.Second},
		{"no status frequency", 0, 40 * time.Second, 40 * time.Second},
		{"no lease", 10 * time.Second, 0, 10 * time.Second},
		{"neither", 0, 0, 0},
	}
	for _, tt := range tests {
		if got := HeartbeatTimeout(tt.status, tt.lease); got != tt.want {
			t.Errorf("%s: HeartbeatTimeout(%v, %v) = %v, want %v", tt.name, tt.status, tt.lease, got, tt.want)
		}
	}
}

func TestUserAgent(t *testing.T) {
	want := "berth/v0.1.0 (" + runtime.GOOS + "/" + runtime.GOARCH + ") kubelet/v1.37.2"
	if got := UserAgent("v0.1.0"); got != want {
		t.Errorf("UserAgent = %q, want %q", got, want)
	}
	if got := UserAgent(""); !strings.HasPrefix(got, "berth/dev (") {
		t.Errorf("UserAgent(\"\") = %q, want berth/dev", got)
	}
}

// TestNewResolvesRelativePaths loads a kubeconfig whose CA file is named
// relative to it, as kubeadm writes them.
func TestNewResolvesRelativePaths(t *testing.T) {
	path := writeKubeconfig(t)
	dir := filepath.Dir(path)
	cfgs, err := loadConfigs(Options{Kubeconfig: path})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cfgs.main.TLSClientConfig.CAFile, filepath.Join(dir, "ca.crt"); got != want {
		t.Errorf("CA file = %q, want %q", got, want)
	}
	c, err := New(Options{Kubeconfig: path, QPS: 50, Burst: 100})
	if err != nil {
		t.Fatal(err)
	}
	if c.Main == nil || c.Heartbeat == nil || c.Events == nil {
		t.Fatalf("New returned a nil client: %+v", c)
	}
	if _, err := New(Options{Kubeconfig: filepath.Join(dir, "missing")}); err == nil {
		t.Error("New succeeded without a kubeconfig file")
	}
	if _, err := New(Options{}); err == nil {
		t.Error("New succeeded without a kubeconfig path")
	}
}

// TestBaseSharesTransport builds the clients from a base config with its
// own transport, as certificate.Client gives: the kubeconfig is not read,
// the base is not changed, and every client keeps the one transport, so
// closing its connections reaches them all.
func TestBaseSharesTransport(t *testing.T) {
	rt := &http.Transport{}
	base := &rest.Config{Host: "https://10.0.0.1:6443", Transport: rt}
	cfgs, err := loadConfigs(Options{Kubeconfig: "/does/not/exist", Base: base, QPS: 7, Burst: 9, NodeLeaseDuration: 40 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]*rest.Config{"main": cfgs.main, "heartbeat": cfgs.heartbeat, "events": cfgs.events} {
		if c.Transport != rt || c.Host != base.Host {
			t.Errorf("%s: transport %p host %q, want the base's %p %q", name, c.Transport, c.Host, rt, base.Host)
		}
	}
	if cfgs.main.QPS != 7 || cfgs.heartbeat.Timeout != 40*time.Second {
		t.Errorf("main QPS %v, heartbeat timeout %v: options not applied", cfgs.main.QPS, cfgs.heartbeat.Timeout)
	}
	if base.QPS != 0 || base.UserAgent != "" || base.ContentType != "" {
		t.Errorf("base changed: %+v", base)
	}
}

func TestOptionsFromConfig(t *testing.T) {
	qps, eventQPS := int32(25), int32(0)
	cfg := &config.Config{Kubeconfig: "/etc/kubernetes/kubelet.conf"}
	kc := &cfg.Kubelet
	kc.ContentType, kc.KubeAPIQPS, kc.KubeAPIBurst = ContentTypeJSON, &qps, 30
	kc.EventRecordQPS, kc.EventBurst = &eventQPS, 9
	kc.NodeStatusUpdateFrequency = metav1.Duration{Duration: 10 * time.Second}
	kc.NodeLeaseDurationSeconds = 40
	want := Options{
		Kubeconfig: "/etc/kubernetes/kubelet.conf", ContentType: ContentTypeJSON,
		QPS: 25, Burst: 30, EventQPS: 0, EventBurst: 9,
		NodeStatusUpdateFrequency: 10 * time.Second, NodeLeaseDuration: 40 * time.Second,
		UserAgent: UserAgent("v1.2.3"),
	}
	if d := cmp.Diff(want, OptionsFromConfig(cfg, "v1.2.3")); d != "" {
		t.Errorf("OptionsFromConfig (-want +got):\n%s", d)
	}
}
