package containerconfig

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// NeedsImageUser reports whether VerifyRunAsNonRoot needs the image's
// user: runAsNonRoot is true and no runAsUser is set.
func NeedsImageUser(pod *corev1.Pod, c *corev1.Container) bool {
	e := effectiveSecurity(pod, c)
	return e.RunAsNonRoot != nil && *e.RunAsNonRoot && e.RunAsUser == nil
}

// VerifyRunAsNonRoot is upstream's check of runAsNonRoot: the effective
// runAsUser must not be 0; without one, the image's user (uid, or a
// username when the image names its user by name) must be a non-zero uid.
// A username cannot be verified and is refused.
func VerifyRunAsNonRoot(pod *corev1.Pod, c *corev1.Container, uid *int64, username string) error {
	e := effectiveSecurity(pod, c)
	if e.RunAsNonRoot == nil || !*e.RunAsNonRoot {
		return nil
	}
	if e.RunAsUser != nil {
		if *e.RunAsUser == 0 {
			return fmt.Errorf("container's runAsUser breaks non-root policy (pod: %q, container: %s)", podutil.Desc(pod), c.Name)
		}
		return nil
	}
	switch {
	case uid != nil && *uid == 0:
		return fmt.Errorf("container has runAsNonRoot and image will run as root (pod: %q, container: %s)", podutil.Desc(pod), c.Name)
	case uid == nil && username != "":
		return fmt.Errorf("container has runAsNonRoot and image has non-numeric user (%s), cannot verify user is non-root (pod: %q, container: %s)", username, podutil.Desc(pod), c.Name)
	}
	return nil
}

// ImageUser is the user an image runs as, from the runtime's image status
// (upstream getImageUser): its uid, else its username, else root (also
// when the runtime reports no image).
func ImageUser(status *runtimeapi.Image) (*int64, string) {
	if uid := status.GetUid(); uid != nil {
		v := uid.GetValue()
		return &v, ""
	}
	if name := status.GetUsername(); name != "" {
		return nil, name
	}
	root := int64(0)
	return &root, ""
}
