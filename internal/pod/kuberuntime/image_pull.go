package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/images/pullrecords"
	"github.com/berthk8s/berth/internal/pod/timeline"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// imageUse is one image a pod's start needs: a container's image, or an
// image volume's. Events about a container's image name the container
// (fieldPath); those about an image volume's name the pod, as upstream's
// EnsureImageExists is given the pod's reference for them.
type imageUse struct {
	Image     string            // as the spec gives it
	Policy    corev1.PullPolicy // the spec's; "" is defaulted as the API server would
	Container string            // the container the events are about; "" for the pod
}

// containerImage is the use of a container's own image.
func containerImage(c *corev1.Container) imageUse {
	return imageUse{Image: c.Image, Policy: c.ImagePullPolicy, Container: c.Name}
}

// eventf records an event about the use: on its container, or on the pod.
func (m *Manager) eventf(pod *corev1.Pod, use imageUse, eventType, reason, format string, args ...any) {
	if use.Container == "" {
		m.cfg.Recorder.Eventf(pod, eventType, reason, format, args...)
		return
	}
	m.cfg.Recorder.ContainerEventf(pod, use.Container, eventType, reason, format, args...)
}

// pullPolicy is the use's pull policy, defaulted as the API server would
// (for containers and image volumes alike): Always for :latest or untagged
// images, else IfNotPresent.
func pullPolicy(policy corev1.PullPolicy, image string) corev1.PullPolicy {
	if policy != "" {
		return policy
	}
	name, _, digested := strings.Cut(image, "@")
	if tag, ok := splitTag(name); !digested && (!ok || tag == "latest") {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}

// ensureImage makes sure the image of use is present, following its pull
// policy, the image pull records (a present image a pod cannot prove
// access to is pulled again with its credentials) and the pod+image pull
// back-off, and returns the image reference to create the container (or
// mount the image volume) with (upstream EnsureImageExists). A non-nil
// failure says why the container cannot start now.
//
// pulls is the pod's pull back-off, owned by the calling Apply: a failed
// pull advances the image's entry, a successful one drops expired entries.
func (m *Manager) ensureImage(ctx context.Context, pulls PullBackoffs, pod *corev1.Pod, use imageUse, sandbox *runtimeapi.PodSandboxConfig) (string, *runtimestate.StartFailure) {
	end := m.beginStage(pod, timeline.StageImage, use.Image)
	var got imageGot
	ref, failure := m.ensureImageAs(ctx, pulls, pod, use, sandbox, &got)
	if failure != nil {
		end(0, "", errors.New(failure.Reason+": "+failure.Message))
	} else {
		end(int64(got.size), got.note, nil)
	}
	return ref, failure
}

// imageGot is what ensureImageAs tells of the image it made present, for
// the image stage: its size (0: unknown) and how ("already present").
type imageGot struct {
	size uint64
	note string
}

// ensureImageAs is ensureImage, telling got what it did.
func (m *Manager) ensureImageAs(ctx context.Context, pulls PullBackoffs, pod *corev1.Pod, use imageUse, sandbox *runtimeapi.PodSandboxConfig, got *imageGot) (string, *runtimestate.StartFailure) {
	image, err := withDefaultTag(use.Image)
	if err != nil {
		msg := fmt.Sprintf("Failed to apply default image tag %q: %v", use.Image, err)
		m.eventf(pod, use, corev1.EventTypeWarning, eventInspectFailed, "%s", msg)
		return "", &runtimestate.StartFailure{Reason: ReasonInvalidImageName, Message: msg}
	}
	spec := &runtimeapi.ImageSpec{Image: image, Annotations: pod.Annotations, UserSpecifiedImage: use.Image}
	st, err := m.cfg.Images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: spec})
	if err != nil {
		msg := fmt.Sprintf("Failed to inspect image %q: %v", use.Image, criMessage(err))
		m.eventf(pod, use, corev1.EventTypeWarning, eventInspectFailed, "%s", msg)
		return "", &runtimestate.StartFailure{Reason: ReasonImageInspectError, Message: msg}
	}
	present := st.GetImage() != nil
	policy := pullPolicy(use.Policy, image)
	if policy == corev1.PullNever && !present {
		return "", m.neverPullFailure(pod, use)
	}
	ring := m.podKeyring(ctx, pod)
	if present && policy != corev1.PullAlways {
		if ref, failure, done := m.usePresent(ctx, ring, pod, use, st.GetImage().GetId(), policy); done {
			got.size, got.note = st.GetImage().GetSize(), "already present"
			return ref, failure
		}
	}
	return m.pullImage(ctx, pulls, ring, pod, use, &runtimeapi.PullImageRequest{Image: spec, SandboxConfig: sandbox}, got)
}

// neverPullFailure is the failure of a Never-policy container whose image
// is absent, or present but not the pod's to use: the same message for
// both, as upstream, so that a pod cannot learn what another pulled.
func (m *Manager) neverPullFailure(pod *corev1.Pod, use imageUse) *runtimestate.StartFailure {
	msg := fmt.Sprintf("Container image %q is not present with pull policy of Never", use.Image)
	m.eventf(pod, use, corev1.EventTypeWarning, eventErrImageNeverPull, "%s", msg)
	return &runtimestate.StartFailure{Reason: ReasonErrImageNeverPull, Message: msg}
}

