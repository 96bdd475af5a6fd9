package kuberuntime

import (
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// ClaimDevices is the DRA manager (internal/node/dra) as kuberuntime uses
// it: the CDI device IDs of the prepared ResourceClaims a container's
// resources.claims name and of the pod's extended resource claim's
// requests that serve its DRA-backed extended resources (upstream's
// GetResources).
type ClaimDevices interface {
	CDIDevices(pod *corev1.Pod, c *corev1.Container) ([]string, error)
}

// cdiDevices are the container's CDI devices (the CRI config's
// CDIDevices, upstream's makeCDIDevices), or why it cannot get them: no
// DRA manager, a claim not prepared, or a runtime that would drop them.
func (m *Manager) cdiDevices(pod *corev1.Pod, c *corev1.Container) ([]*runtimeapi.CDIDevice, error) {
	if !podutil.ContainerUsesResourceClaims(pod, c) {
		return nil, nil
	}
	if m.cfg.Claims == nil {
		return nil, errors.New("container uses ResourceClaims, but berth runs without a DRA manager")
	}
	ids, err := m.cfg.Claims.CDIDevices(pod, c)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	if m.cfg.RuntimeDropsCDI {
		return nil, fmt.Errorf("the container runtime does not apply CDI devices (the CRI's CDIDevices: containerd 1.7 and later), which the container's ResourceClaims need: %s",
			strings.Join(ids, ", "))
	}
	out := make([]*runtimeapi.CDIDevice, len(ids))
	for i, id := range ids {
		out[i] = &runtimeapi.CDIDevice{Name: id}
	}
	return out, nil
}

// AppliesCDI says whether the runtime honours the CRI's CDIDevices:
// containerd before 1.7 does not know the field and drops it silently.
// Other runtimes, and versions berth cannot read, are trusted to.
func AppliesCDI(runtimeName, version string) bool {
	if runtimeName != "containerd" {
		return true
	}
	v, err := utilversion.ParseGeneric(strings.TrimPrefix(version, "v"))
	if err != nil {
		return true
	}
	return v.AtLeast(utilversion.MajorMinor(1, 7))
}
