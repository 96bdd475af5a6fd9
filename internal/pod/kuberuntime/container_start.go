package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	crierrors "k8s.io/cri-api/pkg/errors"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/internal/pod/containerconfig"
	"github.com/berthk8s/berth/internal/pod/podplan"
	"github.com/berthk8s/berth/internal/pod/timeline"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// startTarget is one container to start and where.
type startTarget struct {
	Pod        *corev1.Pod
	Container  *corev1.Container
	Type       string
	SandboxID  string
	SandboxCfg *runtimeapi.PodSandboxConfig
	// UserNamespace is the pod's own user namespace, the sandbox's (nil:
	// the host's).
	UserNamespace *containerconfig.UserNamespace
	Runtime       *runtimestate.Pod
	// Volumes maps the pod's volume names to their host directories.
	Volumes map[string]string
	// Relabel names the volumes whose mounts the runtime relabels for
	// SELinux.
	Relabel map[string]bool
	// ExtraGroups are the supplemental groups the pod's volumes add.
	ExtraGroups []int64
	// PodIPs are the sandbox's IPs (the host's for a host-network pod),
	// primary first, for env fieldRefs.
	PodIPs []string
	// Pulls is the pod's image pull back-off, owned by the running Apply.
	Pulls PullBackoffs
	// TargetID is, for an ephemeral container, the runtime ID of the
	// container whose PID namespace it joins (the plan's); "" for none.
	TargetID string
	// CreatedID is the ID of the container's instance the runtime holds
	// created and never started, to start instead of creating one (the
	// plan's StartCreated); "" for none.
	CreatedID string
}

// startContainer pulls the images of the container's image volumes, then
// starts it (startWith), counting the image volumes' mounts
// (Config.Observe.ImageVolumesStarted) as upstream does. A non-nil failure says
// why it did not start; events tell the same story.
func (m *Manager) startContainer(ctx context.Context, t startTarget) *runtimestate.StartFailure {
	if t.CreatedID != "" {
		klog.FromContext(ctx).V(2).Info("Starting the container created before berth stopped",
			"pod", klog.KObj(t.Pod), "containerName", t.Container.Name, "containerID", t.CreatedID)
		return m.startCreated(ctx, t, t.CreatedID, m.beginStage(t.Pod, timeline.StageContainerStart, t.Container.Name))
	}
	images, failure := m.imageVolumes(ctx, t)
	if failure != nil {
		m.cfg.Recorder.ContainerEventf(t.Pod, t.Container.Name, corev1.EventTypeWarning, eventFailed, "Error: %s", failure.Reason)
		return failure
	}
	failure = m.startWith(ctx, t, images)
	if len(images) > 0 && m.cfg.Observe.ImageVolumesStarted != nil {
		refused := failure != nil && failure.Reason == ReasonCreateContainerError &&
			strings.HasPrefix(failure.Message, crierrors.ErrImageVolumeMountFailed.Error())
		m.cfg.Observe.ImageVolumesStarted(len(images), imageMounts(t.Container, images), refused)
	}
	return failure
}

// startWith pulls the image, creates and starts one container with its
// image volumes images (upstream startContainer).
func (m *Manager) startWith(ctx context.Context, t startTarget, images map[string]*runtimeapi.ImageSpec) *runtimestate.StartFailure {
	pod, c := t.Pod, t.Container
	imageRef, failure := m.ensureImage(ctx, t.Pulls, pod, containerImage(c), t.SandboxCfg)
	if failure != nil {
		m.cfg.Recorder.ContainerEventf(pod, c.Name, corev1.EventTypeWarning, eventFailed, "Error: %s", failure.Reason)
		return failure
	}
	if err := m.checkNonRoot(ctx, pod, c, imageRef); err != nil {
		return m.startFailed(pod, c.Name, ReasonCreateContainerConfigError, err.Error())
	}
	restartCount := m.nextRestartCount(ctx, t)
	cfg, err := m.prepareContainer(ctx, t, imageRef, images, restartCount)
	if err != nil {
		return m.startFailed(pod, c.Name, ReasonCreateContainerConfigError, err.Error())
	}
	end := m.beginTimedStage(ctx, pod, timeline.StageContainerStart, c.Name, startContainer)
	created, err := m.cfg.Runtime.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{
		PodSandboxId: t.SandboxID, Config: cfg, SandboxConfig: t.SandboxCfg,
	})
	if err != nil {
		end(0, "", errors.New("CreateContainer: "+criMessage(err)))
		return inProgress(m.startFailed(pod, c.Name, ReasonCreateContainerError, criMessage(err)), err)
	}
	id := created.GetContainerId()
	m.cfg.Recorder.ContainerEventf(pod, c.Name, corev1.EventTypeNormal, eventCreated, "Created container: %s", c.Name)
	return m.startCreated(ctx, t, id, end)
}

