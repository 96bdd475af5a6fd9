package kuberuntime

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/runtimestate"
)

// pullPolicy is the container's pull policy, defaulted as the API server
// would: Always for :latest or untagged images, else IfNotPresent.
func pullPolicy(c *corev1.Container, image string) corev1.PullPolicy {
	if c.ImagePullPolicy != "" {
		return c.ImagePullPolicy
	}
	name, _, digested := strings.Cut(image, "@")
	if tag, ok := splitTag(name); !digested && (!ok || tag == "latest") {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}

// ensureImage makes sure the container's image is present, following its
// pull policy and the pod+image pull back-off, and returns the image
// reference to create the container with (upstream EnsureImageExists).
// A non-nil failure says why the container cannot start now.
//
// pulls is the pod's pull back-off, owned by the calling Apply: a failed
// pull advances the image's entry, a successful one drops expired entries.
func (m *Manager) ensureImage(ctx context.Context, pulls PullBackoffs, pod *corev1.Pod, c *corev1.Container, sandbox *runtimeapi.PodSandboxConfig) (string, *runtimestate.StartFailure) {
	image, err := withDefaultTag(c.Image)
	if err != nil {
		msg := fmt.Sprintf("Failed to apply default image tag %q: %v", c.Image, err)
		m.cfg.Recorder.ContainerEventf(pod, c.Name, corev1.EventTypeWarning, eventInspectFailed, "%s", msg)
		return "", &runtimestate.StartFailure{Reason: ReasonInvalidImageName, Message: msg}
	}
	spec := &runtimeapi.ImageSpec{Image: image, Annotations: pod.Annotations, UserSpecifiedImage: c.Image}
	st, err := m.cfg.Images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: spec})
	if err != nil {
		msg := fmt.Sprintf("Failed to inspect image %q: %v", c.Image, criMessage(err))
		m.cfg.Recorder.ContainerEventf(pod, c.Name, corev1.EventTypeWarning, eventInspectFailed, "%s", msg)
		return "", &runtimestate.StartFailure{Reason: ReasonImageInspectError, Message: msg}
	}
	present := st.GetImage() != nil
	policy := pullPolicy(c, image)
	if policy == corev1.PullNever && !present {
		msg := fmt.Sprintf("Container image %q is not present with pull policy of Never", c.Image)
		m.cfg.Recorder.ContainerEventf(pod, c.Name, corev1.EventTypeWarning, eventErrImageNeverPull, "%s", msg)
		return "", &runtimestate.StartFailure{Reason: ReasonErrImageNeverPull, Message: msg}
	}
	if present && policy != corev1.PullAlways {
		m.cfg.Recorder.ContainerEventf(pod, c.Name, corev1.EventTypeNormal, eventPulled, "Container image %q already present on machine", c.Image)
		return st.GetImage().GetId(), nil
	}
	now := m.cfg.Clock.Now()
	if pulls[c.Image].inBackoff(now) {
		msg := fmt.Sprintf("Back-off pulling image %q", c.Image)
		m.cfg.Recorder.ContainerEventf(pod, c.Name, corev1.EventTypeNormal, eventBackOff, "%s", msg)
		return "", &runtimestate.StartFailure{Reason: ReasonImagePullBackOff, Message: msg}
	}
	m.cfg.Recorder.ContainerEventf(pod, c.Name, corev1.EventTypeNormal, eventPulling, "Pulling image %q", c.Image)
	resp, started, err := m.limitedPull(ctx, pod, &runtimeapi.PullImageRequest{Image: spec, SandboxConfig: sandbox})
	if err != nil {
		msg := criMessage(err)
		m.cfg.Recorder.ContainerEventf(pod, c.Name, corev1.EventTypeWarning, eventFailed, "Failed to pull image %q: %s", c.Image, msg)
		pulls[c.Image] = pulls[c.Image].next(m.cfg.Clock.Now())
		return "", &runtimestate.StartFailure{Reason: ReasonErrImagePull, Message: msg}
	}
	took, total := m.cfg.Clock.Since(started), m.cfg.Clock.Since(now)
	ref := resp.GetImageRef()
	var size uint64
	if st, err := m.cfg.Images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: ref}}); err == nil {
		size = st.GetImage().GetSize()
	} else {
		klog.FromContext(ctx).V(4).Info("Cannot read pulled image size", "image", c.Image, "err", err)
	}
	m.cfg.Recorder.ContainerEventf(pod, c.Name, corev1.EventTypeNormal, eventPulled,
		"Successfully pulled image %q in %v (%v including waiting). Image size: %v bytes.", c.Image, took, total, size)
	pulls.gc(now)
	return ref, nil
}

// pull pulls with the credentials of the pod's pull secrets that match the
// image's repository, then those the node's credential provider plugins
// give for it, trying each until one works; anonymously if there are none
// (upstream's PullImage over MakeDockerKeyring's union keyring).
func (m *Manager) pull(ctx context.Context, pod *corev1.Pod, req *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, error) {
	ring, err := makeKeyring(m.pullSecrets(ctx, pod))
	if err != nil {
		return nil, err
	}
	repo := lookupRepository(req.GetImage().GetImage())
	creds := ring.lookup(repo)
	if m.cfg.CredentialProviders != nil {
		creds = append(creds, providerKeyring(m.cfg.CredentialProviders.Provide(ctx, repo)).lookup(repo)...)
	}
	return pullWithCredentials(ctx, m.cfg.Images, req, creds)
}
