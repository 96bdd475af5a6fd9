package config

import (
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/berthk8s/berth/internal/images/pullrecords"
)

// GateEnsureSecretPulledImages is the gate of the image pull records
// (internal/images/pullrecords): beta and on by default since v1.35, honoured
// either way.
const GateEnsureSecretPulledImages = "KubeletEnsureSecretPulledImages"

// EnsureSecretPulledImages reports the KubeletEnsureSecretPulledImages
// gate: with it on, berth keeps the image pull records.
func (c *Config) EnsureSecretPulledImages() bool {
	return gateOn(&c.Kubelet, GateEnsureSecretPulledImages)
}

// validatePullRecords checks imagePullCredentialsVerificationPolicy and
// preloadedImagesVerificationAllowlist as upstream, with upstream's
// messages. With the gate off upstream leaves the policy unset and
// refuses any value; berth's defaults set it whatever the gate, so its
// default value is accepted then.
func validatePullRecords(kc *kubeletconfigv1beta1.KubeletConfiguration) []problem {
	policy, allow := kc.ImagePullCredentialsVerificationPolicy, kc.PreloadedImagesVerificationAllowlist
	if !gateOn(kc, GateEnsureSecretPulledImages) {
		var ps []problem
		if policy != "" && policy != kubeletconfigv1beta1.NeverVerifyPreloadedImages {
			ps = append(ps, fieldProblem("imagePullCredentialsVerificationPolicy", "invalid configuration: `imagePullCredentialsVerificationPolicy` must not be set if KubeletEnsureSecretPulledImages feature gate is not enabled"))
		}
		if len(allow) > 0 {
			ps = append(ps, fieldProblem("preloadedImagesVerificationAllowlist", "invalid configuration: `preloadedImagesVerificationAllowlist` must not be set if KubeletEnsureSecretPulledImages feature gate is not enabled"))
		}
		return ps
	}
	switch policy {
	case kubeletconfigv1beta1.NeverVerify, kubeletconfigv1beta1.NeverVerifyPreloadedImages,
		kubeletconfigv1beta1.NeverVerifyAllowlistedImages, kubeletconfigv1beta1.AlwaysVerify:
	default:
		return []problem{fieldProblem("imagePullCredentialsVerificationPolicy", "invalid configuration: option %q specified for imagePullCredentialsVerificationPolicy. Valid options are %q, %q, %q or %q",
			policy, kubeletconfigv1beta1.NeverVerify, kubeletconfigv1beta1.NeverVerifyPreloadedImages, kubeletconfigv1beta1.NeverVerifyAllowlistedImages, kubeletconfigv1beta1.AlwaysVerify)}
	}
	if len(allow) > 0 && policy != kubeletconfigv1beta1.NeverVerifyAllowlistedImages {
		return []problem{fieldProblem("preloadedImagesVerificationAllowlist", "invalid configuration: can't set `preloadedImagesVerificationAllowlist` if `imagePullCredentialsVertificationPolicy` is not \"NeverVerifyAllowlistedImages\"")}
	}
	if err := pullrecords.ValidateAllowlist(allow); err != nil {
		return []problem{fieldProblem("preloadedImagesVerificationAllowlist", "invalid configuration: invalid image pattern in `preloadedImagesVerificationAllowlist`: %v", err)}
	}
	return nil
}