// startCreated starts the created container id, ending the
// container-start stage with StartContainer, then runs its postStart
// hook. A start that fails leaves the instance exited (the runtime's
// StartError); the next sync replaces it.
func (m *Manager) startCreated(ctx context.Context, t startTarget, id string, end timeline.EndFunc) *runtimestate.StartFailure {
	pod, c := t.Pod, t.Container
	if _, err := m.cfg.Runtime.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: id}); err != nil {
		end(0, "", errors.New("StartContainer: "+criMessage(err)))
		// The runtime's message often names the container ID; events name
		// the container so that they aggregate.
		return inProgress(m.startFailed(pod, c.Name, ReasonRunContainerError, strings.ReplaceAll(criMessage(err), id, c.Name)), err)
	}
	end(0, "", nil)
	m.cfg.Recorder.ContainerEventf(pod, c.Name, corev1.EventTypeNormal, eventStarted, "Started container %s", c.Name)
	if c.Lifecycle != nil && c.Lifecycle.PostStart != nil {
		return m.postStart(ctx, t, id)
	}
	return nil
}

// postStart runs the container's postStart hook. When it fails (upstream
// startContainer): a FailedPostStartHook event with the hook's message, the
// container is killed (Killing event "FailedPostStartHook", preStop
// included) and the start fails with the waiting reason PostStartHookError.
func (m *Manager) postStart(ctx context.Context, t startTarget, id string) *runtimestate.StartFailure {
	pod, c := t.Pod, t.Container
	msg, err := m.runHook(ctx, hookTarget{Pod: pod, Container: c, ContainerID: id, PodIPs: t.PodIPs}, c.Lifecycle.PostStart)
	if err == nil {
		return nil
	}
	logger := klog.FromContext(ctx)
	logger.Error(err, "Failed to execute PostStartHook", "containerName", c.Name, "containerID", id)
	m.cfg.Recorder.ContainerEventf(pod, c.Name, corev1.EventTypeWarning, eventFailedPostStartHook, "%s", msg)
	kill := killRequest{Pod: pod, EvPod: pod, Container: runtimestate.Container{ID: id, Name: c.Name},
		Message: killReasonFailedPostStartHook, Reason: killReasonFailedPostStartHook, PodIPs: t.PodIPs}
	if err := m.killContainer(ctx, kill); err != nil {
		logger.Error(err, "Failed to kill container after its postStart hook failed", "containerName", c.Name, "containerID", id)
	}
	return &runtimestate.StartFailure{Reason: ReasonPostStartHookError, Message: msg}
}

// checkNonRoot runs containerconfig.VerifyRunAsNonRoot for a container about to be
// created from imageRef, asking the runtime for the image's user only
// when the check needs it. Its errors are container config errors.
func (m *Manager) checkNonRoot(ctx context.Context, pod *corev1.Pod, c *corev1.Container, imageRef string) error {
	var (
		uid      *int64
		username string
	)
	if containerconfig.NeedsImageUser(pod, c) {
		resp, err := m.cfg.Images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: imageRef}})
		if err != nil {
			return fmt.Errorf("get image status %q: %w", imageRef, err)
		}
		uid, username = containerconfig.ImageUser(resp.GetImage())
	}
	return containerconfig.VerifyRunAsNonRoot(pod, c, uid, username)
}

func (m *Manager) startFailed(pod *corev1.Pod, container, reason, msg string) *runtimestate.StartFailure {
	m.cfg.Recorder.ContainerEventf(pod, container, corev1.EventTypeWarning, eventFailed, "Error: %s", msg)
	return &runtimestate.StartFailure{Reason: reason, Message: msg}
}

// inProgress marks f when the runtime's err says it is still serving an
// earlier request for the container (cri.ErrInProgress).
func inProgress(f *runtimestate.StartFailure, err error) *runtimestate.StartFailure {
	f.InProgress = errors.Is(err, cri.ErrInProgress)
	return f
}

