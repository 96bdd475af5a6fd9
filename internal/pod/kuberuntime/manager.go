package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/flowcontrol"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/node/devicemanager"
	"github.com/berthk8s/berth/internal/node/userns"
	"github.com/berthk8s/berth/internal/platform/machine"
	"github.com/berthk8s/berth/internal/pod/containerconfig"
	"github.com/berthk8s/berth/internal/pod/timeline"
	"github.com/berthk8s/berth/internal/podkit/httpget"
	"github.com/berthk8s/berth/internal/podkit/sysctl"
	"github.com/berthk8s/berth/internal/volumes/subpath"
)

// Observers are the runtime manager's metrics hooks (internal/serve/metrics
// has them); a nil one observes nothing.
type Observers struct {
	// ImageVolumesStarted counts each container start that got image
	// volumes (upstream's incrementImageVolumeMetrics): the image volumes,
	// the volumeMounts of them, and whether the runtime refused the
	// container with ImageVolumeMountFailed.
	ImageVolumesStarted func(requested, mounts int, failed bool)
	// UserNamespacedPodStarted counts each apply that creates the sandbox
	// of a pod with hostUsers: false, and whether it failed (upstream's
	// started_user_namespaced_pods metrics).
	UserNamespacedPodStarted func(failed bool)
	// PodResize records each in-place resize the apply actuates: whether
	// it succeeded and how long it took (upstream's
	// kubelet_pod_resize_duration_milliseconds, around doPodResizeAction).
	PodResize func(success bool, took time.Duration)
	// Stages records the stages of pods' starts the applies perform:
	// RunPodSandbox, each image and each container's create and start
	// (internal/pod/timeline); nil records none.
	Stages StageRecorder
	// PullProgress counts the bytes image pulls downloaded since the last
	// call and the change of the bytes they still need (the
	// berth_image_pull_* metrics).
	PullProgress func(downloaded, remainingChange int64)
	// StartLimit is told how many new pods may start at once, at New and
	// whenever the adaptive limit changes (start_pace.go); it must not
	// block.
	StartLimit func(limit int)
}

// StageRecorder records a stage of a pod's start: Begin starts it now
// and returns its end, which takes the bytes of an image (0: unknown), a
// note on success and the error it failed with. Implementations must be
// safe for concurrent use (timeline.Recorder).
type StageRecorder interface {
	Begin(pod *corev1.Pod, stage, target string) timeline.EndFunc
	// Progress sets how far the pod's running stage has got (an image
	// pull's bytes).
	Progress(pod *corev1.Pod, stage, target string, p timeline.Progress)
}

// beginStage starts a stage through Observe.Stages, if any.
func (m *Manager) beginStage(pod *corev1.Pod, stage, target string) timeline.EndFunc {
	if m.cfg.Observe.Stages == nil {
		return func(int64, string, error) {}
	}
	return m.cfg.Observe.Stages.Begin(pod, stage, target)
}

// beginTimedStage is beginStage for a stage whose latency, when it ends
// without an error, moves the limit of new pod starts (start_pace.go): a
// RunPodSandbox or a container's create and start.
func (m *Manager) beginTimedStage(ctx context.Context, pod *corev1.Pod, stage, target string, kind startKind) timeline.EndFunc {
	end, begin := m.beginStage(pod, stage, target), m.cfg.Clock.Now()
	return func(bytes int64, note string, err error) {
		end(bytes, note, err)
		if err == nil {
			m.starts.observe(ctx, kind, m.cfg.Clock.Since(begin))
		}
	}
}

// PullSettings are the image pulls' bounds and their progress readers.
type PullSettings struct {
	// MaxParallel bounds the image pulls running at once across all pods:
	// 1 is upstream's serializeImagePulls, 0 no bound
	// (config.Config.ImagePullLimit decides it).
	MaxParallel int
	// QPS and Burst are registryPullQPS and registryBurst: a token bucket
	// of pulls per second; QPS 0 is no limit.
	QPS   float32
	Burst int
	// Watcher reads the progress of image pulls from the runtime's content
	// store; nil where the runtime cannot tell. Events records the Pulling
	// event whose message then tells it; nil records a plain one. Both are
	// needed for the event's updates.
	Watcher PullWatcher
	Events  ProgressEventFunc
}

