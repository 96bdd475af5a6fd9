package agent

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berthk8s/berth/internal/config"
)

// processCalls records what tuneProcess set.
type processCalls struct {
	blockProfileRate []int
}

func (c *processCalls) setters() processSetters {
	return processSetters{
		setBlockProfileRate: func(rate int) { c.blockProfileRate = append(c.blockProfileRate, rate) },
	}
}

func TestTuneProcess(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(cfg *config.Config)
		want   processCalls
	}{
		{name: "defaults"},
		{name: "contention profiling", mutate: func(cfg *config.Config) { cfg.Kubelet.EnableContentionProfiling = true },
			want: processCalls{blockProfileRate: []int{1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &config.Config{}
			config.SetDefaults(&cfg.Kubelet)
			if tc.mutate != nil {
				tc.mutate(cfg)
			}
			var got processCalls
			tuneProcess(context.Background(), cfg, got.setters())
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(processCalls{})); diff != "" {
				t.Errorf("tuneProcess calls (-want +got):\n%s", diff)
			}
		})
	}
}
