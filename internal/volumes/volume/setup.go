package volume

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/volumes/atomicwriter"
)

// setUpPod sets up every volume of pod; the caller holds st.mu.
// With refresh false (SetUp), the content of a volume set up before is
// left to Run's refresh rounds, so that pod syncs do not hit the API.
func (m *Manager) setUpPod(ctx context.Context, pod *corev1.Pod, st *podState, refresh bool) (map[string]string, error) {
	out := map[string]string{}
	var errs []error
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil || v.Ephemeral != nil {
			if mounted, device := usesVolume(pod, v.Name); !mounted && !device {
				continue // a claim no container uses is not waited for, as upstream
			}
		}
		end := m.beginVolume(pod, v.Name, st, refresh)
		dir, err := m.setUpVolume(ctx, pod, v, st, refresh)
		end(0, "", err)
		if err != nil {
			m.recordFailure(pod, st, v.Name, err)
			errs = append(errs, &SetUpError{Volume: v.Name, Err: err})
			continue
		}
		out[v.Name] = dir
	}
	return out, errors.Join(errs...)
}

// StageRecorder records a stage of a pod's start (the pod path's
// timeline.Recorder): Begin starts it now and returns its end, which
// takes the error it failed with. Safe for concurrent use.
type StageRecorder interface {
	Begin(pod *corev1.Pod, stage, target string) func(bytes int64, note string, err error)
}

// stageVolume is the timeline's name of a volume's set-up
// (timeline.StageVolume).
const stageVolume = "volume"

// beginVolume starts the set-up stage of the pod's volume name, until the
// pod's volumes were set up once: a sync's SetUp of them after that, and
// Run's refreshes, record nothing.
func (m *Manager) beginVolume(pod *corev1.Pod, name string, st *podState, refresh bool) func(int64, string, error) {
	if m.cfg.Stages == nil || refresh || st.ready {
		return func(int64, string, error) {}
	}
	return m.cfg.Stages.Begin(pod, stageVolume, name)
}

// SetUpError is why one volume of a pod is not set up; SetUp's error
// joins one per failed volume, in spec order, so errors.As finds the
// first (the pod's PodReadyToStartContainers condition names it).
type SetUpError struct {
	Volume string // the pod's name for the volume
	Err    error
}

func (e *SetUpError) Error() string { return fmt.Sprintf("volume %q: %v", e.Volume, e.Err) }

func (e *SetUpError) Unwrap() error { return e.Err }

// setUpVolume sets up one volume and returns its host directory. The
// directory is prepared on every call; the content of a configMap,
// secret, downwardAPI or projected volume is written the first time in
// this process and on refresh; fsGroup ownership is applied to the whole
// volume once, before any container runs, and recorded in the ready
// marker, so that neither a refresh nor a restart of berth walks a volume
// containers are using.
func (m *Manager) setUpVolume(ctx context.Context, pod *corev1.Pod, v corev1.Volume, st *podState, refresh bool) (string, error) {
	kind, err := Classify(v)
	if err != nil {
		return "", err
	}
	switch kind {
	case KindHostPath:
		return setUpHostPath(v.HostPath)
	case KindClaim:
		return m.setUpClaim(ctx, pod, v, st, refresh)
	case KindCSI:
		return m.setUpCSI(ctx, pod, v.Name, inlineCSI(pod, v), refresh, nil)
	case KindMigrated:
		cv, err := migratedInlineCSI(ctx, pod, v)
		if err != nil {
			return "", err
		}
		return m.setUpCSI(ctx, pod, v.Name, cv, refresh, nil)
	case KindNFS:
		return m.setUpNFS(pod, v.Name, v.NFS, v.NFS.ReadOnly, nil)
	case KindFC:
		src, err := fcInline(v)
		if err != nil {
			return "", err
		}
		return m.setUpFC(pod, v.Name, src)
	case KindImage:
		return "", nil // no host directory: the runtime mounts the image
	}
	dir := filepath.Join(m.cfg.PodsDir, string(pod.UID), "volumes", kind.PluginDir(), v.Name)
	fresh, err := m.prepareDir(dir, kind, pod, v)
	if err != nil {
		return "", err
	}
	marker := readyMarker(m.cfg.PodsDir, pod.UID, v.Name)
	ready, err := checkReady(marker, fresh)
	if err != nil {
		return "", err
	}
	if kind.Atomic() {
		if err := makeNestedMountpoints(dir, pod, v.Name); err != nil {
			return "", err
		}
	}
	if kind.Atomic() && (refresh || !ready || !st.written[v.Name]) {
		if err := m.writeContent(ctx, pod, v, st, dir); err != nil {
			return "", err
		}
		st.written[v.Name] = true
	}
	if ready {
		return dir, nil
	}
	if fsGroup, onRootMismatch := fsGroupOf(pod); fsGroup != nil {
		if err := setOwnershipAt(dir, *fsGroup, kind.Atomic(), onRootMismatch); err != nil {
			return "", fmt.Errorf("set ownership: %w", err)
		}
	}
	if err := setReady(marker); err != nil {
		return "", err
	}
	return dir, nil
}

