package podcert

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

const upstreamManager = "k8s.io/kubernetes/pkg/kubelet/podcertificate"

// TestWordsMatchUpstream pins the messages, event reasons, key types and
// times berth copies from upstream's podcertificate manager (and the API's
// validation) to upstream's source (berth wraps with %w where upstream
// formats with %v).
func TestWordsMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	for _, tc := range []struct {
		pkg  string
		msgs []string
	}{
		{upstreamManager, []string{
			MsgNotIssued, msgDenied, msgFailed, msgDeniedEvent, msgFailedEvent, msgDeleted, reasonOverdue, msgOverdue,
			reasonExpired, msgExpired, msgCreateInitial, msgCreateRefresh, msgCreateOnAPI, msgGetSA, msgGetPCR, msgGetNode,
			msgUnknownKeyType, msgGenerate, msgEncodeKey, msgStubCSR, pcrGenerateName,
		}},
		{"k8s.io/kubernetes/pkg/apis/core/validation", []string{msgNoPath, msgSigner}},
	} {
		var lits []string
		for _, f := range src.Files(tc.pkg) {
			lits = append(lits, f.StringLiterals()...)
		}
		for _, msg := range tc.msgs {
			if up := strings.ReplaceAll(msg, "%w", "%v"); !slices.Contains(lits, up) && !slices.Contains(lits, msg) {
				t.Errorf("upstream's %s has no literal %q", tc.pkg, msg)
			}
		}
	}

	// The key types: those upstream's manager generates.
	keyType := regexp.MustCompile(`^[A-Z]+[0-9]+$`)
	var up []string
	for _, lit := range src.Func(upstreamManager, "generateKeyAndProof").StringLiterals() {
		if keyType.MatchString(lit) {
			up = append(up, lit)
		}
	}
	if !slices.Equal(up, KeyTypes()) {
		t.Errorf("KeyTypes() = %v, upstream's generateKeyAndProof %v", KeyTypes(), up)
	}

	for name, want := range map[string]time.Duration{"assumeDeletedThreshold": abandonAfter, "refreshOverdueDuration": overdueAfter} {
		if got := src.Value(upstreamManager, name).AsDuration(); got != want {
			t.Errorf("upstream %s = %v, berth %v", name, got, want)
		}
	}
	calls := src.Func(upstreamManager, "jitterDuration").Calls("mathrand", "Int64N")
	if len(calls) != 1 {
		t.Fatalf("upstream's jitterDuration has %d calls of mathrand.Int64N, want 1", len(calls))
	}
	if got := time.Duration(calls[0].Arg(0).AsInt()); got != maxJitter {
		t.Errorf("upstream's jitter is below %v, berth's %v", got, maxJitter)
	}

	const certs = "k8s.io/kubernetes/pkg/apis/certificates"
	for name, want := range map[string]int64{
		"MinMaxExpirationSeconds": minMaxExpirationSeconds, "MaxMaxExpirationSeconds": maxMaxExpirationSeconds,
		"KubernetesMaxMaxExpirationSeconds": kubernetesMaxMaxExpirationSeconds,
	} {
		if got := src.Value(certs, name).AsInt(); got != want {
			t.Errorf("upstream %s = %d, berth %d", name, got, want)
		}
	}
}
