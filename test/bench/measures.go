package bench

import "strconv"

// Measures lists every figure of the table, in order, for the given burst
// sizes and density scenario (0: none).
func Measures(bursts []int, density int) []Measure {
	m := []Measure{{Key: "start_ready", Title: "process start to Node Ready", Unit: "s", Dist: true}}
	for _, b := range allBursts(bursts, density) {
		m = append(m, burstMeasures(strconv.Itoa(b))...)
	}
	loads := []struct{ key, title string }{{loadIdle, "0 pods"}, {loadBusy, strconv.Itoa(maxBurst(bursts)) + " pods"}}
	if density > 0 {
		loads = append(loads, struct{ key, title string }{loadDense, strconv.Itoa(density) + " pods"})
	}
	for _, load := range loads {
		m = append(m,
			Measure{Key: load.key + "_rss", Title: "kubelet RSS, " + load.title, Unit: "MiB", Dist: true},
			Measure{Key: load.key + "_cpu", Title: "kubelet CPU, " + load.title, Unit: "% core", Dist: true},
			Measure{Key: load.key + "_containerd_rss", Title: "containerd RSS, " + load.title, Unit: "MiB", Dist: true},
			Measure{Key: load.key + "_containerd_cpu", Title: "containerd CPU, " + load.title, Unit: "% core", Dist: true},
			Measure{Key: load.key + "_cpu_spm", Title: "kubelet CPU time, " + load.title, Unit: "s/min"},
			Measure{Key: load.key + "_containerd_cpu_spm", Title: "containerd CPU time, " + load.title, Unit: "s/min"},
		)
	}
	for _, load := range loads[1:] {
		m = append(m, Measure{Key: apiKey(load.key), Title: "API requests, " + load.title, Unit: "req/min"})
	}
	for _, n := range heapSteps(density, max(maxBurst(bursts), density, upstreamMaxPods)) {
		m = append(m, Measure{Key: "heap_inuse_" + strconv.Itoa(n), Title: "berth heap in use (HeapInuse), " + strconv.Itoa(n) + " pods", Unit: "MiB"})
	}
	return append(m, Measure{Key: "binary_size", Title: "binary size", Unit: "MiB"})
}

// apiKey is the key of the API requests per minute in the steady state
// of load (api_rpm for the largest burst's, as before the density
// scenario).
func apiKey(load string) string {
	if load == loadBusy {
		return "api_rpm"
	}
	return "api_rpm_" + load
}

// burstMeasures are the figures of the burst of n pods.
func burstMeasures(n string) []Measure {
	b := "burst " + n + ": "
	m := []Measure{
		{Key: "burst" + n + "_pod", Title: b + "create to Running, per pod", Unit: "s", Dist: true},
		{Key: "burst" + n + "_all", Title: b + "all Running", Unit: "s", Dist: true},
		{Key: "burst" + n + "_added_p50", Title: b + "kubelet-added latency (p50 - floor p50)", Unit: "s"},
		{Key: "burst" + n + "_added_p99", Title: b + "kubelet-added latency (p99 - floor p99)", Unit: "s"},
	}
	for _, st := range StageNames() {
		m = append(m, Measure{Key: "burst" + n + "_stage_" + st, Title: b + "stage " + st + ", per pod (log)", Unit: "s", Dist: true})
	}
	for _, sm := range stageMetrics {
		m = append(m, Measure{Key: "burst" + n + "_" + sm.Key, Title: b + "mean " + sm.Title + " (" + sm.Family + ")", Unit: "s"})
	}
	m = append(m,
		Measure{Key: "burst" + n + "_peak_rss", Title: b + "kubelet peak RSS", Unit: "MiB"},
		Measure{Key: "burst" + n + "_peak_cpu", Title: b + "kubelet peak CPU (5 s, or the burst's length)", Unit: "% core"},
		Measure{Key: "burst" + n + "_cpu_s", Title: b + "kubelet CPU time, create to all Running", Unit: "s"},
	)
	d := "delete " + n + ": "
	return append(m,
		Measure{Key: "delete" + n + "_pod", Title: d + "delete to gone, per pod", Unit: "s", Dist: true},
		Measure{Key: "delete" + n + "_all", Title: d + "all gone", Unit: "s", Dist: true},
		Measure{Key: "delete" + n + "_peak_rss", Title: d + "kubelet peak RSS", Unit: "MiB"},
		Measure{Key: "delete" + n + "_peak_cpu", Title: d + "kubelet peak CPU (5 s, or the deletion's length)", Unit: "% core"},
		Measure{Key: "delete" + n + "_cpu_s", Title: d + "kubelet CPU time, delete to all gone", Unit: "s"},
	)
}

// AddKubeletAdded derives each kubelet's added latency per burst size: its
// create → Running percentile less the CRI floor's for the same pods (p50
// and p99), for every size of bursts (the density scenario's among them).
// It is pure but for s.
func AddKubeletAdded(s Samples, bursts []int) {
	for _, b := range bursts {
		key := "burst" + strconv.Itoa(b) + "_pod"
		for _, col := range []string{ColBerth, ColUpstream} {
			for _, p := range []string{"p50", "p99"} {
				v, okK := stat(s[key][col], p)
				floor, okF := stat(s[key][ColFloor], p)
				if okK && okF {
					s.Add("burst"+strconv.Itoa(b)+"_added_"+p, col, v-floor)
				}
			}
		}
	}
}

func maxBurst(bursts []int) int {
	m := 0
	for _, b := range bursts {
		m = max(m, b)
	}
	return m
}
