package hostsetup

import (
	"context"
	"strings"
	"syscall"
	"testing"

	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
)

func TestApplyOOMScoreAdj(t *testing.T) {
	for _, tc := range []struct {
		name     string
		err      error
		want     bool
		wantLogs []string
	}{
		{name: "written", want: true},
		{name: "kernel refuses", err: syscall.EACCES, want: false,
			wantLogs: []string{"Warning: cannot set berth's own OOM score adjustment, running on with the current one", "oomScoreAdj=-999", "permission denied"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
			ctx := klog.NewContext(context.Background(), logger)
			var written []string
			write := func(v string) error {
				written = append(written, v)
				return tc.err
			}
			if got := ApplyOOMScoreAdj(ctx, write, -999); got != tc.want {
				t.Errorf("ApplyOOMScoreAdj = %v, want %v", got, tc.want)
			}
			if len(written) != 1 || written[0] != "-999" {
				t.Errorf("written %q, want one write of -999", written)
			}
			logs := logger.GetSink().(ktesting.Underlier).GetBuffer().String()
			for _, want := range tc.wantLogs {
				if !strings.Contains(logs, want) {
					t.Errorf("logs lack %q:\n%s", want, logs)
				}
			}
			if len(tc.wantLogs) == 0 && logs != "" {
				t.Errorf("unexpected logs:\n%s", logs)
			}
			if n := strings.Count(logs, "Warning:"); tc.err != nil && n != 1 {
				t.Errorf("warning logged %d times, want once", n)
			}
		})
	}
}
