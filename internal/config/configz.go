package config

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// Redacted stands for a secret value /configz does not show.
const Redacted = "<redacted>"

// ConfigzView is the effective configuration as /configz shows it: the
// versioned fields without kind and apiVersion, as upstream, with the
// values of staticPodURLHeader redacted. Those headers authenticate berth
// to the manifest URL (an Authorization header, a token), and /configz
// answers anyone the node's authorizer lets read the proxy subresource;
// upstream shows them, berth keeps each header's name and number of
// values and hides the values. kc is not changed.
func ConfigzView(kc *kubeletconfigv1beta1.KubeletConfiguration) kubeletconfigv1beta1.KubeletConfiguration {
	c := *kc.DeepCopy()
	c.TypeMeta = metav1.TypeMeta{}
	for name, values := range c.StaticPodURLHeader {
		redacted := make([]string, len(values))
		for i := range redacted {
			redacted[i] = Redacted
		}
		c.StaticPodURLHeader[name] = redacted
	}
	return c
}
