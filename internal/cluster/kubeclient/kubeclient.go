package kubeclient

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/berthk8s/berth/internal/config"
)

// Content types the API clients may speak (kubeletConfiguration.contentType).
const (
	ContentTypeProtobuf = "application/vnd.kubernetes.protobuf"
	ContentTypeJSON     = "application/json"
)

// Options are the client settings of the KubeletConfiguration, plus the
// kubeconfig path and berth's user agent.
type Options struct {
	// Kubeconfig is the path of the kubeconfig (--kubeconfig). Relative
	// file names inside it are taken relative to its directory.
	Kubeconfig string
	// Base, when set, is used instead of reading Kubeconfig: the server and
	// credentials every client starts from (certificate.Client.Config,
	// whose rotating transport all three clients then share). It is
	// copied, never changed.
	Base *rest.Config
	// ContentType is kubeletConfiguration.contentType; ContentTypeProtobuf
	// when empty.
	ContentType string
	// QPS and Burst limit the Main client (kubeAPIQPS, kubeAPIBurst).
	QPS   float32
	Burst int
	// EventQPS and EventBurst limit the Events client (eventRecordQPS,
	// eventBurst). EventQPS 0 means no limit, as upstream.
	EventQPS   float32
	EventBurst int
	// NodeStatusUpdateFrequency and NodeLeaseDuration bound the Heartbeat
	// client's request timeout: the smaller of the two.
	NodeStatusUpdateFrequency time.Duration
	NodeLeaseDuration         time.Duration
	// UserAgent is sent with every request; UserAgent("dev") when empty.
	UserAgent string
}

// Clients are berth's API clients. They are safe for concurrent use and
// hold no state of berth's.
type Clients struct {
	// Main serves everything but heartbeats and events.
	Main kubernetes.Interface
	// Heartbeat serves node status updates and the node lease.
	Heartbeat kubernetes.Interface
	// Events serves event recording.
	Events kubernetes.Interface
}

// UserAgent is the user agent berth sends:
//
//	berth/<berthVersion> (<GOOS>/<GOARCH>) kubelet/<Kubernetes version>
//
// for example "berth/v0.3.0 (linux/amd64) kubelet/v1.37.2". It starts with
// "berth/" so the API server's logs and metrics tell berth from a kubelet,
// whose agent starts with "kubelet/", and names the kubelet version berth
// stands in for.
func UserAgent(berthVersion string) string {
	if berthVersion == "" {
		berthVersion = "dev"
	}
	return fmt.Sprintf("berth/%s (%s/%s) kubelet/%s", berthVersion, runtime.GOOS, runtime.GOARCH, config.KubernetesVersion)
}

// New reads the kubeconfig and builds the three clientsets. It sends no
// request.
func New(o Options) (*Clients, error) {
	cfgs, err := loadConfigs(o)
	if err != nil {
		return nil, err
	}
	var c Clients
	for _, b := range []struct {
		name string
		cfg  *rest.Config
		dst  *kubernetes.Interface
	}{{"main", cfgs.main, &c.Main}, {"heartbeat", cfgs.heartbeat, &c.Heartbeat}, {"events", cfgs.events, &c.Events}} {
		cs, err := kubernetes.NewForConfig(b.cfg)
		if err != nil {
			return nil, fmt.Errorf("create %s API client: %w", b.name, err)
		}
		*b.dst = cs
	}
	return &c, nil
}

// loadConfigs reads o.Kubeconfig (resolving the file names in it relative
// to its directory, as upstream's loading rules do) and builds the configs.
func loadConfigs(o Options) (clientConfigs, error) {
	if o.Base != nil {
		return deriveConfigs(rest.CopyConfig(o.Base), o), nil
	}
	if o.Kubeconfig == "" {
		return clientConfigs{}, errors.New("create API clients: no kubeconfig given")
	}
	kc, err := (&clientcmd.ClientConfigLoadingRules{ExplicitPath: o.Kubeconfig}).Load()
	if err != nil {
		return clientConfigs{}, fmt.Errorf("load kubeconfig %q: %w", o.Kubeconfig, err)
	}
	cfgs, err := restConfigs(kc, o)
	if err != nil {
		return clientConfigs{}, fmt.Errorf("load kubeconfig %q: %w", o.Kubeconfig, err)
	}
	return cfgs, nil
}

