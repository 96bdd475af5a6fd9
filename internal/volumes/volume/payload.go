package volume

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/volumes/atomicwriter"
)

// defaultMode is the file mode the API server defaults defaultMode to for
// configMap, secret, downwardAPI and projected volumes.
const defaultMode int32 = 0o644

// Inputs is everything besides the pod that the content of a pod's
// configMap, secret, downwardAPI and projected volumes depends on: the
// fetched objects and tokens, and the node's allocatable resources.
type Inputs struct {
	// ConfigMaps and Secrets by name in the pod's namespace; a name mapped
	// to nil was not found.
	ConfigMaps map[string]*corev1.ConfigMap
	Secrets    map[string]*corev1.Secret
	// Tokens maps "<volume>/<path>" of a projected serviceAccountToken
	// source to the token.
	Tokens map[string]string
	// TrustAnchors maps "<volume>/<path>" of a projected
	// clusterTrustBundle source to its PEM certificates.
	TrustAnchors map[string][]byte
	// PodCertificates maps "<volume>/<index>" of a projected
	// podCertificate source (certKey) to its credential.
	PodCertificates map[string]PodCertificate
	// Allocatable stands in for a container limit that is not set.
	Allocatable corev1.ResourceList
}

// tokenKey names a projected serviceAccountToken source in Inputs.Tokens.
func tokenKey(volume, path string) string { return volume + "/" + path }

// certKey names a projected podCertificate source in Inputs.PodCertificates:
// by index, as upstream's podcertificate manager (two sources may ask the
// same signer for the same paths in different volumes).
func certKey(volume string, index int) string { return fmt.Sprintf("%s/%d", volume, index) }

// PodCertificate is the credential of a podCertificate source: the
// private key (PEM) and the certificate chain.
type PodCertificate struct {
	Key, Chain []byte
}

// Payload computes the files of a configMap, secret, downwardAPI or
// projected volume: which paths, with which content and which modes. It is
// pure; an error names the reason, not the volume.
func Payload(pod *corev1.Pod, v corev1.Volume, in Inputs) (atomicwriter.Payload, error) {
	s := v.VolumeSource
	switch {
	case s.ConfigMap != nil:
		return configMapPayload(s.ConfigMap.Name, in.ConfigMaps, s.ConfigMap.Items, isTrue(s.ConfigMap.Optional), modeOr(s.ConfigMap.DefaultMode))
	case s.Secret != nil:
		return secretPayload(s.Secret.SecretName, in.Secrets, s.Secret.Items, isTrue(s.Secret.Optional), modeOr(s.Secret.DefaultMode))
	case s.DownwardAPI != nil:
		return downwardPayload(pod, s.DownwardAPI.Items, modeOr(s.DownwardAPI.DefaultMode), in.Allocatable)
	case s.Projected != nil:
		return projectedPayload(pod, v.Name, s.Projected, in)
	}
	return nil, fmt.Errorf("volume %q has no payload", v.Name)
}

func configMapPayload(name string, objs map[string]*corev1.ConfigMap, items []corev1.KeyToPath, optional bool, mode int32) (atomicwriter.Payload, error) {
	cm := objs[name]
	if cm == nil {
		if optional {
			return atomicwriter.Payload{}, nil
		}
		return nil, fmt.Errorf("configmap %q not found", name)
	}
	lookup := func(key string) ([]byte, bool) {
		if s, ok := cm.Data[key]; ok {
			return []byte(s), true
		}
		b, ok := cm.BinaryData[key]
		return b, ok
	}
	var keys []string
	for k := range cm.Data {
		keys = append(keys, k)
	}
	for k := range cm.BinaryData {
		keys = append(keys, k)
	}
	return project(keys, lookup, items, optional, mode, "configmap references non-existent config key: %s")
}

func secretPayload(name string, objs map[string]*corev1.Secret, items []corev1.KeyToPath, optional bool, mode int32) (atomicwriter.Payload, error) {
	sec := objs[name]
	if sec == nil {
		if optional {
			return atomicwriter.Payload{}, nil
		}
		return nil, fmt.Errorf("secret %q not found", name)
	}
	lookup := func(key string) ([]byte, bool) {
		b, ok := sec.Data[key]
		return b, ok
	}
	keys := make([]string, 0, len(sec.Data))
	for k := range sec.Data {
		keys = append(keys, k)
	}
	return project(keys, lookup, items, optional, mode, "references non-existent secret key: %s")
}

// project maps keys to files: every key to a file of its name when items is
// empty, else each item's key to its path with its mode.
func project(keys []string, lookup func(string) ([]byte, bool), items []corev1.KeyToPath, optional bool, mode int32, missingFmt string) (atomicwriter.Payload, error) {
	out := atomicwriter.Payload{}
	if len(items) == 0 {
		for _, k := range keys {
			data, _ := lookup(k)
			out[k] = atomicwriter.File{Data: data, Mode: mode}
		}
		return out, nil
	}
	for _, it := range items {
		data, ok := lookup(it.Key)
		if !ok {
			if optional {
				continue
			}
			return nil, fmt.Errorf(missingFmt, it.Key)
		}
		out[it.Path] = atomicwriter.File{Data: data, Mode: itemMode(it.Mode, mode)}
	}
	return out, nil
}

