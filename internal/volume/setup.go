package volume

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/volume/atomicwriter"
)

// setUpPod sets up every volume of pod; the caller holds st.mu.
// With refresh false (SetUp), the content of a volume set up before is
// left to Run's refresh rounds, so that pod syncs do not hit the API.
func (m *Manager) setUpPod(ctx context.Context, pod *corev1.Pod, st *podState, refresh bool) (map[string]string, error) {
	out := map[string]string{}
	var errs []error
	for _, v := range pod.Spec.Volumes {
		dir, err := m.setUpVolume(ctx, pod, v, st, refresh)
		if err != nil {
			m.recordFailure(pod, st, v.Name, err)
			errs = append(errs, fmt.Errorf("volume %q: %w", v.Name, err))
			continue
		}
		out[v.Name] = dir
	}
	return out, errors.Join(errs...)
}

func (m *Manager) setUpVolume(ctx context.Context, pod *corev1.Pod, v corev1.Volume, st *podState, refresh bool) (string, error) {
	kind, err := Classify(v)
	if err != nil {
		return "", err
	}
	if kind == KindHostPath {
		return setUpHostPath(v.HostPath)
	}
	dir := filepath.Join(m.cfg.PodsDir, string(pod.UID), "volumes", kind.PluginDir(), v.Name)
	first := !st.prepared[v.Name]
	if err := m.prepareDir(dir, kind, pod, v); err != nil {
		return "", err
	}
	if !first && !refresh {
		return dir, nil
	}
	fsGroup, onRootMismatch := fsGroupOf(pod)
	if !kind.Atomic() {
		if fsGroup != nil && first {
			if err := setOwnership(dir, *fsGroup, false, onRootMismatch); err != nil {
				return "", fmt.Errorf("set ownership: %w", err)
			}
		}
		st.prepared[v.Name] = true
		return dir, nil
	}
	in, err := m.fetch(ctx, pod, v, st)
	if err != nil {
		return "", err
	}
	payload, err := Payload(pod, v, in)
	if err != nil {
		return "", err
	}
	var setPerms func(*os.Root) error
	if fsGroup != nil {
		setPerms = func(version *os.Root) error { return setOwnership(version.Name(), *fsGroup, true, false) }
	}
	if _, err := atomicwriter.Write(dir, payload, m.cfg.Clock.Now(), setPerms); err != nil {
		return "", fmt.Errorf("write volume: %w", err)
	}
	if fsGroup != nil && first {
		if err := setOwnership(dir, *fsGroup, true, onRootMismatch); err != nil {
			return "", fmt.Errorf("set ownership: %w", err)
		}
	}
	st.prepared[v.Name] = true
	return dir, nil
}

// prepareDir creates the volume directory, mounts a tmpfs on it when the
// plugin or medium asks for one, and gives it the plugin's mode (dirMode).
func (m *Manager) prepareDir(dir string, kind Kind, pod *corev1.Pod, v corev1.Volume) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("create volume directory: %w", err)
	}
	var allocatable corev1.ResourceList
	if m.cfg.NodeAllocatable != nil {
		allocatable = m.cfg.NodeAllocatable()
	}
	tmpfs, size, err := tmpfsSize(kind, pod, v, allocatable.Memory())
	if err != nil {
		return err
	}
	if tmpfs {
		mounted, err := m.cfg.Mounter.IsMountPoint(dir)
		if err != nil {
			return fmt.Errorf("check mount %q: %w", dir, err)
		}
		if !mounted {
			if err := m.cfg.Mounter.MountTmpfs(dir, size); err != nil {
				return err
			}
		}
	}
	info, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("stat volume directory: %w", err)
	}
	if want := kind.dirMode(); info.Mode().Perm() != want {
		if err := os.Chmod(dir, info.Mode()&^os.ModePerm|want); err != nil {
			return fmt.Errorf("chmod volume directory: %w", err)
		}
	}
	return nil
}

// setUpHostPath checks (and creates, for the *OrCreate types) a hostPath
// and returns the path itself.
func setUpHostPath(src *corev1.HostPathVolumeSource) (string, error) {
	t := corev1.HostPathUnset
	if src.Type != nil {
		t = *src.Type
	}
	action, err := checkHostPath(src.Path, t, os.Stat)
	if err != nil {
		return "", err
	}
	switch action {
	case hostPathCreateDir:
		if err := os.MkdirAll(src.Path, 0o755); err != nil {
			return "", fmt.Errorf("create directory %q: %w", src.Path, err)
		}
	case hostPathCreateFile:
		f, err := os.OpenFile(src.Path, os.O_CREATE, 0o644)
		if err != nil {
			return "", fmt.Errorf("create file %q: %w", src.Path, err)
		}
		_ = f.Close()
	}
	return src.Path, nil
}
