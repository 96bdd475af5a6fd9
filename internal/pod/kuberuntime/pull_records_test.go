package kuberuntime

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/berthk8s/berth/internal/images/pullrecords"
)

// TestPrivateImageNotHandedToOtherNamespaces: an image pulled with team's
// pull secret is present on the node, yet a pod of another namespace
// without access must pull it itself (and the registry refuses it), a
// Never-policy pod is told it is absent, and a pod that presents the same
// credentials from its own secret uses it without a pull.
func TestPrivateImageNotHandedToOtherNamespaces(t *testing.T) {
	const image = "127.0.0.1:5000/private/app:1.0"
	store, err := pullrecords.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	policy, err := pullrecords.NewPolicy(kubeletconfigv1beta1.NeverVerifyPreloadedImages, nil)
	if err != nil {
		t.Fatal(err)
	}
	var records *pullrecords.Manager
	e := newEnv(t, func(c *Config) {
		records, err = pullrecords.New(context.Background(), pullrecords.Config{Store: store, Policy: policy, Clock: c.Clock})
		if err != nil {
			t.Fatal(err)
		}
		c.PullRecords = records
	})
	e.fake.AllowPull(image)
	images := &authImages{ImageServiceClient: e.m.cfg.Images, want: map[string]string{image: "u:p"}}
	e.m.cfg.Images = images
	auth := `{"127.0.0.1:5000":{"auth":"` + b64("u:p") + `"}}`
	secrets := map[string]*corev1.Secret{"team/regcred": dockerConfigJSONSecret("regcred", auth), "copy/mine": dockerConfigJSONSecret("mine", auth)}
	secrets["team/regcred"].Namespace, secrets["team/regcred"].UID = "team", "uid-team"
	secrets["copy/mine"].Namespace, secrets["copy/mine"].UID = "copy", "uid-copy"
	e.m.cfg.PullSecrets = func(_ context.Context, ns, name string) (*corev1.Secret, error) {
		if s, ok := secrets[ns+"/"+name]; ok {
			return s, nil
		}
		return nil, errors.New(`secrets "` + name + `" not found`)
	}
	pod := func(ns, name string, policy corev1.PullPolicy, secret string) *corev1.Pod {
		p := basePod()
		p.Namespace, p.Name, p.UID = ns, name, types.UID("uid-"+ns+"-"+name)
		p.Spec.Containers[0].Image, p.Spec.Containers[0].ImagePullPolicy = image, policy
		if secret != "" {
			p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: secret}}
		}
		return p
	}

	owner := pod("team", "owner", corev1.PullIfNotPresent, "regcred")
	if f := e.sync(owner); len(f) != 0 {
		t.Fatalf("owner: failures %v", f)
	}
	e.events.take()

	if f := e.sync(pod("other", "thief", corev1.PullIfNotPresent, ""))["app"]; f.Reason != ReasonErrImagePull || !strings.Contains(f.Message, "401 Unauthorized") {
		t.Errorf("other namespace, IfNotPresent: failure %+v, want ErrImagePull with the registry's 401", f)
	}
	if f := e.sync(pod("other", "never", corev1.PullNever, ""))["app"]; f.Reason != ReasonErrImageNeverPull ||
		f.Message != `Container image "`+image+`" is not present with pull policy of Never` {
		t.Errorf("other namespace, Never: failure %+v, want ErrImageNeverPull saying the image is not present", f)
	}
	e.events.take()
	if f := e.sync(pod("copy", "same-creds", corev1.PullNever, "mine")); len(f) != 0 {
		t.Errorf("a pod with the same credentials: failures %v", f)
	}
	if evs := e.events.take(); !hasEvent(evs, `Normal Pulled Container image "`+image+`" already present on machine and can be accessed by the pod`) {
		t.Errorf("events %q lack upstream's Pulled event for a verified image", evs)
	}
	want := []string{image + " u:p", image + " anonymous"}
	if diff := cmp.Diff(want, images.attempts()); diff != "" {
		t.Errorf("pull attempts (-want +got):\n%s", diff)
	}
}
