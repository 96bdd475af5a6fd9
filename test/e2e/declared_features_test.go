package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// berthDeclaredFeatures is what berth declares at its default gates on any
// runtime (internal/pod/declaredfeatures TestNew, "berth's defaults"): what it
// implements of what the library discovers. Upstream's kubelet would also
// declare the in-place resize features, which berth does not do.
var berthDeclaredFeatures = []string{"ExtendWebSocketsToKubelet", "InPlacePodLevelResourcesVerticalScaling", "InPlacePodVerticalScalingInitContainers", "RestartAllContainersOnContainerExits"}

// testDeclaredFeatures reads the Node's status.declaredFeatures from the
// API server.
func (e *clusterEnv) testDeclaredFeatures(t *testing.T) {
	var last []string
	e.waitAPI(t, "status.declaredFeatures to be "+strings.Join(berthDeclaredFeatures, ","), func(ctx context.Context) (bool, error) {
		n, err := e.admin.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if got := n.Status.DeclaredFeatures; !slices.Equal(got, last) {
			t.Logf("status.declaredFeatures = %q", got)
			last = got
		}
		return slices.Equal(last, berthDeclaredFeatures), nil
	})
}
