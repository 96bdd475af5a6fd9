package config

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// TestConfigzView: /configz shows the header names of the manifest URL,
// never their values (issue 26, finding 7), and leaves the configuration
// it was given alone.
func TestConfigzView(t *testing.T) {
	kc := &kubeletconfigv1beta1.KubeletConfiguration{
		StaticPodURL: "https://manifests.example/pods",
		StaticPodURLHeader: map[string][]string{
			"Authorization": {"Bearer s3cret-token"},
			"X-Two":         {"a-secret", "b-secret"},
		},
	}
	kc.APIVersion, kc.Kind = "kubelet.config.k8s.io/v1beta1", "KubeletConfiguration"
	v := ConfigzView(kc)

	want := map[string][]string{"Authorization": {Redacted}, "X-Two": {Redacted, Redacted}}
	if diff := cmp.Diff(want, v.StaticPodURLHeader); diff != "" {
		t.Errorf("staticPodURLHeader (-want +got):\n%s", diff)
	}
	if v.StaticPodURL != kc.StaticPodURL || v.Kind != "" || v.APIVersion != "" {
		t.Errorf("view = url %q kind %q apiVersion %q; want the URL, no type meta", v.StaticPodURL, v.Kind, v.APIVersion)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"s3cret-token", "a-secret", "b-secret"} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("/configz shows %q: %s", secret, raw)
		}
	}
	if got := kc.StaticPodURLHeader["Authorization"][0]; got != "Bearer s3cret-token" {
		t.Errorf("the configuration itself was changed: Authorization = %q", got)
	}
}
