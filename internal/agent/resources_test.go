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

func TestResourceSettings(t *testing.T) {
	cfs := containerconfig.CFS{Period: 100000}
	for _, tc := range []struct {
		name    string
		v2      bool
		single  *bool
		want    containerconfig.ResourceSettings
		wantErr string
	}{
		{name: "v2, unset: the whole container is killed", v2: true, want: containerconfig.ResourceSettings{CFS: cfs, OOMGroup: true}},
		{name: "v2, false", v2: true, single: ptr.To(false), want: containerconfig.ResourceSettings{CFS: cfs, OOMGroup: true}},
		{name: "v2, true: single process", v2: true, single: ptr.To(true), want: containerconfig.ResourceSettings{CFS: cfs}},
		{name: "v1, unset", want: containerconfig.ResourceSettings{CFS: cfs}},
		{name: "v1, true", single: ptr.To(true), want: containerconfig.ResourceSettings{CFS: cfs}},
		{name: "v1, false: refused", single: ptr.To(false), wantErr: "singleProcessOOMKill must not be explicitly set to false when using cgroup v1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kc := &kubeletconfigv1beta1.KubeletConfiguration{CPUCFSQuotaPeriod: &metav1.Duration{Duration: 100 * time.Millisecond}, SingleProcessOOMKill: tc.single}
			got, err := resourceSettings(kc, tc.v2)
			var gotErr string
			if err != nil {
				gotErr = err.Error()
			}
			if gotErr != tc.wantErr {
				t.Fatalf("resourceSettings error %q, want %q", gotErr, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("resourceSettings (-want +got):\n%s", diff)
			}
		})
	}
}
