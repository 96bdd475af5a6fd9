package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// stageSettle is how long the harness waits after a burst's last pod is
// Running before it reads the kubelet's log and metrics: the upstream
// kubelet logs a pod's start once its own watch shows the pod running.
const stageSettle = 2 * time.Second

// burst creates st.Pods pods and measures them (their start, its stages,
// the kubelet's peak use), samples the steady state when st says so
// (planBursts), then deletes them.
func (r *runner) burst(ctx context.Context, col string, n *Node, rep int, st burstStep) error {
	b := st.Pods
	run := fmt.Sprintf("%s-%s-%d-b%d", r.conf, col, rep, b)
	before, scrapeErr := r.scrape(ctx)
	stopPeak := r.samplePeak(ctx, n)
	perPod, all, spans, err := Burst(ctx, r.client, n.name, run, b)
	peak := stopPeak()
	if err != nil {
		return fmt.Errorf("%w (%v)", err, n.Running())
	}
	r.samples.Add(fmt.Sprintf("burst%d_pod", b), col, perPod...)
	r.samples.Add(repeatKey(b, rep), col, perPod...)
	r.samples.Add(fmt.Sprintf("burst%d_all", b), col, all)
	r.addPeak(fmt.Sprintf("burst%d", b), col, peak)
	r.cfg.Logf("%s: %d pods Running in %.2fs", run, b, all)
	time.Sleep(stageSettle)
	if err := r.stages(col, n, b, spans); err != nil {
		r.cfg.Logf("%s: no stage split from the log: %v", run, err)
	}
	if scrapeErr == nil {
		r.metricStages(ctx, col, b, before)
	} else {
		r.cfg.Logf("%s: no stage metrics: %v", run, scrapeErr)
	}
	if st.Steady != "" {
		if err := r.steady(ctx, st.Steady, col, n, "system:node:"+n.name); err != nil {
			return err
		}
	}
	stopPeak = r.samplePeak(ctx, n)
	perPod, all, err = DeleteAll(ctx, r.client, run, b)
	peak = stopPeak()
	if err != nil {
		return fmt.Errorf("%w (%v)", err, n.Running())
	}
	r.samples.Add(fmt.Sprintf("delete%d_pod", b), col, perPod...)
	r.samples.Add(fmt.Sprintf("delete%d_all", b), col, all)
	r.addPeak(fmt.Sprintf("delete%d", b), col, peak)
	r.cfg.Logf("%s: %d pods gone in %.2fs", run, b, all)
	return nil
}

// samplePeak samples the kubelet (with its children) once a second until
// the returned function is called, which returns the samples.
func (r *runner) samplePeak(ctx context.Context, n *Node) func() []procSample {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan []procSample, 1)
	go func() {
		got, err := sampleUntilDone(ctx, n.Pid())
		if err != nil {
			r.cfg.Logf("sample %s during a burst: %v", n.name, err)
			got = nil
		}
		done <- got[n.Pid()]
	}()
	return func() []procSample {
		cancel()
		return <-done
	}
}

// addPeak records the kubelet's peak RSS and CPU during a burst, and the
// CPU time it used.
func (r *runner) addPeak(prefix, col string, samples []procSample) {
	if len(samples) == 0 {
		return
	}
	_, rss := usage(samples)
	r.samples.Add(prefix+"_peak_rss", col, slices.Max(rss))
	if cpu, ok := peakCPU(samples); ok {
		r.samples.Add(prefix+"_peak_cpu", col, cpu)
	}
	r.samples.Add(prefix+"_cpu_s", col, cpuSeconds(samples))
}

// stages reads the kubelet's log and records each pod's stages.
func (r *runner) stages(col string, n *Node, b int, spans map[string]Span) error {
	msg, stages := upstreamStartMsg, upstreamStages
	if col == ColBerth {
		msg, stages = berthStagesMsg, berthStages
	}
	f, err := os.Open(n.logFile.Name())
	if err != nil {
		return err
	}
	defer f.Close()
	lines, err := parseStageLines(f, msg)
	if err != nil {
		return err
	}
	found := 0
	for pod, span := range spans {
		moments, ok := lines[pod]
		if !ok {
			continue
		}
		found++
		for stage, v := range splitStages(stages, span.Requested, span.Observed, moments) {
			r.samples.Add(fmt.Sprintf("burst%d_stage_%s", b, stage), col, v)
		}
	}
	if found < len(spans) {
		return fmt.Errorf("%d of %d pods have a %q line", found, len(spans), msg)
	}
	return nil
}

// metricStages scrapes the kubelet again and records the mean of every
// stage metric over the burst.
func (r *runner) metricStages(ctx context.Context, col string, b int, before map[string]*dto.MetricFamily) {
	after, err := r.scrape(ctx)
	if err != nil {
		r.cfg.Logf("burst %d: no stage metrics: %v", b, err)
		return
	}
	for key, v := range histogramMeans(before, after) {
		r.samples.Add(fmt.Sprintf("burst%d_%s", b, key), col, v)
	}
}

// heapDir is where berth's heap profiles go.
func (r *runner) heapDir() string { return filepath.Join(r.cfg.WorkDir, "heap") }

// heapLadder brings berth's Node from 0 pods to every count of heapSteps
// in turn (each step a burst of the difference), profiles its heap once
// the pods are Running and the kubelet has settled, then deletes them all.
func (r *runner) heapLadder(ctx context.Context, n *Node) error {
	type step struct {
		run  string
		pods int
	}
	var made []step
	defer func() {
		for _, s := range made {
			if _, _, err := DeleteAll(ctx, r.client, s.run, s.pods); err != nil {
				r.cfg.Logf("heap ladder: delete %s: %v", s.run, err)
			}
		}
	}()
	have := 0
	for _, target := range heapSteps(r.cfg.Density, r.cfg.MaxPods) {
		if target == 0 {
			continue // profiled on the fresh Node, before the bursts
		}
		s := step{run: fmt.Sprintf("%s-heap%d", r.conf, target), pods: target - have}
		if _, _, _, err := Burst(ctx, r.client, n.name, s.run, s.pods); err != nil {
			return fmt.Errorf("heap ladder to %d pods: %w (%v)", target, err, n.Running())
		}
		made, have = append(made, s), target
		time.Sleep(r.cfg.Settle)
		r.heap(ctx, r.heapDir(), target)
	}
	return nil
}
