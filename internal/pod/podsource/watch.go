package podsource

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"k8s.io/klog/v2"
)

// dirWatcher wraps an fsnotify watch of the file source's directory (or, for
// a single manifest file, of the file's directory). A missing directory is
// watched as soon as ensure finds it. Owned by the file source's Run
// goroutine; not safe for concurrent use.
type dirWatcher struct {
	// path is the configured manifest path.
	path string
	// w is nil when fsnotify is unavailable: the source then only polls.
	w *fsnotify.Watcher
	// watched is the directory under watch, "" when none.
	watched string
}

func newDirWatcher(ctx context.Context, path string) *dirWatcher {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		klog.FromContext(ctx).Error(err, "Unable to create a file watcher, only polling the manifest path")
		w = nil
	}
	return &dirWatcher{path: path, w: w}
}

func (d *dirWatcher) close() {
	if d.w != nil {
		_ = d.w.Close()
	}
}

// ensure starts watching when nothing is watched yet and the path exists.
func (d *dirWatcher) ensure(ctx context.Context) {
	if d.w == nil || d.watched != "" {
		return
	}
	info, err := os.Stat(d.path)
	if err != nil {
		return // Missing: the periodic re-list retries.
	}
	dir := d.path
	if !info.IsDir() {
		dir = filepath.Dir(d.path)
	}
	if err := d.w.Add(dir); err != nil {
		klog.FromContext(ctx).Error(err, "Unable to watch manifest directory, retrying", "dir", dir)
		return
	}
	d.watched = dir
	klog.FromContext(ctx).V(2).Info("Watching manifest directory", "dir", dir)
}

// wait blocks until a re-list is due: a tick, or an event that may change
// the manifests (a burst of events counts once). It returns false when ctx
// ended.
func (d *dirWatcher) wait(ctx context.Context, tick <-chan time.Time) bool {
	var events <-chan fsnotify.Event
	var errs <-chan error
	if d.w != nil {
		events, errs = d.w.Events, d.w.Errors
	}
	for {
		select {
		case <-ctx.Done():
			return false
		case <-tick:
			return true
		case e, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if d.relevant(e) {
				d.drain()
				return true
			}
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			// An error (e.g. a queue overflow) may have lost events.
			klog.FromContext(ctx).Error(err, "File watcher error, re-listing")
			return true
		}
	}
}

// drain consumes the events already queued, so one burst is one re-list.
func (d *dirWatcher) drain() {
	for {
		select {
		case e, ok := <-d.w.Events:
			if !ok {
				return
			}
			d.relevant(e)
		default:
			return
		}
	}
}

// relevant reports whether e may change the manifests. When the watched
// directory itself goes away, the watch is dropped for ensure to renew.
func (d *dirWatcher) relevant(e fsnotify.Event) bool {
	if e.Name == d.watched && e.Has(fsnotify.Remove|fsnotify.Rename) {
		_ = d.w.Remove(d.watched)
		d.watched = ""
		return true
	}
	if e.Op == fsnotify.Chmod {
		return false
	}
	if d.watched != d.path {
		// A single manifest file: only events on it count.
		return e.Name == d.path
	}
	return !strings.HasPrefix(filepath.Base(e.Name), ".")
}
