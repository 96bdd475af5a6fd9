package pullrecords

import (
	"strings"
	"testing"

	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

func TestPolicy(t *testing.T) {
	allow := []string{"registry.example/team/app", "mirror.example/*", "docker.io/library/*"}
	tests := []struct {
		policy          kubeletconfigv1beta1.ImagePullCredentialsVerificationPolicy
		image           string
		pulledByKubelet bool
		want            bool
	}{
		{kubeletconfigv1beta1.NeverVerify, "private.example/app:1", true, false},
		{kubeletconfigv1beta1.NeverVerifyPreloadedImages, "private.example/app:1", true, true},
		{kubeletconfigv1beta1.NeverVerifyPreloadedImages, "private.example/app:1", false, false},
		{kubeletconfigv1beta1.AlwaysVerify, "private.example/app:1", false, true},
		{kubeletconfigv1beta1.NeverVerifyAllowlistedImages, "registry.example/team/app:v2", true, false},
		{kubeletconfigv1beta1.NeverVerifyAllowlistedImages, "registry.example/team/app@sha256:" + strings.Repeat("a", 64), true, false},
		{kubeletconfigv1beta1.NeverVerifyAllowlistedImages, "registry.example/team/app2:v2", false, true},
		{kubeletconfigv1beta1.NeverVerifyAllowlistedImages, "mirror.example/any/depth/img:1", true, false},
		{kubeletconfigv1beta1.NeverVerifyAllowlistedImages, "mirror.examplex/img:1", false, true},
		// Names are not normalised, as upstream: "busybox" is not docker.io/library/busybox.
		{kubeletconfigv1beta1.NeverVerifyAllowlistedImages, "busybox:1.36", false, true},
		{kubeletconfigv1beta1.NeverVerifyAllowlistedImages, "docker.io/library/busybox:1.36", false, false},
	}
	for _, tc := range tests {
		p, err := NewPolicy(tc.policy, allowOnlyFor(tc.policy, allow))
		if err != nil {
			t.Fatal(err)
		}
		if got := p.RequiresVerification(tc.image, tc.pulledByKubelet); got != tc.want {
			t.Errorf("%s: RequiresVerification(%q, %t) = %t, want %t", tc.policy, tc.image, tc.pulledByKubelet, got, tc.want)
		}
	}
	if _, err := NewPolicy("Sometimes", nil); err == nil || !strings.Contains(err.Error(), "unknown image pull credential verification policy: Sometimes") {
		t.Errorf("unknown policy: %v", err)
	}
}

func allowOnlyFor(p kubeletconfigv1beta1.ImagePullCredentialsVerificationPolicy, allow []string) []string {
	if p == kubeletconfigv1beta1.NeverVerifyAllowlistedImages {
		return allow
	}
	return nil
}

func TestValidateAllowlist(t *testing.T) {
	tests := []struct {
		pattern, err string
	}{
		{"registry.example/app", ""},
		{"registry.example/*", ""},
		{"registry.example:5000/a/b/*", ""},
		{" registry.example/app", "leading/trailing spaces are not allowed"},
		{"", "the supplied pattern is too short"},
		{"/*", "at least registry hostname is required"},
		{"registry.example/a*", "only patterns ending with '/*' are allowed"},
		{"*", "only patterns ending with '/*' are allowed"},
		{"registry.example/app:v1", "neither tag nor digest is accepted"},
		{"registry.example/app@sha256:" + strings.Repeat("b", 64), "neither tag nor digest is accepted"},
		{"Registry.example/UPPER", "failed to parse as an image name"},
	}
	for _, tc := range tests {
		err := ValidateAllowlist([]string{tc.pattern})
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%q: %v", tc.pattern, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: error %v, want one containing %q", tc.pattern, err, tc.err)
		}
	}
}

func TestTrimTagDigest(t *testing.T) {
	d := "sha256:" + strings.Repeat("c", 64)
	for in, want := range map[string]string{
		"busybox":                        "busybox",
		"busybox:1.36":                   "busybox",
		"localhost:5000/app:v1":          "localhost:5000/app",
		"localhost:5000/app":             "localhost:5000/app",
		"docker.io/library/app:v1@" + d:  "docker.io/library/app",
		"registry.example/team/app@" + d: "registry.example/team/app",
	} {
		got, err := trimTagDigest(in)
		if err != nil || got != want {
			t.Errorf("trimTagDigest(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := trimTagDigest("app/UPPER"); err == nil {
		t.Error("trimTagDigest accepted an invalid name")
	}
}
