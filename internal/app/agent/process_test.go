package agent

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/berthk8s/berth/internal/config"
)

// testProcess returns setters that leave the test process as it is.
func testProcess() processSetters {
	return processSetters{setBlockProfileRate: func(int) {}, setNumFiles: func(uint64) error { return nil }}
}

// processCalls records what tuneProcess set.
type processCalls struct {
	blockProfileRate []int
	numFiles         []uint64
}

func (c *processCalls) setters() processSetters {
	return processSetters{
		setBlockProfileRate: func(rate int) { c.blockProfileRate = append(c.blockProfileRate, rate) },
		setNumFiles: func(n uint64) error {
			c.numFiles = append(c.numFiles, n)
			return errors.New("not permitted")
		},
	}
}

func TestTuneProcess(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(cfg *config.Config)
		want   processCalls
	}{
		{name: "defaults", want: processCalls{numFiles: []uint64{1000000}}},
		{name: "contention profiling", mutate: func(cfg *config.Config) { cfg.Kubelet.EnableContentionProfiling = true },
			want: processCalls{blockProfileRate: []int{1}, numFiles: []uint64{1000000}}},
		{name: "maxOpenFiles", mutate: func(cfg *config.Config) { cfg.Kubelet.MaxOpenFiles = 4096 },
			want: processCalls{numFiles: []uint64{4096}}},
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

// TestSetNumFiles sets the real limit, soft and hard, to the current hard
// limit (which needs no privilege) and checks it reads back, then restores
// the test process's limits.
func TestSetNumFiles(t *testing.T) {
	var before unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &before); err != nil {
		t.Fatal(err)
	}
	if before.Max == unix.RLIM_INFINITY {
		t.Skip("RLIMIT_NOFILE has no hard limit to set the soft one to")
	}
	t.Cleanup(func() {
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &before); err != nil {
			t.Errorf("restore RLIMIT_NOFILE: %v", err)
		}
	})
	if err := setNumFiles(before.Max); err != nil {
		t.Fatalf("setNumFiles(%d): %v", before.Max, err)
	}
	var after unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &after); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(unix.Rlimit{Cur: before.Max, Max: before.Max}, after); diff != "" {
		t.Errorf("RLIMIT_NOFILE after setNumFiles (-want +got):\n%s", diff)
	}
}