// Recorder records Kubernetes events about a pod. Declared here, by its
// consumer; implementations must be safe for concurrent use.
type Recorder interface {
	Eventf(pod *corev1.Pod, eventType, reason, messageFmt string, args ...any)
	// ContainerEventf records an event about one container of the pod
	// (involvedObject.fieldPath spec.containers{name}), as upstream does for
	// pulls, creation, start, kills and back-offs.
	ContainerEventf(pod *corev1.Pod, container, eventType, reason, messageFmt string, args ...any)
}

// SubPathBinder binds a volumeMount's subPath under the pod's directory and
// returns the bind, the path the runtime mounts (package subpath).
// Implementations must be safe for concurrent use.
type SubPathBinder interface {
	Bind(ctx context.Context, r subpath.Request) (string, error)
}

// Config holds the Manager's collaborators and settings.
type Config struct {
	Runtime  runtimeapi.RuntimeServiceClient
	Images   runtimeapi.ImageServiceClient
	Clock    clock.Clock
	Recorder Recorder
	// PodLogsDir is the root of pod log directories (/var/log/pods).
	PodLogsDir string
	// PodsDir is <root-dir>/pods; termination message files live in
	// PodsDir/<uid>/containers/<name>/.
	PodsDir string
	// ResolvConf is the host resolv.conf given to pods using the host's DNS;
	// "" gives them no resolver (upstream --resolv-conf="").
	ResolvConf string
	// ClusterDNS are the cluster DNS server IPs given to ClusterFirst pods
	// (kubelet clusterDNS); empty makes them fall back to ResolvConf.
	ClusterDNS []string
	// ClusterDomain is the cluster's DNS domain (kubelet clusterDomain),
	// used for the pod search path and subdomain FQDNs.
	ClusterDomain string
	// NodeHostsFile is the node's hosts file, the base of host-network
	// pods' /etc/hosts; "" means /etc/hosts.
	NodeHostsFile string
	// PodInfraImage is the sandbox (pause) image. The runtime chooses the
	// image it runs; berth keeps the name to protect it from image GC.
	PodInfraImage string
	// SeccompProfileRoot is <root-dir>/seccomp, the root of Localhost
	// seccomp profiles.
	SeccompProfileRoot string
	// SeccompDefault makes RuntimeDefault the seccomp profile of
	// containers that ask for none (kubelet seccompDefault).
	SeccompDefault bool
	// DefaultPodSysctls are the kubelet's defaultPodSysctls (config has
	// checked them and their gate): every sandbox gets those that apply
	// to its pod, unless the pod sets the same name.
	DefaultPodSysctls map[string]string
	// Resources are the kubelet settings that shape containers' and
	// sandboxes' Linux resources (cpuCFSQuota, cpuCFSQuotaPeriod,
	// singleProcessOOMKill on this host's cgroup version).
	Resources containerconfig.ResourceSettings
	// Machine is what berth knows about the host (machine.Read): its
	// memory sets the OOM score of Burstable containers (0 scores them all
	// 999), its huge page sizes the hugetlb limits, its kernel release
	// which safe sysctls pods may set, its thermal_throttle directories
	// part of the masked paths.
	Machine machine.Info
	// Env looks up what container environments read besides the pod:
	// configMaps, secrets, services, node allocatable. Nil without an API
	// server: configMap and secret references then fail the container.
	Env EnvSource
	// HostIPs are the node's IPs, primary first, for the status.hostIP(s)
	// env fieldRefs and a host-network pod's status.podIP(s).
	HostIPs []string
	// PullSecrets reads the secrets a pod's imagePullSecrets name, whose
	// registry credentials pulls use. Nil (standalone mode) pulls
	// anonymously.
	PullSecrets SecretLookup
	// CredentialProviders gives the credentials of the node's image
	// credential provider plugins, tried after the pull secrets'. Nil
	// without --image-credential-provider-config.
	CredentialProviders CredentialProvider
	// PullRecords are the image pull records (KubeletEnsureSecretPulledImages):
	// a present image is used only by pods that may access it, and every
	// pull is recorded. Nil with the gate off: a present image is used by
	// any pod, as before v1.35.
	PullRecords PullRecords
	// HookHTTP sends httpGet lifecycle hook requests; nil uses a client
	// that does not verify HTTPS certificates, as upstream's.
	HookHTTP HTTPDoer
	// KubernetesVersion is the version berth stands in for
	// (config.KubernetesVersion): httpGet hooks send
	// "kube-lifecycle/<major>.<minor>" of it as their User-Agent.
	KubernetesVersion string
	// Pulls bound the image pulls and tell how far they have got.
	Pulls PullSettings
	// PodStarts bound how many new pods start at once before the others
	// wait their turn, oldest first (start_pace.go; PodStartLimits); the
	// zero value starts every pod at once, as upstream.
	PodStarts StartLimits
	// SubPaths binds subPath mounts in PodsDir/<uid>/volume-subpaths; nil
	// means a subpath.Binder of its own.
	SubPaths SubPathBinder
	// Cgroups gives each pod its cgroup (cgroupsPerQOS); nil leaves pods in
	// the runtime's default cgroups.
	Cgroups PodCgroups
	// UserNamespaces gives pods with hostUsers: false their user
	// namespace (internal/node/userns); nil refuses such pods, as a runtime
	// without user namespace support.
	UserNamespaces UserNamespaces
	// Observe are the metrics hooks of the applies; each may be nil.
	Observe Observers
	// Assigners are the node managers whose assignments containers are
	// created with (the CPU, memory and device managers, the DRA manager).
	Assigners
}

