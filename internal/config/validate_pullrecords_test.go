package config

import (
	"strings"
	"testing"

	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

func TestValidatePullRecords(t *testing.T) {
	off := map[string]bool{GateEnsureSecretPulledImages: false}
	tests := []struct {
		name   string
		gates  map[string]bool
		policy string
		allow  []string
		want   string // "" for valid
	}{
		{name: "default", policy: "NeverVerifyPreloadedImages"},
		{name: "always", policy: "AlwaysVerify"},
		{name: "never", policy: "NeverVerify"},
		{name: "allowlist", policy: "NeverVerifyAllowlistedImages", allow: []string{"registry.example/*", "registry.example/app"}},
		{name: "unknown", policy: "Sometimes",
			want: `option "Sometimes" specified for imagePullCredentialsVerificationPolicy. Valid options are "NeverVerify", "NeverVerifyPreloadedImages", "NeverVerifyAllowlistedImages" or "AlwaysVerify"`},
		{name: "allowlist without its policy", policy: "AlwaysVerify", allow: []string{"registry.example/app"},
			want: "can't set `preloadedImagesVerificationAllowlist` if `imagePullCredentialsVertificationPolicy` is not \"NeverVerifyAllowlistedImages\""},
		{name: "bad pattern", policy: "NeverVerifyAllowlistedImages", allow: []string{"registry.example/app:v1"},
			want: "invalid image pattern in `preloadedImagesVerificationAllowlist`: neither tag nor digest is accepted"},
		{name: "gate off, default", gates: off, policy: "NeverVerifyPreloadedImages"},
		{name: "gate off, policy", gates: off, policy: "AlwaysVerify",
			want: "`imagePullCredentialsVerificationPolicy` must not be set if KubeletEnsureSecretPulledImages feature gate is not enabled"},
		{name: "gate off, allowlist", gates: off, policy: "NeverVerifyPreloadedImages", allow: []string{"registry.example/app"},
			want: "`preloadedImagesVerificationAllowlist` must not be set if KubeletEnsureSecretPulledImages feature gate is not enabled"},
	}
	for _, tc := range tests {
		kc := &kubeletconfigv1beta1.KubeletConfiguration{FeatureGates: tc.gates,
			ImagePullCredentialsVerificationPolicy: kubeletconfigv1beta1.ImagePullCredentialsVerificationPolicy(tc.policy), PreloadedImagesVerificationAllowlist: tc.allow}
		ps := validatePullRecords(kc)
		switch {
		case tc.want == "" && len(ps) > 0:
			t.Errorf("%s: problems %v", tc.name, ps)
		case tc.want != "" && (len(ps) != 1 || !strings.Contains(ps[0].msg, tc.want)):
			t.Errorf("%s: problems %v, want one containing %q", tc.name, ps, tc.want)
		}
	}
}

func TestGateOn(t *testing.T) {
	kc := &kubeletconfigv1beta1.KubeletConfiguration{}
	if !gateOn(kc, GateEnsureSecretPulledImages) {
		t.Errorf("%s is off by default, want upstream's on", GateEnsureSecretPulledImages)
	}
	if gateOn(kc, "EventedPLEG") {
		t.Error("EventedPLEG (alpha) reads as on by default")
	}
	for _, g := range upstreamKubeletGates {
		if gateOn(kc, g.Name) != g.Default {
			t.Errorf("gate %s unset reads %v, want its default %v", g.Name, !g.Default, g.Default)
		}
	}
	kc.FeatureGates = map[string]bool{GateEnsureSecretPulledImages: false}
	if gateOn(kc, GateEnsureSecretPulledImages) || (&Config{Kubelet: *kc}).EnsureSecretPulledImages() {
		t.Error("a gate turned off reads as on")
	}
}
