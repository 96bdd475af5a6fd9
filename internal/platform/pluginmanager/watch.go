package pluginmanager

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/fsnotify/fsnotify"
	"k8s.io/klog/v2"
)

// watcher keeps the desired sockets: every unix socket in the directory
// tree, found by a walk at start and kept by fsnotify events, as
// upstream's plugin watcher. It never follows a symlink (STYLE rule 15):
// it looks at files with Lstat, so a link to a socket, or to a directory,
// is not one; and it ignores the names that start with "." (files and
// directories). Owned by the manager's owner goroutine; not safe for
// concurrent use.
type watcher struct {
	root string
	fs   *fsnotify.Watcher
	// desired maps each socket's path to its ID.
	desired map[string]socketID
}

// watch starts watching root and walks it.
func watch(ctx context.Context, root string) (*watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("create plugin directory watcher: %w", err)
	}
	w := &watcher{root: root, fs: fw, desired: map[string]socketID{}}
	// The watch comes before the walk, so no socket created meanwhile is
	// missed (one seen twice is the same socket: same ID).
	if err := fw.Add(root); err != nil {
		_ = fw.Close()
		return nil, fmt.Errorf("watch plugin directory %q: %w", root, err)
	}
	w.walk(ctx, root)
	return w, nil
}

func (w *watcher) close() { _ = w.fs.Close() }

// walk watches the directories below dir (dir itself is watched) and
// desires the sockets in them. What it cannot read it logs and skips.
func (w *watcher) walk(ctx context.Context, dir string) {
	logger := klog.FromContext(ctx)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir {
				return err
			}
			logger.Error(err, "Unable to read in the plugin directory; skipping", "path", path)
			return nil
		}
		if path == dir {
			return nil
		}
		if hidden(d.Name()) {
			logger.V(4).Info("Ignoring file whose name starts with '.'", "path", path)
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if err := w.fs.Add(path); err != nil {
				logger.Error(err, "Unable to watch plugin directory; skipping it", "path", path)
				return filepath.SkipDir
			}
			return nil
		}
		fi, err := d.Info() // Lstat's
		if err != nil {
			return nil // gone since it was listed
		}
		w.found(ctx, path, fi)
		return nil
	})
	if err != nil {
		logger.Error(err, "Unable to walk plugin directory", "path", dir)
	}
}

// found desires the file at path if it is a socket (fi is its Lstat).
func (w *watcher) found(ctx context.Context, path string, fi fs.FileInfo) {
	logger := klog.FromContext(ctx)
	if fi.Mode().Type() != fs.ModeSocket {
		logger.V(4).Info("Ignoring file that is not a socket", "path", path, "mode", fi.Mode())
		return
	}
	id := idOf(fi)
	if old, ok := w.desired[path]; ok && old == id {
		return
	}
	logger.V(2).Info("Plugin socket found", "path", path)
	w.desired[path] = id
}

// handle applies an fsnotify event: a file or directory created is looked
// at (a directory is watched and walked); one removed or renamed away is
// no longer desired, with whatever was below it.
func (w *watcher) handle(ctx context.Context, ev fsnotify.Event) {
	logger := klog.FromContext(ctx)
	switch {
	case ev.Has(fsnotify.Create):
		if hidden(filepath.Base(ev.Name)) {
			logger.V(4).Info("Ignoring file whose name starts with '.'", "path", ev.Name)
			return
		}
		fi, err := os.Lstat(ev.Name)
		if err != nil {
			logger.V(4).Info("Created file is gone", "path", ev.Name, "err", err)
			return
		}
		if fi.IsDir() {
			w.walkNew(ctx, ev.Name)
			return
		}
		w.found(ctx, ev.Name, fi)
	case ev.Has(fsnotify.Remove), ev.Has(fsnotify.Rename):
		if ev.Name == w.root {
			logger.Error(nil, "Plugin directory removed: no plugin registers until berth restarts", "path", w.root)
		}
		prefix := ev.Name + string(filepath.Separator)
		for path := range w.desired {
			if path == ev.Name || strings.HasPrefix(path, prefix) {
				logger.V(2).Info("Plugin socket removed", "path", path)
				delete(w.desired, path)
			}
		}
	}
}

// walkNew watches and walks a directory created in the tree.
func (w *watcher) walkNew(ctx context.Context, dir string) {
	if err := w.fs.Add(dir); err != nil {
		klog.FromContext(ctx).Error(err, "Unable to watch plugin directory; skipping it", "path", dir)
		return
	}
	w.walk(ctx, dir)
}

func hidden(name string) bool { return strings.HasPrefix(name, ".") }
