package bench

import (
	"bufio"
	"io"
	"regexp"
	"strings"
	"time"
)

// The split of a pod's create → Running into stages. berth logs one "Pod
// start stages" line per started pod with the moments of its start
// (internal/serve/metrics/stages.go); the upstream kubelet logs one "Observed
// pod startup duration" line with the moment its status PATCH showed the
// pod running (observedRunningTime). The harness adds what it saw itself:
// when it sent the create request and when its watch showed the pod
// Running. All clocks are this machine's.

// Log messages the stage split reads.
const (
	berthStagesMsg    = "Pod start stages"
	upstreamStartMsg  = "Observed pod startup duration"
	upstreamPatchedAt = "observedRunningTime"
)

// Stages, in order. berth's moments bound each one: create request →
// firstSeen → workerStart → sandboxReady → containersStarted →
// statusCached → statusPatched → watch Running.
var berthStages = []struct{ name, from, to string }{
	{"watch_delivery", "", "firstSeen"},
	{"admission_worker_start", "firstSeen", "workerStart"},
	{"sandbox", "workerStart", "sandboxReady"},
	{"containers", "sandboxReady", "containersStarted"},
	{"runtime_to_cache", "containersStarted", "statusCached"},
	{"cache_to_patch", "statusCached", "statusPatched"},
	{"patch_to_watch", "statusPatched", ""},
}

// upstreamStages are what the upstream kubelet's log gives per pod: create
// request → observedRunningTime (its PATCH) → watch Running.
var upstreamStages = []struct{ name, from, to string }{
	{"create_to_patch", "", upstreamPatchedAt},
	{"patch_to_watch", upstreamPatchedAt, ""},
}

// StageNames lists every per-pod stage the table shows, berth's then the
// upstream-only ones.
func StageNames() []string {
	var out []string
	for _, s := range berthStages {
		out = append(out, s.name)
	}
	return append(out, upstreamStages[0].name)
}

// kvPattern matches one key="value" pair of a klog text line.
var kvPattern = regexp.MustCompile(`(\w+)="((?:[^"\\]|\\.)*)"`)

// parseStageLines reads a kubelet log and returns, by pod ("namespace/
// name"), the moments of every line carrying msg. Values that are not
// times are left out; the first line of a pod wins. Lines are read up to
// 1 MiB each.
func parseStageLines(r io.Reader, msg string) (map[string]map[string]time.Time, error) {
	out := map[string]map[string]time.Time{}
	quoted := `"` + msg + `"`
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		i := strings.Index(line, quoted)
		if i < 0 {
			continue
		}
		moments := map[string]time.Time{}
		pod := ""
		for _, m := range kvPattern.FindAllStringSubmatch(line[i+len(quoted):], -1) {
			if m[1] == "pod" {
				pod = m[2]
				continue
			}
			if t, ok := parseMoment(m[2]); ok {
				moments[m[1]] = t
			}
		}
		if _, seen := out[pod]; pod != "" && !seen {
			out[pod] = moments
		}
	}
	return out, sc.Err()
}

// parseMoment parses a time as berth logs it (RFC 3339) or as klog prints
// a time.Time (its String form, monotonic reading dropped).
func parseMoment(s string) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, true
	}
	s, _, _ = strings.Cut(s, " m=")
	t, err := time.Parse("2006-01-02 15:04:05.999999999 -0700 MST", s)
	return t, err == nil && !t.IsZero()
}

// splitStages returns each stage's seconds for one pod, from the create
// request, the watch's Running and the kubelet's moments; a stage with a
// moment missing is left out. It is pure.
func splitStages(stages []struct{ name, from, to string }, created, running time.Time, moments map[string]time.Time) map[string]float64 {
	at := func(key string, dflt time.Time) (time.Time, bool) {
		if key == "" {
			return dflt, true
		}
		t, ok := moments[key]
		return t, ok
	}
	out := map[string]float64{}
	for _, s := range stages {
		from, okF := at(s.from, created)
		to, okT := at(s.to, running)
		if okF && okT {
			out[s.name] = to.Sub(from).Seconds()
		}
	}
	return out
}
