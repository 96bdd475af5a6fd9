package volume

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/volumes/atomicwriter"
)

var t0 = time.Date(2026, 11, 22, 20, 0, 0, 0, time.UTC)

func issued(seconds int64, at time.Time) *authenticationv1.TokenRequest {
	return &authenticationv1.TokenRequest{
		Spec:   authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds},
		Status: authenticationv1.TokenRequestStatus{Token: "jwt", ExpirationTimestamp: metav1.NewTime(at.Add(time.Duration(seconds) * time.Second))},
	}
}

func TestNeedsRefresh(t *testing.T) {
	year := int64(365 * 24 * 3600)
	tests := []struct {
		name string
		tr   *authenticationv1.TokenRequest
		now  time.Time
		want bool
	}{
		{name: "none", tr: nil, now: t0, want: true},
		{name: "fresh", tr: issued(3607, t0), now: t0.Add(time.Minute), want: false},
		{name: "just before 80%", tr: issued(3600, t0), now: t0.Add(2879 * time.Second), want: false},
		{name: "at 80%", tr: issued(3600, t0), now: t0.Add(2880 * time.Second), want: true},
		{name: "expired", tr: issued(3600, t0), now: t0.Add(2 * time.Hour), want: true},
		{name: "long token before a day", tr: issued(year, t0), now: t0.Add(23 * time.Hour), want: false},
		{name: "long token after a day", tr: issued(year, t0), now: t0.Add(24 * time.Hour), want: true},
		{name: "no token text", tr: &authenticationv1.TokenRequest{}, now: t0, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := needsRefresh(tt.tr, tt.now); got != tt.want {
				t.Errorf("needsRefresh() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestTokenRequest(t *testing.T) {
	pod := testPod()
	tests := []struct {
		name string
		src  corev1.ServiceAccountTokenProjection
		want authenticationv1.TokenRequestSpec
	}{
		{name: "kube-api-access", src: corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3607)},
			want: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3607)}},
		{name: "audience", src: corev1.ServiceAccountTokenProjection{Path: "t", Audience: "vault", ExpirationSeconds: ptr.To[int64](7200)},
			want: authenticationv1.TokenRequestSpec{Audiences: []string{"vault"}, ExpirationSeconds: ptr.To[int64](7200)}},
		{name: "default lifetime", src: corev1.ServiceAccountTokenProjection{Path: "t"},
			want: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}},
		{name: "minimum lifetime", src: corev1.ServiceAccountTokenProjection{Path: "t", ExpirationSeconds: ptr.To[int64](60)},
			want: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.BoundObjectRef = &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: "web", UID: "uid-1"}
			if diff := cmp.Diff(tt.want, tokenRequest(pod, &tt.src).Spec); diff != "" {
				t.Errorf("tokenRequest() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTokenFile(t *testing.T) {
	withSC := func(sc *corev1.PodSecurityContext, containerUser *int64) *corev1.Pod {
		pod := testPod()
		pod.Spec.SecurityContext = sc
		if containerUser != nil {
			pod.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{RunAsUser: containerUser}
		}
		return pod
	}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want atomicwriter.File
	}{
		{name: "no fsGroup", pod: testPod(), want: atomicwriter.File{Data: []byte("jwt"), Mode: 0o644}},
		{name: "fsGroup", pod: withSC(&corev1.PodSecurityContext{FSGroup: ptr.To[int64](2000)}, nil), want: atomicwriter.File{Data: []byte("jwt"), Mode: 0o600}},
		{name: "pod runAsUser", pod: withSC(&corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000)}, nil), want: atomicwriter.File{Data: []byte("jwt"), Mode: 0o600, FsUser: ptr.To[int64](1000)}},
		{name: "container overrides", pod: withSC(&corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000)}, ptr.To[int64](7)), want: atomicwriter.File{Data: []byte("jwt"), Mode: 0o600, FsUser: ptr.To[int64](7)}},
		{name: "users differ", pod: func() *corev1.Pod {
			p := withSC(&corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000)}, nil)
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "d", SecurityContext: &corev1.SecurityContext{RunAsUser: ptr.To[int64](5)}})
			return p
		}(), want: atomicwriter.File{Data: []byte("jwt"), Mode: 0o644}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tokenFile(tt.pod, "jwt", 0o644)); diff != "" {
				t.Errorf("tokenFile() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
