package podsapi

import (
	"context"
	"sort"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	podsv1alpha1 "k8s.io/kubelet/pkg/apis/pods/v1alpha1"
)

// Upstream's words (upstream_test.go pins them).
const (
	msgInitializing   = "Kubelet is initializing"
	msgPodNotFound    = "pod with UID %s not found"
	msgMarshal        = "failed to marshal pod: %v"
	msgWatcherDropped = "watch client channel closed"
	msgMarshalEvent   = "error marshalling watch event pod: %v"
	reasonNotVerified = "ContainersNotReady"
	msgNotVerified    = "Kubelet is initializing pod containers"
)

// ListPods returns every pod the kubelet wants, sorted by UID, each with
// its effective status. The request's fields are unused (upstream has no
// filtering or paging yet).
func (s *Server) ListPods(context.Context, *podsv1alpha1.ListPodsRequest) (*podsv1alpha1.ListPodsResponse, error) {
	if err := s.ready(); err != nil {
		return nil, err
	}
	raw, err := s.marshalAll()
	if err != nil {
		return nil, err
	}
	return &podsv1alpha1.ListPodsResponse{Pods: raw}, nil
}

// GetPod returns one pod by UID.
func (s *Server) GetPod(_ context.Context, req *podsv1alpha1.GetPodRequest) (*podsv1alpha1.GetPodResponse, error) {
	if err := s.ready(); err != nil {
		return nil, err
	}
	pod, ok := s.cfg.Pod(types.UID(req.GetPodUID()))
	if !ok {
		return nil, status.Errorf(codes.NotFound, msgPodNotFound, req.GetPodUID())
	}
	b, err := s.withStatus(pod).Marshal()
	if err != nil {
		return nil, status.Errorf(codes.Internal, msgMarshal, err)
	}
	return &podsv1alpha1.GetPodResponse{Pod: b}, nil
}

// ready is upstream's validateReady.
func (s *Server) ready() error {
	if !s.cfg.SourcesReady() {
		return status.Error(codes.FailedPrecondition, msgInitializing)
	}
	return nil
}

// sortedPods are the wanted pods by UID.
func (s *Server) sortedPods() []*corev1.Pod {
	pods := append([]*corev1.Pod(nil), s.cfg.Pods()...)
	sort.Slice(pods, func(i, j int) bool { return pods[i].UID < pods[j].UID })
	return pods
}

func (s *Server) marshalAll() ([][]byte, error) {
	pods := s.sortedPods()
	out := make([][]byte, len(pods))
	for i, p := range pods {
		b, err := s.withStatus(p).Marshal()
		if err != nil {
			return nil, status.Errorf(codes.Internal, msgMarshal, err)
		}
		out[i] = b
	}
	return out, nil
}

// withStatus is a copy of pod with its effective status.
func (s *Server) withStatus(pod *corev1.Pod) *corev1.Pod {
	c := *pod
	if st, ok := s.cfg.Status(pod.UID); ok {
		c.Status = st
		return &c
	}
	c.Status = EffectiveStatus(pod.Status)
	return &c
}

// EffectiveStatus is the status served for a pod the kubelet has not
// generated a status for yet, as upstream's getEffectivePodStatus
// fallback: the API's, Pending when it has no phase, and a Ready condition
// the kubelet has not verified turned False.
func EffectiveStatus(api corev1.PodStatus) corev1.PodStatus {
	st := *api.DeepCopy()
	if st.Phase == "" {
		st.Phase = corev1.PodPending
	}
	for i, c := range st.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			st.Conditions[i].Status = corev1.ConditionFalse
			st.Conditions[i].Reason = reasonNotVerified
			st.Conditions[i].Message = msgNotVerified
			break
		}
	}
	return st
}
