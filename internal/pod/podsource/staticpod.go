package podsource

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// origin says where a manifest came from and when it was read.
type origin struct {
	// source is podutil.FileSource or podutil.HTTPSource.
	source string
	// location is the manifest's file path or URL.
	location string
	nodeName string
	now      time.Time
}

// loadManifest decodes, defaults and validates the static pods in data. It
// returns all of them or none: one invalid pod in a PodList fails the whole
// manifest, as upstream does. Warnings name fields the decoder dropped.
func loadManifest(d *manifestDecoder, data []byte, o origin) ([]*corev1.Pod, []string, error) {
	pods, warnings, err := d.decode(data, o.source == podutil.HTTPSource)
	if err != nil {
		return nil, warnings, err
	}
	for i, pod := range pods {
		SetPodDefaults(pod)
		if err := makeStatic(pod, o); err != nil {
			return nil, warnings, fmt.Errorf("pod %d: %w", i, err)
		}
		if errs := ValidatePod(pod); len(errs) > 0 {
			return nil, warnings, fmt.Errorf("invalid pod %q: %w", pod.Name, errs.ToAggregate())
		}
	}
	return pods, warnings, nil
}

// makeStatic turns a decoded, defaulted pod into the static pod berth runs,
// as upstream's applyDefaults does: a UID hashed from the node, the source
// and the pod (unless the manifest sets one), the name suffixed with the
// node name, the default namespace, the node name, the config annotations,
// a NoExecute toleration for file pods, and the Pending phase.
func makeStatic(pod *corev1.Pod, o origin) error {
	if pod.Name == "" {
		return errors.New("metadata.name: Required value: a static pod needs a name")
	}
	if pod.UID == "" {
		uid, err := staticPodUID(pod, o)
		if err != nil {
			return err
		}
		pod.UID = uid
	}
	pod.Name = pod.Name + "-" + strings.ToLower(o.nodeName)
	if pod.Namespace == "" {
		pod.Namespace = metav1.NamespaceDefault
	}
	pod.Spec.NodeName = o.nodeName
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[podutil.ConfigHashAnnotation] = string(pod.UID)
	pod.Annotations[podutil.ConfigSourceAnnotation] = o.source
	pod.Annotations[podutil.ConfigSeenAnnotation] = o.now.UTC().Format(time.RFC3339Nano)
	if o.source == podutil.FileSource {
		// Static pods from files tolerate every NoExecute taint, so node
		// problems do not evict them. Upstream does this for files only.
		addToleration(pod, corev1.Toleration{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute})
	}
	pod.Status.Phase = corev1.PodPending
	return nil
}

// staticPodUID hashes the node name, the source and the pod's canonical JSON
// encoding (deterministic: struct fields in order, map keys sorted). It is
// stable across berth restarts and changes when the manifest's content, its
// path or URL, or the node changes. 128 bits in hex, like upstream's md5.
func staticPodUID(pod *corev1.Pod, o origin) (types.UID, error) {
	content, err := json.Marshal(pod)
	if err != nil {
		return "", fmt.Errorf("encode pod %q for hashing: %w", pod.Name, err)
	}
	scheme := "file"
	if o.source == podutil.HTTPSource {
		scheme = "url"
	}
	h := sha256.New()
	fmt.Fprintf(h, "host:%s\n%s:%s\n", o.nodeName, scheme, o.location)
	h.Write(content)
	return types.UID(hex.EncodeToString(h.Sum(nil)[:16])), nil
}

// addToleration appends t unless the pod already has it.
func addToleration(pod *corev1.Pod, t corev1.Toleration) {
	for _, have := range pod.Spec.Tolerations {
		if have.Key == t.Key && have.Operator == t.Operator && have.Value == t.Value &&
			have.Effect == t.Effect && have.TolerationSeconds == nil {
			return
		}
	}
	pod.Spec.Tolerations = append(pod.Spec.Tolerations, t)
}
