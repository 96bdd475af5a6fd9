package podsource

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// DefaultFileCheckPeriod is how often the file source re-lists its path
// when no period is configured (upstream fileCheckFrequency).
const DefaultFileCheckPeriod = 20 * time.Second

// FileConfig configures a FileWatcher.
type FileConfig struct {
	// Path is a manifest directory (one pod per file, hidden files ignored,
	// no recursion) or a single manifest file.
	Path string
	// NodeName is this node's name; static pod names get it as a suffix.
	NodeName string
	// Period is how often the path is re-listed besides the fsnotify
	// watch; DefaultFileCheckPeriod when zero.
	Period time.Duration
	// Clock drives the re-list ticker and stamps config.seen.
	Clock clock.WithTicker
}

// FileWatcher reads static pods from files. It holds only its immutable
// configuration: all mutable state lives in the Run goroutine.
type FileWatcher struct {
	cfg     FileConfig
	decoder *manifestDecoder
}

// NewFileSource validates cfg and returns a FileWatcher; it starts nothing.
func NewFileSource(cfg FileConfig) (*FileWatcher, error) {
	if cfg.Path == "" || cfg.NodeName == "" || cfg.Clock == nil {
		return nil, errors.New("new file source: path, node name and clock are required")
	}
	if cfg.Period <= 0 {
		cfg.Period = DefaultFileCheckPeriod
	}
	cfg.Path = filepath.Clean(cfg.Path)
	d, err := newManifestDecoder()
	if err != nil {
		return nil, fmt.Errorf("new file source: %w", err)
	}
	return &FileWatcher{cfg: cfg, decoder: d}, nil
}

// Run lists the path, then re-lists it on every fsnotify event and every
// Period, and sends a Snapshot to out at the first list and whenever the
// pods change. It blocks until ctx ends and then returns nil.
func (s *FileWatcher) Run(ctx context.Context, out chan<- Snapshot) error {
	logger := klog.FromContext(ctx).WithValues("source", podutil.FileSource, "path", s.cfg.Path)
	ctx = klog.NewContext(ctx, logger)
	w := newDirWatcher(ctx, s.cfg.Path)
	defer w.close()
	ticker := s.cfg.Clock.NewTicker(s.cfg.Period)
	defer ticker.Stop()

	l := &fileLister{src: s, entries: map[string]*fileEntry{}}
	sent, lastKey := false, ""
	for {
		w.ensure(ctx)
		if pods, key, ok := l.list(ctx); ok && (!sent || key != lastKey) {
			logger.V(2).Info("Static pods from files changed", "pods", len(pods))
			select {
			case out <- Snapshot{Source: podutil.FileSource, Pods: pods}:
			case <-ctx.Done():
				return nil
			}
			sent, lastKey = true, key
		}
		if !w.wait(ctx, ticker.C()) {
			return nil
		}
	}
}

// fileEntry is the last result of reading one manifest file: its content's
// sum, and the pod or the error it gave. It lets the source decode and log
// once per content change.
type fileEntry struct {
	sum    [sha256.Size]byte
	pod    *corev1.Pod
	errMsg string
}

// fileLister lists the source's path. Owned by the Run goroutine.
type fileLister struct {
	src     *FileWatcher
	entries map[string]*fileEntry
	// pathErr is the last error about the path itself, logged on change.
	pathErr string
}

// list returns deep copies of the pods of all valid manifests and a key
// that changes whenever they do. ok is false when the path could not be
// read at all (the previous pods stay).
func (l *fileLister) list(ctx context.Context) (pods []*corev1.Pod, key string, ok bool) {
	logger := klog.FromContext(ctx)
	path := l.src.cfg.Path
	files, err := manifestFiles(path)
	if errors.Is(err, fs.ErrNotExist) {
		l.notePathError(logger, "Manifest path does not exist, retrying", err)
		files, err = nil, nil
	}
	if err != nil {
		l.notePathError(logger, "Unable to read manifest path, retrying", err)
		return nil, "", false
	}
	l.pathErr = ""
	present := make(map[string]bool, len(files))
	var b strings.Builder
	for _, f := range files {
		present[f] = true
		e := l.load(ctx, f)
		if e == nil || e.pod == nil {
			continue
		}
		pods = append(pods, e.pod.DeepCopy())
		fmt.Fprintf(&b, "%s\x00%x\n", f, e.sum)
	}
	for f := range l.entries {
		if !present[f] {
			delete(l.entries, f)
		}
	}
	return pods, b.String(), true
}

func (l *fileLister) notePathError(logger klog.Logger, msg string, err error) {
	if err.Error() != l.pathErr {
		logger.Error(err, msg)
		l.pathErr = err.Error()
	}
}

// load reads one manifest file, decoding it only when its content changed.
// It returns nil when the file vanished meanwhile.
func (l *fileLister) load(ctx context.Context, path string) *fileEntry {
	prev := l.entries[path]
	data, err := readManifestFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		delete(l.entries, path)
		return nil
	}
	e := &fileEntry{}
	if err != nil {
		e.errMsg = err.Error()
	} else {
		e.sum = sha256.Sum256(data)
		if prev != nil && prev.sum == e.sum {
			return prev
		}
		o := origin{source: podutil.FileSource, location: path, nodeName: l.src.cfg.NodeName, now: l.src.cfg.Clock.Now()}
		pods, warnings, err := loadManifest(l.src.decoder, data, o)
		logWarnings(klog.FromContext(ctx), "path", path, warnings)
		if err != nil {
			e.errMsg = fmt.Errorf("load manifest %q: %w", path, err).Error()
		} else {
			e.pod = pods[0]
		}
	}
	if e.errMsg != "" && (prev == nil || prev.errMsg != e.errMsg) {
		klog.FromContext(ctx).Error(errors.New(e.errMsg), "Could not process manifest file, ignoring it", "file", path)
	}
	l.entries[path] = e
	return e
}

// manifestFiles lists the manifest files of path: the path itself when it
// is a file, or the non-hidden entries of the directory, sorted.
func manifestFiles(path string) ([]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		if !info.Mode().IsRegular() {
			return nil, fmt.Errorf("manifest path %q is neither a directory nor a regular file", path)
		}
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			files = append(files, filepath.Join(path, e.Name()))
		}
	}
	return files, nil
}

// readManifestFile reads a regular file (following symlinks); a directory
// or a special file is an error (no recursion).
func readManifestFile(path string) ([]byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if info.IsDir() {
		return nil, fmt.Errorf("read manifest %q: is a directory, not recursing into it", path)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("read manifest %q: not a regular file (mode %s)", path, info.Mode())
	}
	return readBounded(path)
}

// readBounded reads a manifest file, refusing one larger than
// maxManifestBytes without reading it whole (STYLE rule 16).
func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read manifest %q: %w", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxManifestBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read manifest %q: %w", path, err)
	}
	if len(data) > maxManifestBytes {
		return nil, fmt.Errorf("read manifest %q: larger than %d bytes", path, maxManifestBytes)
	}
	return data, nil
}

func logWarnings(logger klog.Logger, key, where string, warnings []string) {
	for _, w := range warnings {
		logger.Info("Manifest has a field berth ignores", key, where, "warning", w)
	}
}