// writeContent fetches what a configMap, secret, downwardAPI or projected
// volume shows and writes it with the atomic writer; the fsGroup, if any,
// is applied to each new version before it is published.
func (m *Manager) writeContent(ctx context.Context, pod *corev1.Pod, v corev1.Volume, st *podState, dir string) error {
	in, err := m.fetch(ctx, pod, v, st)
	if err != nil {
		return err
	}
	payload, err := Payload(pod, v, in)
	if err != nil {
		return err
	}
	var setPerms func(*os.Root) error
	if fsGroup, _ := fsGroupOf(pod); fsGroup != nil {
		setPerms = func(version *os.Root) error { return setOwnership(version, *fsGroup, true, false) }
	}
	if _, err := atomicwriter.Write(dir, payload, m.cfg.Clock.Now(), setPerms); err != nil {
		return fmt.Errorf("write volume: %w", err)
	}
	return nil
}

// makeNestedMountpoints creates in the volume directory dir the mount
// points of the volumes containers mount beneath it (nestedMountpoints).
func makeNestedMountpoints(dir string, pod *corev1.Pod, name string) error {
	rels, err := nestedMountpoints(pod, name)
	if err != nil || len(rels) == 0 {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("open volume directory %q: %w", dir, err)
	}
	defer root.Close()
	for _, rel := range rels {
		if err := root.MkdirAll(rel, 0o755); err != nil {
			return fmt.Errorf("create nested mount point %q: %w", rel, err)
		}
	}
	return nil
}

// prepareDir creates the volume directory, mounts a tmpfs on it when the
// plugin or medium asks for one, and gives it the plugin's mode (dirMode).
// fresh reports that the directory was created or its tmpfs mounted now,
// so it is empty whatever a ready marker says.
func (m *Manager) prepareDir(dir string, kind Kind, pod *corev1.Pod, v corev1.Volume) (fresh bool, err error) {
	if err := os.MkdirAll(filepath.Dir(dir), 0o750); err != nil {
		return false, fmt.Errorf("create volume directory: %w", err)
	}
	switch err := os.Mkdir(dir, 0o750); {
	case err == nil:
		fresh = true
	case !errors.Is(err, fs.ErrExist):
		return false, fmt.Errorf("create volume directory: %w", err)
	}
	var allocatable corev1.ResourceList
	if m.cfg.NodeAllocatable != nil {
		allocatable = m.cfg.NodeAllocatable()
	}
	tmpfs, size, err := tmpfsSize(kind, pod, v, allocatable.Memory())
	if err != nil {
		return false, err
	}
	var hugePages string
	if kind == KindEmptyDir && isHugePagesMedium(v.EmptyDir.Medium) {
		if hugePages, err = hugePageSize(v.EmptyDir.Medium, pod); err != nil {
			return false, err
		}
	}
	if tmpfs || hugePages != "" {
		mounted, err := m.cfg.Mounter.IsMountPoint(dir)
		if err != nil {
			return false, fmt.Errorf("check mount %q: %w", dir, err)
		}
		if !mounted {
			mount := func() error { return m.cfg.Mounter.MountTmpfs(dir, size) }
			if hugePages != "" {
				mount = func() error { return m.cfg.Mounter.MountHugetlbfs(dir, hugePages) }
			}
			if err := mount(); err != nil {
				return false, err
			}
			fresh = true
		}
	}
	info, err := os.Stat(dir)
	if err != nil {
		return false, fmt.Errorf("stat volume directory: %w", err)
	}
	if want := kind.dirMode(); info.Mode().Perm() != want {
		if err := os.Chmod(dir, info.Mode()&^os.ModePerm|want); err != nil {
			return false, fmt.Errorf("chmod volume directory: %w", err)
		}
	}
	return fresh, nil
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
