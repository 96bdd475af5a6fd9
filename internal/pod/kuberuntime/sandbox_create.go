package kuberuntime

import (
	"context"
	"fmt"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/node/userns"
	"github.com/berthk8s/berth/internal/pod/containerconfig"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// Why a new sandbox was not created (Result.Sandbox): the syncer's
// podstatus.PodWait, which the pod's PodReadyToStartContainers message
// gives after upstream's (docs/why-waiting.md).
const (
	// ReasonSandboxCreateFailed: the sandbox's config could not be built
	// (user namespace, DNS, cgroup) or the runtime failed RunPodSandbox.
	ReasonSandboxCreateFailed = "SandboxCreateFailed"
	// ReasonNetworkSetupFailed: the runtime created the sandbox but its
	// CNI plugins failed to set up the pod's network.
	ReasonNetworkSetupFailed = "NetworkSetupFailed"
)

// cniFailureMarker is how containerd's RunPodSandbox says its CNI set-up
// failed ("failed to setup network for sandbox %q: ..."); the CRI has no
// code for it.
const cniFailureMarker = "failed to setup network for sandbox"

// sandboxFailure classifies why a sandbox was not created: its network
// (the runtime's message says so) or anything else, with the runtime's
// message.
func sandboxFailure(err error) runtimestate.StartFailure {
	msg := criMessage(err)
	if strings.Contains(msg, cniFailureMarker) {
		return runtimestate.StartFailure{Reason: ReasonNetworkSetupFailed, Message: "setting up the pod network failed: " + msg}
	}
	return runtimestate.StartFailure{Reason: ReasonSandboxCreateFailed, Message: "creating the pod sandbox failed: " + msg}
}

// sandboxConfig builds the pod's sandbox config for the given attempt,
// reading the host resolv.conf, and returns the pod's user namespace (nil:
// the host's), which its containers share. SyncPod needs them for a new
// sandbox and for pulling images and creating containers in an existing
// one. A pod with hostUsers: false that cannot have a user namespace
// fails here, with upstream's message, before anything runs.
func (m *Manager) sandboxConfig(ctx context.Context, pod *corev1.Pod, attempt uint32, extraGroups []int64) (*runtimeapi.PodSandboxConfig, *containerconfig.UserNamespace, error) {
	if pod.Spec.RuntimeClassName != nil && *pod.Spec.RuntimeClassName != "" {
		return nil, nil, fmt.Errorf("runtimeClassName %q is not supported yet", *pod.Spec.RuntimeClassName)
	}
	ns, err := m.userNamespace(ctx, pod)
	if err != nil {
		return nil, nil, err
	}
	host, err := m.hostDNS()
	if err != nil {
		return nil, nil, err
	}
	var parent string
	if m.cfg.Cgroups != nil {
		if parent, err = m.cfg.Cgroups.PodCgroupParent(pod); err != nil {
			return nil, nil, err
		}
	}
	cfg, events, err := containerconfig.Sandbox(containerconfig.SandboxParams{Pod: pod, Attempt: attempt, PodLogsDir: m.cfg.PodLogsDir, DNS: containerconfig.DNS{
		Host: host, ClusterDNS: m.cfg.ClusterDNS, ClusterDomain: m.cfg.ClusterDomain,
	}, DefaultSysctls: m.node.DefaultSysctls, CgroupParent: parent, Resources: m.node.Resources, UserNamespace: ns, ExtraGroups: extraGroups})
	for _, e := range events {
		m.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, e.Reason, "%s", e.Message)
	}
	return cfg, ns, err
}

// userNamespace returns the pod's own user namespace from
// Config.UserNamespaces (the default runtime handler: berth runs no
// RuntimeClass), nil for a pod in the host's. Without UserNamespaces, a
// pod that asks for one is refused as by a runtime without support.
func (m *Manager) userNamespace(ctx context.Context, pod *corev1.Pod) (*containerconfig.UserNamespace, error) {
	if m.cfg.UserNamespaces == nil {
		if !userns.WantsUserNamespace(pod) {
			return nil, nil
		}
		return nil, userns.HandlerSupports(nil, "")
	}
	mp, err := m.cfg.UserNamespaces.PodMapping(ctx, pod, "")
	if err != nil || mp == nil {
		return nil, err
	}
	return &containerconfig.UserNamespace{HostID: mp.HostID, Length: mp.Length}, nil
}

// ensurePodCgroup makes sure the pod's cgroup exists with its settings
// before its sandbox or a container is created, as upstream's SyncPod
// (reason FailedCreatePodContainer when it cannot).
func (m *Manager) ensurePodCgroup(ctx context.Context, pod *corev1.Pod) error {
	if m.cfg.Cgroups == nil {
		return nil
	}
	if err := m.cfg.Cgroups.EnsurePod(ctx, pod); err != nil {
		m.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, eventFailedCreatePodContainer, "unable to ensure pod container exists: %v", err)
		return fmt.Errorf("ensure pod cgroup: %w", err)
	}
	return nil
}

// hostDNS reads and parses Config.ResolvConf.
func (m *Manager) hostDNS() (containerconfig.HostDNS, error) {
	if m.cfg.ResolvConf == "" {
		return containerconfig.HostDNS{NoResolvConf: true}, nil
	}
	f, err := os.Open(m.cfg.ResolvConf)
	if err != nil {
		return containerconfig.HostDNS{}, fmt.Errorf("open resolv.conf %q: %w", m.cfg.ResolvConf, err)
	}
	defer f.Close()
	h, err := containerconfig.ParseResolvConf(f)
	if err != nil {
		return containerconfig.HostDNS{}, fmt.Errorf("parse resolv.conf %q: %w", m.cfg.ResolvConf, err)
	}
	return h, nil
}

// createSandbox creates the pod log directory and runs a new sandbox.
func (m *Manager) createSandbox(ctx context.Context, cfg *runtimeapi.PodSandboxConfig) (string, error) {
	if err := os.MkdirAll(cfg.LogDirectory, 0o755); err != nil {
		return "", fmt.Errorf("create pod log directory %q: %w", cfg.LogDirectory, err)
	}
	resp, err := m.cfg.Runtime.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg})
	if err != nil {
		return "", fmt.Errorf("run pod sandbox: %w", err)
	}
	return resp.GetPodSandboxId(), nil
}
