package hostsetup

import (
	"context"
	"os"
	"strconv"

	"k8s.io/klog/v2"
)

// OOMScoreAdjPath is berth's own OOM score adjustment.
const OOMScoreAdjPath = "/proc/self/oom_score_adj"

// OOMScoreWriter writes an oom_score_adj value; WriteOOMScoreAdj is the
// real one.
type OOMScoreWriter func(value string) error

// WriteOOMScoreAdj writes value to OOMScoreAdjPath.
func WriteOOMScoreAdj(value string) error {
	return os.WriteFile(OOMScoreAdjPath, []byte(value), 0o600)
}

// ApplyOOMScoreAdj sets berth's own OOM score adjustment (oomScoreAdj),
// once, at start, as upstream's kubelet does. The kernel refuses to lower
// it without CAP_SYS_RESOURCE; then berth logs one warning and runs on
// with the score it has, as upstream does. It reports whether the value
// was applied.
func ApplyOOMScoreAdj(ctx context.Context, write OOMScoreWriter, adj int32) bool {
	if err := write(strconv.Itoa(int(adj))); err != nil {
		klog.FromContext(ctx).Info("Warning: cannot set berth's own OOM score adjustment, running on with the current one", "oomScoreAdj", adj, "err", err)
		return false
	}
	return true
}
