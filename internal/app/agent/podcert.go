package agent

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	"github.com/berthk8s/berth/internal/volumes/podcert"
	"github.com/berthk8s/berth/internal/volumes/volume"
)

// newPodCerts builds the keeper of podCertificate projections' keys and
// certificates, in cluster mode (nil standalone: the certificates come
// from a signer through the API server, as upstream).
func (n *node) newPodCerts() (*podcert.Manager, error) {
	cl := n.cluster
	client := cl.apiClient()
	if client == nil {
		return nil, nil
	}
	m, err := podcert.New(podcert.Config{
		Client: client, NodeName: n.cfg.NodeName, Clock: n.clock, Recorder: cl.recorder,
		NodeUID: func() types.UID {
			if node := cl.node(); node != nil {
				return node.UID
			}
			return ""
		},
	})
	if err != nil {
		return nil, fmt.Errorf("create pod certificate manager: %w", err)
	}
	return m, nil
}

// volumePodCerts is the volume manager's pod certificates: nil standalone
// (an interface holding a nil *podcert.Manager would not be nil).
func (n *node) volumePodCerts() volume.PodCertificates {
	if n.vols.podCerts == nil {
		return nil
	}
	return n.vols.podCerts
}
