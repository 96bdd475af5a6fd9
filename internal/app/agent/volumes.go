package agent

import (
	"fmt"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/platform/machine"
	"github.com/berthk8s/berth/internal/platform/selinux"
	"github.com/berthk8s/berth/internal/volumes/subpath"
	"github.com/berthk8s/berth/internal/volumes/volume"
)

// newVolumes builds the volume manager; kuberuntime binds subPaths, the
// volume manager's TearDown unmounts them. On a host with SELinux on,
// the manager asks the host whether a CSI volume's filesystem carries
// labels (volume.RelabeledVolumes).
func (n *node) newVolumes(subPaths *subpath.Binder, host machine.Info) (*volume.Manager, error) {
	cl := n.cluster
	var err error
	if n.vols.mounter, err = n.newCSIMounter(); err != nil {
		return nil, err
	}
	if n.vols.podCerts, err = n.newPodCerts(); err != nil {
		return nil, err
	}
	var labels volume.SELinuxHost
	if host.SELinux {
		labels = selinux.Host{}
	}
	v, err := volume.New(volume.Config{
		PodsDir: n.podsDir(), Client: cl.apiClient(), Objects: n.vols.objects, Clock: n.clock, NodeName: n.cfg.NodeName, Recorder: cl.recorder,
		SubPaths: subPaths, CSI: n.volumeCSI(), Expander: n.volumeExpander(), ClaimRecorder: cl.recorder, BootID: host.BootID,
		PodCertificates: n.volumePodCerts(), Mounter: n.mounter(), Stages: n.pods.timeline, PluginsDir: filepath.Join(n.cfg.RootDir, "plugins"),
		SELinux: labels,
		NodeAllocatable: func() corev1.ResourceList {
			if node := cl.node(); node != nil {
				return node.Status.Allocatable
			}
			return nil
		},
	})
	if err != nil {
		return nil, fmt.Errorf("create volume manager: %w", err)
	}
	return v, nil
}
