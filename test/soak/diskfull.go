package soak

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/berthk8s/berth/test/bench"
)

// diskSize is the size of the filesystem the disk-full scenario gives the
// kubelet's root directory.
const diskSize = "256m"

// diskFull: the kubelet's root directory on a filesystem of its own (a
// tmpfs of diskSize), filled to its last byte under running pods. The
// kubelet stays up and its Node Ready, reports DiskPressure, refuses a pod
// created meanwhile (Failed, reason Evicted, as upstream's admission),
// starts again when restarted while the disk is full (its checkpoints keep
// their last good copy; upstream logs the failed writes and goes on), and
// once the disk is freed starts again on what it wrote (a checkpoint torn
// by a failed write would stop it). The time to DiskPressure and the pods
// evicted are figures.
func diskFull(ctx context.Context, e *env) error {
	e.node.Stop(ctx)
	if err := ownFilesystem(e.root(), diskSize); err != nil {
		return err
	}
	if err := e.start(ctx); err != nil {
		return fmt.Errorf("start the kubelet on its own filesystem: %w", err)
	}
	n := e.cfg.FaultPods
	run, _, err := e.runningPods(ctx, n)
	if err != nil {
		return err
	}
	e.out.add("pods", "", float64(n))
	w := watchReady(ctx, e.client, e.name)
	fill := filepath.Join(e.root(), "soak-fill")
	if err := fillDisk(fill); err != nil {
		w.end()
		return err
	}
	defer func() { _ = os.Remove(fill) }()
	began := time.Now()
	pressure, err := waitDiskPressure(ctx, e.client, e.name, 2*time.Minute)
	e.out.promise(err == nil, "no DiskPressure 2 minutes after the root filesystem filled: %v", err)
	if err == nil {
		e.out.add("DiskPressure after the disk filled", "s", pressure.Round(time.Second).Seconds())
	}
	late := e.name + "-full"
	if err := createPods(ctx, e.client, e.name, late, 1); err != nil {
		w.end()
		return err
	}
	refused, err := waitEvicted(ctx, e.client, late, time.Minute)
	e.out.promise(refused, "a pod created while the disk was full was not refused: %v", err)
	if err := sleep(ctx, e.cfg.FaultFor-time.Since(began)); err != nil {
		w.end()
		return err
	}
	e.out.promise(e.node.Running() == nil, "the kubelet exited while the disk was full: %v", e.node.Running())
	e.node.Stop(ctx)
	offset := e.logSize()
	errFull := e.start(ctx)
	e.out.add("started again while the disk was full", "", b2f(errFull == nil))
	e.out.promise(errFull == nil, "did not start again while the disk was full: %v", errFull)
	if errFull != nil {
		e.cfg.Logf("disk-full: %s did not start while the disk was full: %v\n%s", e.kubelet.Name, errFull, lastLines(e.logSince(offset), 15))
	}
	notReady := w.end()
	e.out.add("Node not Ready", "s", notReady.Seconds())
	if errFull == nil {
		e.out.promise(notReady == 0, "the Node was not Ready for %v while the disk was full", notReady)
	}
	if err := os.Remove(fill); err != nil {
		return fmt.Errorf("free the disk: %w", err)
	}
	pods, err := listRun(ctx, e.client, run)
	if err != nil {
		return err
	}
	evicted := 0
	for _, p := range pods {
		if p.Status.Reason == "Evicted" {
			evicted++
		}
	}
	e.out.add("pods evicted", "", float64(evicted))
	e.node.Stop(ctx)
	errFreed := e.start(ctx)
	e.out.promise(errFreed == nil, "the kubelet did not start once the disk was freed: %v", errFreed)
	if errFreed != nil {
		return nil
	}
	for _, r := range []string{run, late} {
		if err := deletePods(ctx, e.client, r, 3*time.Minute); err != nil {
			return err
		}
	}
	e.settle(ctx, "")
	return nil
}

// ownFilesystem puts dir on a tmpfs of size, keeping what it holds. A
// stopped kubelet's mounts at dir go first (the upstream kubelet
// bind-mounts its root directory onto itself, shared).
func ownFilesystem(dir, size string) error {
	if err := bench.UnmountAll(dir); err != nil {
		return err
	}
	old := dir + ".before"
	if err := os.Rename(dir, old); err != nil {
		return fmt.Errorf("move %s aside: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0750"); err != nil {
		return fmt.Errorf("mount a tmpfs of %s on %s: %w", size, dir, err)
	}
	if err := copyTree(old, dir); err != nil {
		return fmt.Errorf("copy %s onto its own filesystem: %w", dir, err)
	}
	return bench.RemoveDir(old)
}

// copyTree copies the directories and regular files below from into to,
// with their modes; sockets a stopped kubelet left are not copied (it
// makes them again).
func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		target := filepath.Join(to, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, info.Mode().Perm())
		case info.Mode().IsRegular():
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(target, data, info.Mode().Perm())
		}
		return nil
	})
}

// fillDisk writes zeros to path until the filesystem is full.
func fillDisk(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("fill the disk: %w", err)
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for {
		if _, err := f.Write(buf); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				break
			}
			return fmt.Errorf("fill the disk: %w", err)
		}
	}
	// The last partial block, byte by byte is too slow: smaller writes.
	for _, n := range []int{64 << 10, 4 << 10, 512, 1} {
		for {
			if _, err := f.Write(buf[:n]); err != nil {
				break
			}
		}
	}
	return nil
}

// waitDiskPressure waits until the Node reports DiskPressure and returns
// how long that took.
func waitDiskPressure(ctx context.Context, c kubernetes.Interface, name string, timeout time.Duration) (time.Duration, error) {
	began := time.Now()
	for {
		n, err := c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			for _, cond := range n.Status.Conditions {
				if cond.Type == corev1.NodeDiskPressure && cond.Status == corev1.ConditionTrue {
					return time.Since(began), nil
				}
			}
		}
		if time.Since(began) > timeout {
			return 0, fmt.Errorf("no DiskPressure after %v (%v)", timeout, err)
		}
		if err := sleep(ctx, poll); err != nil {
			return 0, err
		}
	}
}

// waitEvicted waits until the pod of run fails with reason Evicted.
func waitEvicted(ctx context.Context, c kubernetes.Interface, run string, timeout time.Duration) (bool, error) {
	began := time.Now()
	for {
		pods, err := listRun(ctx, c, run)
		if err == nil && len(pods) == 1 {
			p := pods[0]
			if p.Status.Phase == corev1.PodFailed && p.Status.Reason == "Evicted" {
				return true, nil
			}
			if p.Status.Phase == corev1.PodRunning {
				return false, errors.New("it runs")
			}
		}
		if time.Since(began) > timeout {
			return false, fmt.Errorf("not refused after %v (%v)", timeout, err)
		}
		if err := sleep(ctx, poll); err != nil {
			return false, err
		}
	}
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
