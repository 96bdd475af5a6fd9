package podcert

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func pcrWith(conds ...string) *certificatesv1.PodCertificateRequest {
	pcr := &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "req-1"}}
	for _, c := range conds {
		pcr.Status.Conditions = append(pcr.Status.Conditions, metav1.Condition{Type: c, Status: metav1.ConditionTrue, Reason: "R", Message: "M"})
	}
	if len(conds) == 1 && conds[0] == certificatesv1.PodCertificateRequestConditionTypeIssued {
		pcr.Status.CertificateChain = "chain"
		pcr.Status.BeginRefreshAt = &metav1.Time{Time: t0.Add(time.Hour)}
		pcr.Status.NotAfter = &metav1.Time{Time: t0.Add(2 * time.Hour)}
	}
	return pcr
}

// TestObserve walks every waiting phase through every answer of the API.
func TestObserve(t *testing.T) {
	waiting := map[phase]record{
		phaseWait: {phase: phaseWait, pendingKey: []byte("new"), pending: "req-1", abandonAt: t0.Add(abandonAfter)},
		phaseWaitRefresh: {phase: phaseWaitRefresh, key: []byte("old"), chain: []byte("old chain"), refreshAt: t0.Add(-time.Minute),
			notAfter: t0.Add(time.Hour), pendingKey: []byte("new"), pending: "req-1", abandonAt: t0.Add(abandonAfter)},
	}
	for _, tc := range []struct {
		name      string
		pcr       *certificatesv1.PodCertificateRequest
		now       time.Time
		want      map[phase]phase
		wantWarn  string
		wantError bool
	}{
		{"not shown yet", nil, t0, map[phase]phase{phaseWait: phaseWait, phaseWaitRefresh: phaseWaitRefresh}, "", false},
		{"gone", nil, t0.Add(abandonAfter + time.Second), map[phase]phase{phaseWait: phaseInitial, phaseWaitRefresh: phaseFresh}, "", true},
		{"pending", pcrWith(), t0, map[phase]phase{phaseWait: phaseWait, phaseWaitRefresh: phaseWaitRefresh}, "", false},
		{"issued", pcrWith("Issued"), t0, map[phase]phase{phaseWait: phaseFresh, phaseWaitRefresh: phaseFresh}, "", false},
		{"denied", pcrWith("Denied"), t0, map[phase]phase{phaseWait: phaseDenied, phaseWaitRefresh: phaseDenied},
			`Denied PodCertificateRequest ns/req-1 was denied, reason="R", message="M"`, false},
		{"failed", pcrWith("Failed"), t0, map[phase]phase{phaseWait: phaseFailed, phaseWaitRefresh: phaseFailed},
			`Failed PodCertificateRequest ns/req-1 failed, reason="R", message="M"`, false},
	} {
		for from, want := range tc.want {
			t.Run(tc.name+"/"+from.String(), func(t *testing.T) {
				got, ws, err := waiting[from].observe(tc.pcr, "ns", tc.now, time.Minute)
				if got.phase != want {
					t.Errorf("phase %v, want %v", got.phase, want)
				}
				if (err != nil) != tc.wantError {
					t.Errorf("error %v, want one: %v", err, tc.wantError)
				}
				var warn []string
				for _, w := range ws {
					warn = append(warn, w.reason+" "+w.message)
				}
				if tc.wantWarn != "" && (len(warn) != 1 || warn[0] != tc.wantWarn) {
					t.Errorf("warnings %q, want %q", warn, tc.wantWarn)
				}
				switch {
				case want == phaseFresh && tc.pcr != nil:
					if string(got.key) != "new" || got.pending != "" || !got.refreshAt.Equal(t0.Add(time.Hour+time.Minute)) {
						t.Errorf("fresh record %+v: want the new key, no request pending, refresh at beginRefreshAt+jitter", got)
					}
				case want == phaseInitial:
					if got.key != nil || got.pending != "" {
						t.Errorf("initial record %+v keeps a key or request", got)
					}
				}
				if from == phaseWaitRefresh && (want == phaseWaitRefresh || want == phaseFresh && tc.pcr == nil) && string(got.key) != "old" {
					t.Errorf("the current certificate was dropped: %+v", got)
				}
			})
		}
	}
	for _, p := range []phase{phaseInitial, phaseFresh, phaseDenied, phaseFailed} {
		r := record{phase: p}
		if got, ws, err := r.observe(pcrWith("Issued"), "ns", t0, 0); got.phase != p || ws != nil || err != nil {
			t.Errorf("%v observed a request: %v %v %v", p, got.phase, ws, err)
		}
	}
}

// TestNeedsRequest: a request is made first, then at the refresh time.
func TestNeedsRequest(t *testing.T) {
	fresh := record{phase: phaseFresh, refreshAt: t0}
	for _, tc := range []struct {
		r    record
		now  time.Time
		want bool
	}{
		{record{}, t0, true},
		{fresh, t0.Add(-time.Nanosecond), false},
		{fresh, t0, true},
		{record{phase: phaseWait}, t0, false},
		{record{phase: phaseWaitRefresh, refreshAt: t0.Add(-time.Hour)}, t0, false},
		{record{phase: phaseDenied}, t0, false},
		{record{phase: phaseFailed}, t0, false},
	} {
		if got := tc.r.needsRequest(tc.now); got != tc.want {
			t.Errorf("%v at %v: needsRequest %v, want %v", tc.r.phase, tc.now.Sub(t0), got, tc.want)
		}
	}
}

// TestCleanChain: what lies between and in the signer's PEM blocks is
// dropped, as upstream's cleanCertificateChain.
func TestCleanChain(t *testing.T) {
	in := "junk\n-----BEGIN CERTIFICATE-----\nHeader: x\n\nAAEC\n-----END CERTIFICATE-----\nmore junk\n-----BEGIN OTHER-----\nAwQ=\n-----END OTHER-----\n"
	want := "-----BEGIN CERTIFICATE-----\nAAEC\n-----END CERTIFICATE-----\n-----BEGIN CERTIFICATE-----\nAwQ=\n-----END CERTIFICATE-----\n"
	if diff := cmp.Diff(want, string(cleanChain(in))); diff != "" {
		t.Errorf("cleanChain (-want +got):\n%s", diff)
	}
	if got := cleanChain("no pem"); len(got) != 0 {
		t.Errorf("cleanChain of no PEM = %q", got)
	}
}

// TestForgetOverwritesKeys: Forget overwrites the key bytes it held.
func TestForgetOverwritesKeys(t *testing.T) {
	key, pending := []byte("secret"), []byte("pending")
	m := &Manager{pods: map[types.UID]*podRecords{"uid": {byKey: map[sourceKey]*record{{"v", 0}: {phase: phaseWaitRefresh, key: key, pendingKey: pending}}}}}
	m.Forget(context.Background(), "uid")
	if strings.Trim(string(key)+string(pending), "\x00") != "" || len(m.pods) != 0 {
		t.Errorf("after Forget: key %q, pending %q, %d pods", key, pending, len(m.pods))
	}
}
