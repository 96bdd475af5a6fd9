package bench

import "strconv"

// Measures lists every figure of the table, in order, for the given burst
// sizes.
func Measures(bursts []int) []Measure {
	m := []Measure{{Key: "start_ready", Title: "process start to Node Ready", Unit: "s", Dist: true}}
	for _, b := range bursts {
		n := strconv.Itoa(b)
		m = append(m,
			Measure{Key: "burst" + n + "_pod", Title: "burst " + n + ": create to Running, per pod", Unit: "s", Dist: true},
			Measure{Key: "burst" + n + "_all", Title: "burst " + n + ": all Running", Unit: "s", Dist: true},
			Measure{Key: "delete" + n + "_pod", Title: "delete " + n + ": delete to gone, per pod", Unit: "s", Dist: true},
			Measure{Key: "delete" + n + "_all", Title: "delete " + n + ": all gone", Unit: "s", Dist: true},
		)
	}
	for _, load := range []struct{ key, title string }{{"idle", "0 pods"}, {"busy", strconv.Itoa(maxBurst(bursts)) + " pods"}} {
		m = append(m,
			Measure{Key: load.key + "_rss", Title: "kubelet RSS, " + load.title, Unit: "MiB", Dist: true},
			Measure{Key: load.key + "_cpu", Title: "kubelet CPU, " + load.title, Unit: "% core", Dist: true},
			Measure{Key: load.key + "_containerd_rss", Title: "containerd RSS, " + load.title, Unit: "MiB", Dist: true},
			Measure{Key: load.key + "_containerd_cpu", Title: "containerd CPU, " + load.title, Unit: "% core", Dist: true},
		)
	}
	return append(m,
		Measure{Key: "api_rpm", Title: "API requests, " + strconv.Itoa(maxBurst(bursts)) + " pods", Unit: "req/min"},
		Measure{Key: "binary_size", Title: "binary size", Unit: "MiB"},
	)
}

func maxBurst(bursts []int) int {
	m := 0
	for _, b := range bursts {
		m = max(m, b)
	}
	return m
}
