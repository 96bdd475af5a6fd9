package containerconfig

import (
	"encoding/json"
	"maps"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	kubelettypes "k8s.io/kubelet/pkg/types"
)

// Annotation keys berth writes on containers, as the upstream kubelet does,
// so that a container can be understood (and killed with the right grace
// period) after the pod object is gone.
const (
	annotationPodDeletionGracePeriod    = "io.kubernetes.pod.deletionGracePeriod"
	annotationPodTerminationGracePeriod = "io.kubernetes.pod.terminationGracePeriod"
	annotationContainerHash             = "io.kubernetes.container.hash"
	annotationRestartCount              = "io.kubernetes.container.restartCount"
	annotationTerminationMessagePath    = "io.kubernetes.container.terminationMessagePath"
	annotationTerminationMessagePolicy  = "io.kubernetes.container.terminationMessagePolicy"
	annotationContainerPorts            = "io.kubernetes.container.ports"
	annotationContainerType             = "io.kubernetes.container.type"
)

// Container types, the values of the io.kubernetes.container.type
// annotation (ContainerParams.Type).
const (
	TypeInit      = "init"      // an init container, sidecars included
	TypeRegular   = "container" // a regular container
	TypeEphemeral = "ephemeral" // an ephemeral container (kubectl debug)
)

// podLabels are the sandbox labels: the pod's own labels plus the pod's
// name, namespace and UID (upstream newPodLabels; no container name label).
func podLabels(pod *corev1.Pod) map[string]string {
	labels := make(map[string]string, len(pod.Labels)+3)
	maps.Copy(labels, pod.Labels)
	labels[kubelettypes.KubernetesPodNameLabel] = pod.Name
	labels[kubelettypes.KubernetesPodNamespaceLabel] = pod.Namespace
	labels[kubelettypes.KubernetesPodUIDLabel] = string(pod.UID)
	return labels
}

// containerLabels identify a container's pod and name (upstream
// newContainerLabels: the pod's own labels are not copied).
func containerLabels(pod *corev1.Pod, c *corev1.Container) map[string]string {
	return map[string]string{
		kubelettypes.KubernetesPodNameLabel:       pod.Name,
		kubelettypes.KubernetesPodNamespaceLabel:  pod.Namespace,
		kubelettypes.KubernetesPodUIDLabel:        string(pod.UID),
		kubelettypes.KubernetesContainerNameLabel: c.Name,
	}
}

// containerAnnotations are the annotations upstream newContainerAnnotations
// writes (minus the preStop handler, which berth does not run yet).
func containerAnnotations(pod *corev1.Pod, c *corev1.Container, typ string, hash uint64, restartCount int) map[string]string {
	a := map[string]string{
		annotationContainerHash:            strconv.FormatUint(hash, 16),
		annotationRestartCount:             strconv.Itoa(restartCount),
		annotationTerminationMessagePath:   c.TerminationMessagePath,
		annotationTerminationMessagePolicy: string(c.TerminationMessagePolicy),
		annotationContainerType:            typ,
	}
	if pod.DeletionGracePeriodSeconds != nil {
		a[annotationPodDeletionGracePeriod] = strconv.FormatInt(*pod.DeletionGracePeriodSeconds, 10)
	}
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		a[annotationPodTerminationGracePeriod] = strconv.FormatInt(*pod.Spec.TerminationGracePeriodSeconds, 10)
	}
	if len(c.Ports) > 0 {
		// Marshalling a []ContainerPort cannot fail.
		raw, _ := json.Marshal(c.Ports)
		a[annotationContainerPorts] = string(raw)
	}
	return a
}

// Managed reports whether labels carry the pod UID label: only such
// sandboxes and containers were created by berth (or a kubelet).
func Managed(labels map[string]string) bool {
	_, ok := labels[kubelettypes.KubernetesPodUIDLabel]
	return ok
}

// Annotated is what container annotations tell back.
type Annotated struct {
	Hash                     uint64
	RestartCount             int
	TerminationMessagePath   string
	TerminationMessagePolicy string
	// TerminationGracePeriod is nil when the annotation is absent.
	TerminationGracePeriod *int64
}

// ReadAnnotations parses container annotations; malformed numbers read as
// zero (upstream does the same: an old or foreign container).
func ReadAnnotations(a map[string]string) Annotated {
	info := Annotated{
		TerminationMessagePath:   a[annotationTerminationMessagePath],
		TerminationMessagePolicy: a[annotationTerminationMessagePolicy],
	}
	if v, ok := a[annotationContainerHash]; ok {
		info.Hash, _ = strconv.ParseUint(v, 16, 64)
	}
	if v, ok := a[annotationRestartCount]; ok {
		info.RestartCount, _ = strconv.Atoi(v)
	}
	for _, key := range []string{annotationPodDeletionGracePeriod, annotationPodTerminationGracePeriod} {
		if v, ok := a[key]; ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				info.TerminationGracePeriod = &n
				break
			}
		}
	}
	return info
}