// clientConfigs are the rest.Configs of the three clients.
type clientConfigs struct {
	main, heartbeat, events *rest.Config
}

// restConfigs turns a loaded kubeconfig (its current context) and the
// options into the three clients' configs, as upstream's
// createAPIServerClientConfig and run do:
//   - all: the content type (protobuf also accepts JSON) and the user agent;
//   - main: QPS and Burst;
//   - events: EventQPS (0 → -1, no limit) and EventBurst;
//   - heartbeat: QPS -1 (no limit) and Timeout = min(status update
//     frequency, lease duration).
func restConfigs(kc *clientcmdapi.Config, o Options) (clientConfigs, error) {
	base, err := clientcmd.NewNonInteractiveClientConfig(*kc, "", &clientcmd.ConfigOverrides{}, nil).ClientConfig()
	if err != nil {
		return clientConfigs{}, fmt.Errorf("invalid kubeconfig: %w", err)
	}
	return deriveConfigs(base, o), nil
}

// deriveConfigs turns the base config into the three clients' configs; it
// changes base.
func deriveConfigs(base *rest.Config, o Options) clientConfigs {
	setContentType(base, o.ContentType)
	base.UserAgent = o.UserAgent
	if base.UserAgent == "" {
		base.UserAgent = UserAgent("")
	}

	main := rest.CopyConfig(base)
	main.QPS = o.QPS
	main.Burst = o.Burst

	events := rest.CopyConfig(base)
	events.QPS = o.EventQPS
	if events.QPS == 0 {
		events.QPS = -1
	}
	events.Burst = o.EventBurst

	heartbeat := rest.CopyConfig(main)
	heartbeat.Timeout = HeartbeatTimeout(o.NodeStatusUpdateFrequency, o.NodeLeaseDuration)
	heartbeat.QPS = -1
	return clientConfigs{main: main, heartbeat: heartbeat, events: events}
}

// HeartbeatTimeout is the Heartbeat client's request timeout: the smaller of
// the node status update frequency and the node lease duration, as upstream.
// A zero (unset) value does not count; both zero means no timeout.
func HeartbeatTimeout(statusUpdateFrequency, leaseDuration time.Duration) time.Duration {
	switch {
	case statusUpdateFrequency <= 0:
		return max(leaseDuration, 0)
	case leaseDuration <= 0:
		return statusUpdateFrequency
	}
	return min(statusUpdateFrequency, leaseDuration)
}

// setContentType sets the request content type; with protobuf the client
// accepts JSON too, for the resources that have no protobuf form.
func setContentType(cfg *rest.Config, contentType string) {
	if contentType == "" {
		contentType = ContentTypeProtobuf
	}
	cfg.ContentType = contentType
	if contentType == ContentTypeProtobuf {
		cfg.AcceptContentTypes = strings.Join([]string{ContentTypeProtobuf, ContentTypeJSON}, ",")
	}
}

// OptionsFromConfig takes the client settings from berth's configuration:
// the kubeconfig path, contentType, kubeAPIQPS/kubeAPIBurst,
// eventRecordQPS/eventBurst, nodeStatusUpdateFrequency and
// nodeLeaseDurationSeconds, and the user agent UserAgent(berthVersion).
func OptionsFromConfig(cfg *config.Config, berthVersion string) Options {
	kc := &cfg.Kubelet
	deref := func(p *int32) float32 {
		if p == nil {
			return 0
		}
		return float32(*p)
	}
	return Options{
		Kubeconfig:  cfg.Kubeconfig,
		ContentType: kc.ContentType,
		QPS:         deref(kc.KubeAPIQPS), Burst: int(kc.KubeAPIBurst),
		EventQPS: deref(kc.EventRecordQPS), EventBurst: int(kc.EventBurst),
		NodeStatusUpdateFrequency: kc.NodeStatusUpdateFrequency.Duration,
		NodeLeaseDuration:         time.Duration(kc.NodeLeaseDurationSeconds) * time.Second,
		UserAgent:                 UserAgent(berthVersion),
	}
}
