package agent

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/config"
	"github.com/berthk8s/berth/internal/pod/podsource"
	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// sources holds the configured pod sources and their merger.
type sources struct {
	merger *podsource.Merger
	runs   []func(ctx context.Context) error
	clock  clock.Clock
}

// newSources builds the file and URL sources the configuration asks for,
// and the API source when berth joins a cluster (api is nil otherwise).
func newSources(cfg *config.Config, clk clock.WithTicker, api *podsource.APIWatcher) (*sources, error) {
	kc := &cfg.Kubelet
	var names []string
	var runs []func(ctx context.Context, out chan<- podsource.Snapshot) error
	if kc.StaticPodPath != "" {
		fs, err := podsource.NewFileSource(podsource.FileConfig{
			Path: kc.StaticPodPath, NodeName: cfg.NodeName, Period: kc.FileCheckFrequency.Duration, Clock: clk,
		})
		if err != nil {
			return nil, fmt.Errorf("create file pod source: %w", err)
		}
		names = append(names, podutil.FileSource)
		runs = append(runs, fs.Run)
	}
	if kc.StaticPodURL != "" {
		header := http.Header{}
		for k, vs := range kc.StaticPodURLHeader {
			for _, v := range vs {
				header.Add(k, v)
			}
		}
		hs, err := podsource.NewHTTPSource(podsource.HTTPConfig{
			URL: kc.StaticPodURL, Header: header, NodeName: cfg.NodeName,
			Period: kc.HTTPCheckFrequency.Duration, Clock: clk,
			Client: &http.Client{Timeout: 10 * time.Second},
		})
		if err != nil {
			return nil, fmt.Errorf("create URL pod source: %w", err)
		}
		names = append(names, podutil.HTTPSource)
		runs = append(runs, hs.Run)
	}
	if api != nil {
		names = append(names, podutil.APISource)
	}
	merger, err := podsource.NewMerger(podsource.MergerConfig{Sources: names, Clock: clk})
	if err != nil {
		return nil, fmt.Errorf("create pod source merger: %w", err)
	}
	s := &sources{merger: merger, clock: clk}
	for _, run := range runs {
		s.runs = append(s.runs, func(ctx context.Context) error { return run(ctx, merger.Snapshots()) })
	}
	if api != nil {
		s.runs = append(s.runs, func(ctx context.Context) error { return api.Run(ctx, merger.Snapshots(), merger.Changes()) })
	}
	return s, nil
}

// Updates is the merged stream of pod updates.
func (s *sources) Updates() <-chan podsource.Update { return s.merger.Updates() }

// Ready reports whether every source has been seen.
func (s *sources) Ready() bool { return s.merger.SourcesReady() }

// Run runs the merger and every source until ctx ends.
func (s *sources) Run(ctx context.Context) error {
	g := newGroup(ctx, stopBudget, s.clock)
	g.Go("merger", s.merger.Run)
	for i, run := range s.runs {
		g.Go(fmt.Sprintf("source-%d", i), run)
	}
	return g.Wait()
}
