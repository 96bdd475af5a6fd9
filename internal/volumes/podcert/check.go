package podcert

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Bounds of maxExpirationSeconds, as the API's (certificates
// MinMaxExpirationSeconds, MaxMaxExpirationSeconds and, for the
// kubernetes.io signers, KubernetesMaxMaxExpirationSeconds).
const (
	minMaxExpirationSeconds           = 3600
	maxMaxExpirationSeconds           = 91 * 24 * 3600
	kubernetesMaxMaxExpirationSeconds = 24 * 3600
)

// msgNoPath and msgSigner are the API's refusals of a projection that names no file.
const (
	msgNoPath = "specify at least one of credentialBundlePath, keyPath, and certificateChainPath"
	msgSigner = "must be a fully qualified domain and path of the form 'example.com/signer-name'"
)

// Check refuses a podCertificate projection no request can be made for,
// as the API's validation would (a pod from a file was never validated):
// an unknown key type, a signer name that is not <domain>/<path>, a
// maxExpirationSeconds out of range, no file to write. The paths
// themselves are the atomic writer's to check. It is pure.
func Check(src *corev1.PodCertificateProjection) error {
	var errs []error
	if !slices.Contains(KeyTypes(), src.KeyType) {
		errs = append(errs, fmt.Errorf("keyType: unsupported value %q: supported values: %s", src.KeyType, strings.Join(KeyTypes(), ", ")))
	}
	domain, path, _ := strings.Cut(src.SignerName, "/")
	if strings.Count(src.SignerName, "/") != 1 || !strings.Contains(domain, ".") || path == "" {
		errs = append(errs, fmt.Errorf("signerName %q: %s", src.SignerName, msgSigner))
	}
	if s := src.MaxExpirationSeconds; s != nil {
		limit := int32(maxMaxExpirationSeconds)
		if domain == "kubernetes.io" || strings.HasSuffix(domain, ".kubernetes.io") {
			limit = kubernetesMaxMaxExpirationSeconds
		}
		if *s < minMaxExpirationSeconds || *s > limit {
			errs = append(errs, fmt.Errorf("maxExpirationSeconds %d: must be in the range [%d, %d]", *s, minMaxExpirationSeconds, limit))
		}
	}
	if src.CredentialBundlePath == "" && src.KeyPath == "" && src.CertificateChainPath == "" {
		errs = append(errs, errors.New(msgNoPath))
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("invalid podCertificate projection: %w", errors.Join(errs...))
}

// projection returns the podCertificate source at index of the pod's
// projected volume.
func projection(pod *corev1.Pod, volume string, index int) (*corev1.PodCertificateProjection, error) {
	for _, v := range pod.Spec.Volumes {
		if v.Name != volume || v.Projected == nil {
			continue
		}
		if index >= 0 && index < len(v.Projected.Sources) && v.Projected.Sources[index].PodCertificate != nil {
			return v.Projected.Sources[index].PodCertificate, nil
		}
	}
	return nil, fmt.Errorf("pod has no podCertificate source %d in projected volume %q", index, volume)
}
