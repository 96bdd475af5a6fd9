package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

func TestValidateUserNamespaces(t *testing.T) {
	for _, tc := range []struct {
		name    string
		u       *kubeletconfigv1beta1.UserNamespaces
		want    []string
		wantIDs uint32
	}{
		{name: "unset"},
		{name: "idsPerPod unset", u: &kubeletconfigv1beta1.UserNamespaces{}},
		{name: "65536", u: &kubeletconfigv1beta1.UserNamespaces{IDsPerPod: ptr.To[int64](65536)}, wantIDs: 65536},
		{name: "a multiple", u: &kubeletconfigv1beta1.UserNamespaces{IDsPerPod: ptr.To[int64](4 * 65536)}, wantIDs: 4 * 65536},
		{name: "too small", u: &kubeletconfigv1beta1.UserNamespaces{IDsPerPod: ptr.To[int64](65535)},
			want: []string{`kubeletConfiguration field "userNamespaces": invalid value 65535: userNamespaces.idsPerPod must not be less than 65536`}},
		{name: "not a multiple", u: &kubeletconfigv1beta1.UserNamespaces{IDsPerPod: ptr.To[int64](65536 + 1)},
			want: []string{`kubeletConfiguration field "userNamespaces": invalid value 65537: userNamespaces.idsPerPod must be a multiple of 65536`}},
		{name: "too large", u: &kubeletconfigv1beta1.UserNamespaces{IDsPerPod: ptr.To[int64](1 << 32)},
			want: []string{`kubeletConfiguration field "userNamespaces": invalid value 4294967296: userNamespaces.idsPerPod must not be more than 4294967295`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, problemMsgs(validateUserNamespaces(tc.u))); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if tc.want != nil {
				return
			}
			c := &Config{}
			c.Kubelet.UserNamespaces = tc.u
			if got := c.IDsPerPod(); got != tc.wantIDs {
				t.Errorf("IDsPerPod = %d, want %d", got, tc.wantIDs)
			}
		})
	}
}

// TestUserNsUnitLengthMatchesUpstream pins the unit of idsPerPod to
// upstream's validation.
func TestUserNsUnitLengthMatchesUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	if up := src.Value("k8s.io/kubernetes/pkg/kubelet/apis/config/validation", "userNsUnitLength").AsInt(); up != userNsUnitLength {
		t.Errorf("userNsUnitLength %d, upstream %d", userNsUnitLength, up)
	}
}