// usePresent decides whether the pod may use the image the runtime has as
// ref without pulling it: always without pull records, else if the
// records say the pod can access it. done false means pull.
func (m *Manager) usePresent(ctx context.Context, ring podKeyring, pod *corev1.Pod, use imageUse, ref string, policy corev1.PullPolicy) (string, *runtimestate.StartFailure, bool) {
	if m.cfg.PullRecords == nil {
		m.eventf(pod, use, corev1.EventTypeNormal, eventPulled, "Container image %q already present on machine", use.Image)
		return ref, nil, true
	}
	repo := lookupRepository(use.Image)
	must, err := m.cfg.PullRecords.MustPull(ctx, use.Image, ref, func() ([]pullrecords.Secret, error) {
		k, err := ring()
		return k.secrets(repo), err
	})
	switch {
	case err != nil:
		return "", &runtimestate.StartFailure{Reason: ReasonErrImagePull, Message: err.Error()}, true
	case !must:
		m.eventf(pod, use, corev1.EventTypeNormal, eventPulled, "Container image %q already present on machine and can be accessed by the pod", use.Image)
		return ref, nil, true
	case policy == corev1.PullNever:
		return "", m.neverPullFailure(pod, use), true
	}
	return "", nil, false
}

// pullImage pulls the container's image with the pod's credentials unless
// the pod+image pull back-off holds it, recording the pull for the image
// pull records.
func (m *Manager) pullImage(ctx context.Context, pulls PullBackoffs, ring podKeyring, pod *corev1.Pod, use imageUse, req *runtimeapi.PullImageRequest, got *imageGot) (string, *runtimestate.StartFailure) {
	now := m.cfg.Clock.Now()
	if pulls.holds(use.Image, now) {
		msg := fmt.Sprintf("Back-off pulling image %q", use.Image)
		m.eventf(pod, use, corev1.EventTypeNormal, eventBackOff, "%s", msg)
		return "", &runtimestate.StartFailure{Reason: ReasonImagePullBackOff, Message: msg}
	}
	if m.cfg.PullRecords != nil {
		if err := m.cfg.PullRecords.StartPull(use.Image); err != nil {
			return "", &runtimestate.StartFailure{Reason: ReasonErrImagePull,
				Message: fmt.Sprintf("Failed to record image pull intent for container image %q: %v", use.Image, err)}
		}
	}
	progress := m.startPulling(pod, use)
	res, err := m.limitedPull(ctx, ring, req, progress.watch)
	progress.done()
	if err != nil {
		if m.cfg.PullRecords != nil {
			m.cfg.PullRecords.PullFailed(ctx, use.Image)
		}
		msg := criMessage(err)
		m.eventf(pod, use, corev1.EventTypeWarning, eventFailed, "Failed to pull image %q: %s", use.Image, msg)
		pulls.failed(use.Image, m.cfg.Clock.Now())
		return "", &runtimestate.StartFailure{Reason: ReasonErrImagePull, Message: msg}
	}
	if m.cfg.PullRecords != nil {
		m.cfg.PullRecords.Pulled(ctx, use.Image, res.ref, res.secret)
	}
	took, total := m.cfg.Clock.Since(res.started), m.cfg.Clock.Since(now)
	var size uint64
	if st, err := m.cfg.Images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: res.ref}}); err == nil {
		size = st.GetImage().GetSize()
	} else {
		klog.FromContext(ctx).V(4).Info("Cannot read pulled image size", "image", use.Image, "err", err)
	}
	m.eventf(pod, use, corev1.EventTypeNormal, eventPulled,
		"Successfully pulled image %q in %v (%v including waiting). Image size: %v bytes.", use.Image, took, total, size)
	pulls.gc(now)
	got.size, got.note = size, "pulled"
	return res.ref, nil
}

// podKeyring returns the keyring of a pod's pull secrets, read at most
// once per ensureImage and only when needed (upstream's lookup function
// wrapped in sync.OnceValues): a secret that cannot be read gives one
// warning event, not one per use.
type podKeyring func() (keyring, error)

func (m *Manager) podKeyring(ctx context.Context, pod *corev1.Pod) podKeyring {
	return sync.OnceValues(func() (keyring, error) { return makeKeyring(m.pullSecrets(ctx, pod)) })
}

// pull pulls with the credentials of the pod's pull secrets that match the
// image's repository, then those the node's credential provider plugins
// give for it, trying each until one works; anonymously if there are none
// (upstream's PullImage over MakeDockerKeyring's union keyring). It
// returns the pull secret whose credentials worked, if any.
func (m *Manager) pull(ctx context.Context, ring podKeyring, req *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, *pullrecords.Secret, error) {
	k, err := ring()
	if err != nil {
		return nil, nil, err
	}
	repo := lookupRepository(req.GetImage().GetImage())
	creds := k.lookup(repo)
	if m.cfg.CredentialProviders != nil {
		creds = append(creds, providerKeyring(m.cfg.CredentialProviders.Provide(ctx, repo)).lookup(repo)...)
	}
	return pullWithCredentials(ctx, m.cfg.Images, req, creds)
}
