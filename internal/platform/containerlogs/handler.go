package containerlogs

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/podkit/podutil"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// defaultPoll is how often a followed log is checked for new lines.
const defaultPoll = 250 * time.Millisecond

// Config is what the /containerLogs handler needs.
type Config struct {
	// Pod returns the pod berth runs with that namespace and name, with
	// its latest status.
	Pod func(namespace, name string) (*corev1.Pod, bool)
	// Container returns the runtime's last view of a container of the pod
	// by ID (its log path and state), or false when the runtime has none.
	Container func(uid types.UID, id string) (runtimestate.Container, bool)
	// PodLogsDir is the root of pod log directories (/var/log/pods); the
	// log of a container the runtime no longer knows is looked for there.
	PodLogsDir string
	// Clock gives sinceSeconds its origin and paces following.
	Clock clock.Clock
	// Poll is how often a followed log is checked; 250ms when zero.
	Poll time.Duration
}

// Handler serves GET /containerLogs/{namespace}/{pod}/{container}. It is
// safe for concurrent use; each request reads its own files.
type Handler struct {
	cfg Config
}

// NewHandler validates cfg and returns the handler.
func NewHandler(cfg Config) (*Handler, error) {
	switch {
	case cfg.Pod == nil || cfg.Container == nil:
		return nil, errors.New("containerlogs: Pod and Container are required")
	case cfg.Clock == nil:
		return nil, errors.New("containerlogs: Clock is required")
	case cfg.Poll < 0:
		return nil, errors.New("containerlogs: Poll must not be negative")
	}
	if cfg.Poll == 0 {
		cfg.Poll = defaultPoll
	}
	return &Handler{cfg: cfg}, nil
}

// ServeHTTP answers as the upstream kubelet: 400 for a missing path part
// or an undecodable query, 422 for invalid options, 404 for an unknown
// pod or container, 400 when the container has no log to read.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ns, podName, container := r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container")
	switch {
	case podName == "":
		http.Error(w, `{"message": "Missing podID."}`, http.StatusBadRequest)
		return
	case container == "":
		http.Error(w, `{"message": "Missing container name."}`, http.StatusBadRequest)
		return
	case ns == "":
		http.Error(w, `{"message": "Missing podNamespace."}`, http.StatusBadRequest)
		return
	}
	logger := klog.FromContext(r.Context()).WithValues("pod", klog.KRef(ns, podName), "container", container)
	opts, err := ParseQuery(r.URL.Query())
	if err != nil {
		logger.V(2).Info("Undecodable log query", "err", err)
		http.Error(w, `{"message": "Unable to decode query."}`, http.StatusBadRequest)
		return
	}
	if err := Validate(opts); err != nil {
		logger.V(2).Info("Invalid log options", "err", err)
		http.Error(w, `{"message": "Invalid request."}`, http.StatusUnprocessableEntity)
		return
	}
	pod, ok := h.cfg.Pod(ns, podName)
	if !ok {
		http.Error(w, fmt.Sprintf("pod %q does not exist", podName), http.StatusNotFound)
		return
	}
	if !hasContainer(pod, container) {
		http.Error(w, fmt.Sprintf("container %q not found in pod %q", container, podName), http.StatusNotFound)
		return
	}
	inst, err := pickInstance(pod.Name, &pod.Status, container, opts.Previous)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	path := h.logPath(pod, container, inst)
	if _, err := os.Stat(path); err != nil {
		http.Error(w, fmt.Sprintf("read log of container %q: %v", container, err), http.StatusBadRequest)
		return
	}
	h.stream(w, r, logger, path, pod.UID, inst.ID, FromPodLogOptions(opts, h.cfg.Clock.Now()))
}

// logPath is the instance's log file: the one the runtime reports, or
// where berth asked the runtime to write it.
func (h *Handler) logPath(pod *corev1.Pod, container string, inst instance) string {
	if c, ok := h.cfg.Container(pod.UID, inst.ID); ok && c.LogPath != "" {
		return c.LogPath
	}
	return filepath.Join(podutil.LogDir(h.cfg.PodLogsDir, pod.Namespace, pod.Name, pod.UID), podutil.ContainerLogFile(container, inst.RestartCount))
}

// stream commits a 200 and writes the log, flushing every write.
func (h *Handler) stream(w http.ResponseWriter, r *http.Request, logger klog.Logger, path string, uid types.UID, id string, opts Options) {
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusOK)
	out := &flushWriter{w: w, rc: http.NewResponseController(w)}
	_ = out.rc.Flush()
	running := func(context.Context) bool {
		c, ok := h.cfg.Container(uid, id)
		return ok && (c.State == runtimestate.ContainerRunning || c.State == runtimestate.ContainerCreated)
	}
	watch := Watch{Clock: h.cfg.Clock, Poll: h.cfg.Poll, Running: running}
	if err := Read(r.Context(), path, opts, out, watch); err != nil && r.Context().Err() == nil {
		logger.Error(err, "Failed to stream container log", "path", path)
	}
}

// flushWriter flushes the response after every write, so a follower sees
// each line as it is read.
type flushWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func (f *flushWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if err != nil {
		return n, err
	}
	return n, f.rc.Flush()
}
