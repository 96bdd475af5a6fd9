package agent

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/containerconfig"
)

func TestCFSSettings(t *testing.T) {
	for _, tc := range []struct {
		name   string
		quota  *bool
		period time.Duration
		want   containerconfig.CFS
	}{
		{"defaults", nil, 100 * time.Millisecond, containerconfig.CFS{Period: 100000}},
		{"quota off", ptr.To(false), 100 * time.Millisecond, containerconfig.CFS{Unenforced: true, Period: 100000}},
		{"quota on, 5ms", ptr.To(true), 5 * time.Millisecond, containerconfig.CFS{Period: 5000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kc := &kubeletconfigv1beta1.KubeletConfiguration{CPUCFSQuota: tc.quota, CPUCFSQuotaPeriod: &metav1.Duration{Duration: tc.period}}
			if diff := cmp.Diff(tc.want, cfsSettings(kc)); diff != "" {
				t.Errorf("cfsSettings (-want +got):\n%s", diff)
			}
		})
	}
}