// prepareContainer creates the container's log directory and termination
// message file, then builds its config; images are its image volumes'
// (imageVolumes).
func (m *Manager) prepareContainer(ctx context.Context, t startTarget, imageRef string, images map[string]*runtimeapi.ImageSpec, restartCount int) (*runtimeapi.ContainerConfig, error) {
	pod, c := t.Pod, t.Container
	logDir := filepath.Join(t.SandboxCfg.GetLogDirectory(), c.Name)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, fmt.Errorf("create container log directory for container %s failed: %v", c.Name, err)
	}
	env, err := resolveEnv(ctx, envInput{Pod: pod, Container: c, PodIPs: t.PodIPs, HostIPs: m.cfg.HostIPs, Source: m.cfg.Env})
	if err != nil {
		return nil, err
	}
	for _, s := range env.Skipped {
		m.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, eventInvalidEnvironmentVariableNames,
			"Keys [%s] from the EnvFrom %s %s were skipped since they are considered invalid environment variable names.",
			strings.Join(s.Keys, ", "), s.Kind, s.Name)
	}
	specs, err := mountSpecs(pod, c, mountVolumes{Dirs: t.Volumes, Images: images, Relabel: t.Relabel}, env.Vars)
	if err != nil {
		return nil, err
	}
	mounts, err := m.resolveMounts(ctx, pod, c, specs)
	if err != nil {
		return nil, err
	}
	devices, err := deviceSpecs(pod, c, t.Volumes)
	if err != nil {
		return nil, err
	}
	cdi, err := m.cdiDevices(pod, c)
	if err != nil {
		return nil, err
	}
	params := containerconfig.ContainerParams{
		Pod: pod, Container: c, Type: t.Type, Hash: podplan.HashContainer(c),
		RestartCount: restartCount, ImageRef: imageRef, Mounts: mounts, Devices: devices, ExtraGroups: t.ExtraGroups, Node: m.node, Env: env.Envs, Vars: env.Vars,
		UserNamespace: t.UserNamespace, TargetID: t.TargetID, CDIDevices: cdi,
	}
	if err := m.addPluginDevices(ctx, &params); err != nil {
		return nil, err
	}
	if m.cfg.Assigners.CPUs != nil {
		params.CPUSet = m.cfg.Assigners.CPUs.CPUSet(string(pod.UID), c.Name)
	}
	if m.cfg.Assigners.Memory != nil {
		params.CPUSetMems = m.cfg.Assigners.Memory.CPUSetMems(string(pod.UID), c.Name)
	}
	if c.TerminationMessagePath != "" {
		path, err := m.createTerminationMessageFile(pod, c.Name, restartCount)
		if err != nil {
			return nil, err
		}
		params.TerminationMessageHostPath = path
	}
	if params.HostsMount, err = m.hostsMount(ctx, t); err != nil {
		return nil, err
	}
	return containerconfig.Container(params)
}

// addPluginDevices adds what the container's device plugin devices bring
// (upstream's GenerateRunContainerOptions): their environment, mounts and
// device nodes before the container's own (whose variables win), their
// annotations and CDI devices.
func (m *Manager) addPluginDevices(ctx context.Context, p *containerconfig.ContainerParams) error {
	if m.cfg.Assigners.Devices == nil {
		return nil
	}
	opts, err := m.cfg.Assigners.Devices.ContainerOptions(ctx, p.Pod, p.Container)
	if err != nil {
		return err
	}
	if len(opts.Envs) > 0 {
		vars := make(map[string]string, len(p.Vars)+len(opts.Envs))
		for _, e := range opts.Envs {
			vars[e.GetKey()] = string(e.GetValue())
		}
		maps.Copy(vars, p.Vars)
		p.Env, p.Vars = append(slices.Clip(opts.Envs), p.Env...), vars
	}
	p.Mounts = append(slices.Clip(opts.Mounts), p.Mounts...)
	p.Devices = append(slices.Clip(opts.Devices), p.Devices...)
	p.DevicePlugins = containerconfig.DevicePluginOptions{Annotations: opts.Annotations, CDIDevices: opts.CDIDevices}
	return nil
}

// createTerminationMessageFile creates the host file mounted at the
// container's terminationMessagePath:
// <PodsDir>/<uid>/containers/<name>/<restart count>, mode 0666 whatever the
// umask, so that any container user can write it. The restart count makes
// the name unique per container instance, like upstream's random suffix.
func (m *Manager) createTerminationMessageFile(pod *corev1.Pod, name string, restartCount int) (string, error) {
	dir := filepath.Join(m.cfg.PodsDir, string(pod.UID), "containers", name)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", fmt.Errorf("create container directory %q: %w", dir, err)
	}
	path := filepath.Join(dir, strconv.Itoa(restartCount))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o666)
	if err != nil {
		return "", fmt.Errorf("create termination-log file %q: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("create termination-log file %q: %w", path, err)
	}
	if err := os.Chmod(path, 0o666); err != nil {
		return "", fmt.Errorf("set termination-log file permissions %q: %w", path, err)
	}
	return path, nil
}

// nextRestartCount is one more than the newest instance's restart count;
// with no instance in the runtime (e.g. after a node reboot) it continues
// from the log files left in the container's log directory.
func (m *Manager) nextRestartCount(ctx context.Context, t startTarget) int {
	if latest := t.Runtime.LatestContainer(t.Container.Name); latest != nil {
		return latest.RestartCount + 1
	}
	dir := filepath.Join(t.SandboxCfg.GetLogDirectory(), t.Container.Name)
	n, err := restartCountFromLogDir(dir)
	if err != nil {
		klog.FromContext(ctx).Info("Cannot calculate restartCount from the log directory", "logDir", dir, "err", err)
		return 0
	}
	return n
}

var restartLogRE = regexp.MustCompile(`^(\d+)\.log(\..*)?$`)

// restartCountFromLogDir returns one more than the highest N of the N.log
// files in dir, or 0 when there are none.
func restartCountFromLogDir(dir string) (int, error) {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read log directory %q: %w", dir, err)
	}
	count := 0
	for _, e := range entries {
		match := restartLogRE.FindStringSubmatch(e.Name())
		if e.IsDir() || match == nil {
			continue
		}
		if n, err := strconv.Atoi(match[1]); err == nil && n+1 > count {
			count = n + 1
		}
	}
	return count, nil
}