// Assigners are the node managers whose assignments a container is
// created with; each may be nil.
type Assigners struct {
	// CPUs is the CPU manager (internal/node/cpumanager): the cpuset a
	// container is created with ("" : not pinned). Nil pins nothing.
	CPUs CPUAssigner
	// Memory is the memory manager (internal/node/memorymanager): the NUMA
	// nodes a container's memory is bound to. Nil binds nothing.
	Memory MemoryAssigner
	// Devices is the device manager (internal/node/devicemanager): what a
	// container's devices add to its config. Nil adds nothing.
	Devices DeviceAssigner
	// Claims is the DRA manager (internal/node/dra): the CDI devices of a
	// container's ResourceClaims. Nil fails containers that use claims.
	Claims ClaimDevices
	// RuntimeDropsCDI says the runtime ignores the CRI's CDIDevices
	// (containerd before 1.7, AppliesCDI): a container whose claims need
	// CDI devices then fails with a CreateContainerConfigError saying so.
	RuntimeDropsCDI bool
}

// DeviceAssigner is the device manager as kuberuntime uses it: a
// container's device plugin options (upstream's
// GetDeviceRunContainerOptions), whose error fails the creation.
type DeviceAssigner interface {
	ContainerOptions(ctx context.Context, pod *corev1.Pod, c *corev1.Container) (devicemanager.ContainerOptions, error)
}

// MemoryAssigner is the memory manager as kuberuntime uses it: the
// cpuset.mems of a container about to be created (upstream's
// PreCreateContainer); "" is none.
type MemoryAssigner interface {
	CPUSetMems(podUID, container string) string
}

// UserNamespaces is the user namespace manager (internal/node/userns) as
// kuberuntime uses it: the pod's mapping for the runtime handler, nil for
// a pod in the host's user namespace, or upstream's refusal.
type UserNamespaces interface {
	PodMapping(ctx context.Context, pod *corev1.Pod, handler string) (*userns.Mapping, error)
}

