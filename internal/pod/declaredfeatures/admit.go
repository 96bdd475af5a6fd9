package declaredfeatures

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures"

	"github.com/berthk8s/berth/internal/pod/admission"
)

// ReasonPodFeatureUnsupported is upstream's reason for a pod that needs a
// feature the node does not declare (lifecycle.PodFeatureUnsupported).
const ReasonPodFeatureUnsupported = "PodFeatureUnsupported"

// Upstream's messages of a rejection, as format strings (a test pins them).
const (
	msgInferFailed = "Failed to infer pod's feature requirements: %v"
	msgMatchFailed = "Failed to match pod's feature requirements against the node: %v"
	msgUnavailable = "Pod requires node features that are not available: %s"
)

// Admit is upstream's DeclaredFeaturesAdmitHandler: the features pod needs
// to be scheduled (the library's inference, at berth's version) must all
// be declared, or the pod is rejected with the missing ones named. It
// does not modify pod.
func (d *Declared) Admit(pod *corev1.Pod) admission.Result {
	info := &ndf.PodInfo{Spec: &pod.Spec, Status: &pod.Status}
	reqs, err := d.framework.InferForPodScheduling(info, d.version)
	if err != nil {
		return admission.Result{Reason: ReasonPodFeatureUnsupported, Message: fmt.Sprintf(msgInferFailed, err)}
	}
	if reqs.IsEmpty() {
		return admission.Result{Admit: true}
	}
	match, err := d.framework.MatchNodeFeatureSet(reqs, d.set)
	if err != nil {
		return admission.Result{Reason: ReasonPodFeatureUnsupported, Message: fmt.Sprintf(msgMatchFailed, err)}
	}
	if !match.IsMatch {
		return admission.Result{
			Reason:  ReasonPodFeatureUnsupported,
			Message: fmt.Sprintf(msgUnavailable, strings.Join(match.UnsatisfiedRequirements, ", ")),
		}
	}
	return admission.Result{Admit: true}
}
