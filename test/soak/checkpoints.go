package soak

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// checkpoints: with pods running, each of the kubelet's checkpoint files
// (the regular files at the top of its root directory: CPU and memory
// manager state, pod allocations, DRA state, ...) is torn in turn, cut
// to half its size, while the kubelet is stopped. The kubelet then either
// starts, Ready, with the pods' containers untouched, or refuses to start
// with an error that names the file; anything else (a crash loop with no
// name, a start that loses running pods) breaks the promise.
func checkpoints(ctx context.Context, e *env) error {
	n := 3
	run, pods, err := e.runningPods(ctx, n)
	if err != nil {
		return err
	}
	files, err := checkpointFiles(e.root())
	if err != nil {
		return err
	}
	e.out.add("checkpoint files", "", float64(len(files)))
	for _, f := range files {
		before, err := listRuntime(ctx, e.runtime)
		if err != nil {
			return err
		}
		e.node.Stop(ctx)
		if err := tear(f); err != nil {
			return err
		}
		name := filepath.Base(f)
		logBefore := e.logSize()
		started := e.start(ctx) == nil
		if !started {
			named := strings.Contains(e.logSince(logBefore), name)
			e.out.add(name+": refused to start", "", 1)
			e.out.promise(named, "%s torn: did not start, and its log does not name the file", name)
			// The next file is judged on a kubelet that starts: remove the
			// torn one, as an operator would.
			if err := os.Remove(f); err != nil {
				return err
			}
			e.node.Stop(ctx)
			if err := e.start(ctx); err != nil {
				return fmt.Errorf("start again without the torn %s: %w", name, err)
			}
		} else {
			e.out.add(name+": refused to start", "", 0)
		}
		if _, err := waitRunning(ctx, e.client, run, n, 2*time.Minute); err != nil {
			return fmt.Errorf("after %s was torn: %w", name, err)
		}
		after, err := listRuntime(ctx, e.runtime)
		if err != nil {
			return err
		}
		replaced := changed(before, after, pods)
		e.out.add(name+": containers replaced", "", float64(replaced))
		e.out.promise(replaced == 0, "%s torn: %d of %d pods lost their container", name, replaced, n)
	}
	if err := deletePods(ctx, e.client, run, 3*time.Minute); err != nil {
		return err
	}
	e.settle(ctx, "")
	return nil
}

// checkpointFiles lists the regular files at the top of root, sorted.
func checkpointFiles(root string) ([]string, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, d := range entries {
		if d.Type().IsRegular() {
			files = append(files, filepath.Join(root, d.Name()))
		}
	}
	slices.Sort(files)
	return files, nil
}

// tear cuts a file to half its size, as a crash mid-write of a
// non-atomic writer would leave it.
func tear(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	return os.Truncate(path, fi.Size()/2)
}