// CPUAssigner is the CPU manager as kuberuntime uses it: the cpuset of a
// container about to be created (upstream's PreCreateContainer).
type CPUAssigner interface {
	CPUSet(podUID, container string) string
}

// PodCgroups is the container manager (internal/node/cm) as kuberuntime uses
// it: the pod's cgroup, the sandbox's cgroup_parent, and making sure it
// exists with its settings before anything of the pod is created.
type PodCgroups interface {
	PodCgroupParent(pod *corev1.Pod) (string, error)
	EnsurePod(ctx context.Context, pod *corev1.Pod) error
	// ResizePod sets the cgroup of a pod resized from one allocation to
	// another (same QoS class): with widen, to the larger of the two for
	// each value; without, to to's.
	ResizePod(ctx context.Context, from, to *corev1.Pod, widen bool) error
}

// Manager applies pod plans through the CRI and reads runtime state.
//
// A Manager is safe for concurrent use and keeps no state about pods: what
// berth remembers of a pod between syncs (back-offs, start failures) is its
// sync's (internal/pod/podsync), handed in and returned by value. Calls for
// different pods run in parallel; the caller (the pod worker) never runs two
// calls for the same pod UID at once, which is what keeps a pod's plan and
// its effects consistent.
type Manager struct {
	cfg Config
	// hookHTTP, hookUserAgent and node (the node facts container configs
	// depend on, from cfg.Machine) are set by New and never change.
	hookHTTP      HTTPDoer
	hookUserAgent string
	node          containerconfig.Node
	// pullSlots bounds concurrent pulls and pullQPS (nil: no limit) their
	// rate (image_limit.go).
	pullSlots pullSlots
	pullQPS   flowcontrol.RateLimiter
	// starts paces the starts of new pods (start_pace.go; nil: no pacing).
	starts *startPace
}

// New validates cfg and returns a Manager. It starts nothing.
func New(cfg Config) (*Manager, error) {
	switch {
	case cfg.Runtime == nil || cfg.Images == nil:
		return nil, errors.New("kuberuntime: Runtime and Images clients are required")
	case cfg.Clock == nil:
		return nil, errors.New("kuberuntime: Clock is required")
	case cfg.Recorder == nil:
		return nil, errors.New("kuberuntime: Recorder is required")
	case cfg.PodLogsDir == "" || cfg.PodsDir == "":
		return nil, errors.New("kuberuntime: PodLogsDir and PodsDir are required")
	}
	if cfg.SubPaths == nil {
		cfg.SubPaths = subpath.New(subpath.Config{})
	}
	hookHTTP := cfg.HookHTTP
	if hookHTTP == nil {
		hookHTTP = defaultHookHTTP()
	}
	hookUserAgent, err := httpget.UserAgent(httpget.Lifecycle, cfg.KubernetesVersion)
	if err != nil {
		return nil, fmt.Errorf("kuberuntime: %w", err)
	}
	if err := cfg.PodStarts.validate(); err != nil {
		return nil, fmt.Errorf("kuberuntime: %w", err)
	}
	defaults, errs := sysctl.ParseDefaults(cfg.DefaultPodSysctls)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("kuberuntime: default pod sysctls: %w", err)
	}
	node := containerconfig.NewNode(cfg.Machine, cfg.SeccompProfileRoot, cfg.SeccompDefault)
	node.Resources = cfg.Resources
	node.DefaultSysctls = defaults
	return &Manager{
		cfg:           cfg,
		hookHTTP:      hookHTTP,
		hookUserAgent: hookUserAgent,
		node:          node,
		pullSlots:     newPullSlots(cfg.Pulls.MaxParallel),
		pullQPS:       newPullQPS(cfg.Pulls.QPS, cfg.Pulls.Burst, cfg.Clock),
		starts:        newStartPace(cfg.PodStarts, startHold, cfg.Clock, cfg.Observe.StartLimit),
	}, nil
}
