package stats

import (
	"context"
	"encoding/json"
	"net/http"

	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// SummaryFunc returns the stats summary (Provider.Summary).
type SummaryFunc func(ctx context.Context, onlyCPUAndMemory bool) (*statsapi.Summary, error)

// Handler serves the /stats/ tree: GET /stats/summary answers the summary
// as JSON (only CPU and memory with ?only_cpu_and_memory=true, as
// upstream); every other path under /stats/ is 404.
func Handler(summary SummaryFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/stats/summary" && r.URL.Path != "/stats/summary/" {
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodGet {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		only := r.URL.Query()["only_cpu_and_memory"]
		sum, err := summary(r.Context(), len(only) == 1 && only[0] == "true")
		if err != nil {
			klog.FromContext(r.Context()).Error(err, "Cannot compute the stats summary")
			http.Error(w, "Internal Error: "+err.Error(), http.StatusInternalServerError)
			return
		}
		body, err := json.Marshal(sum)
		if err != nil {
			http.Error(w, "Internal Error: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
}