func downwardPayload(pod *corev1.Pod, items []corev1.DownwardAPIVolumeFile, mode int32, allocatable corev1.ResourceList) (atomicwriter.Payload, error) {
	out := atomicwriter.Payload{}
	for _, it := range items {
		var value string
		var err error
		switch {
		case it.FieldRef != nil:
			value, err = fieldValue(pod, it.FieldRef.FieldPath)
		case it.ResourceFieldRef != nil:
			value, err = resourceValue(pod, it.ResourceFieldRef, allocatable)
		default:
			err = fmt.Errorf("downward API item %q has neither fieldRef nor resourceFieldRef", it.Path)
		}
		if err != nil {
			return nil, fmt.Errorf("compute downward API file %q: %w", it.Path, err)
		}
		out[it.Path] = atomicwriter.File{Data: []byte(value), Mode: itemMode(it.Mode, mode)}
	}
	return out, nil
}

func projectedPayload(pod *corev1.Pod, volume string, p *corev1.ProjectedVolumeSource, in Inputs) (atomicwriter.Payload, error) {
	mode := modeOr(p.DefaultMode)
	out := atomicwriter.Payload{}
	for i, src := range p.Sources {
		var part atomicwriter.Payload
		var err error
		switch {
		case src.ConfigMap != nil:
			part, err = configMapPayload(src.ConfigMap.Name, in.ConfigMaps, src.ConfigMap.Items, isTrue(src.ConfigMap.Optional), mode)
		case src.Secret != nil:
			part, err = secretPayload(src.Secret.Name, in.Secrets, src.Secret.Items, isTrue(src.Secret.Optional), mode)
		case src.DownwardAPI != nil:
			part, err = downwardPayload(pod, src.DownwardAPI.Items, mode, in.Allocatable)
		case src.ServiceAccountToken != nil:
			tok, ok := in.Tokens[tokenKey(volume, src.ServiceAccountToken.Path)]
			if !ok {
				return nil, fmt.Errorf("no token for path %q", src.ServiceAccountToken.Path)
			}
			part = atomicwriter.Payload{src.ServiceAccountToken.Path: tokenFile(pod, tok, mode)}
		case src.ClusterTrustBundle != nil:
			anchors, ok := in.TrustAnchors[tokenKey(volume, src.ClusterTrustBundle.Path)]
			if !ok {
				return nil, fmt.Errorf("no trust anchors for path %q", src.ClusterTrustBundle.Path)
			}
			// Mode and owner as a token's (upstream's rule for both).
			part = atomicwriter.Payload{src.ClusterTrustBundle.Path: tokenFile(pod, string(anchors), mode)}
		case src.PodCertificate != nil:
			cred, ok := in.PodCertificates[certKey(volume, i)]
			if !ok {
				return nil, fmt.Errorf("no pod certificate for source %d", i)
			}
			part = podCertificateFiles(pod, src.PodCertificate, cred, mode)
		default:
			return nil, fmt.Errorf("projected source of an unsupported type")
		}
		if err != nil {
			return nil, err
		}
		for k, f := range part {
			out[k] = f
		}
	}
	return out, nil
}

// podCertificateFiles are the files of a podCertificate source, each at
// the path the source names: the credential bundle (the key, then the
// chain), the key, the chain; mode and owner as a token's (upstream's rule
// for all three).
func podCertificateFiles(pod *corev1.Pod, src *corev1.PodCertificateProjection, cred PodCertificate, mode int32) atomicwriter.Payload {
	out := atomicwriter.Payload{}
	if src.CredentialBundlePath != "" {
		out[src.CredentialBundlePath] = tokenFile(pod, string(cred.Key)+string(cred.Chain), mode)
	}
	if src.KeyPath != "" {
		out[src.KeyPath] = tokenFile(pod, string(cred.Key), mode)
	}
	if src.CertificateChainPath != "" {
		out[src.CertificateChainPath] = tokenFile(pod, string(cred.Chain), mode)
	}
	return out
}

// tokenFile is a projected token file: with an fsGroup or a user all
// containers share, mode 0600 owned by that user (the group gets read from
// the fsGroup ownership), as upstream; else the volume's defaultMode.
func tokenFile(pod *corev1.Pod, token string, mode int32) atomicwriter.File {
	fsUser := fsUserOf(pod)
	if fsGroup, _ := fsGroupOf(pod); fsUser != nil || fsGroup != nil {
		mode = 0o600
	}
	return atomicwriter.File{Data: []byte(token), Mode: mode, FsUser: fsUser}
}

// fsUserOf returns the runAsUser every container of the pod runs as, or nil
// when they differ or one has none.
func fsUserOf(pod *corev1.Pod) *int64 {
	var user *int64
	first := true
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range list {
			u := containerUser(pod, c)
			if u == nil || (!first && *u != *user) {
				return nil
			}
			user, first = u, false
		}
	}
	return user
}

func containerUser(pod *corev1.Pod, c corev1.Container) *int64 {
	if c.SecurityContext != nil && c.SecurityContext.RunAsUser != nil {
		return c.SecurityContext.RunAsUser
	}
	if pod.Spec.SecurityContext != nil {
		return pod.Spec.SecurityContext.RunAsUser
	}
	return nil
}

func modeOr(m *int32) int32 {
	if m == nil {
		return defaultMode
	}
	return *m
}

func itemMode(m *int32, def int32) int32 {
	if m == nil {
		return def
	}
	return *m
}

func isTrue(b *bool) bool { return b != nil && *b }
