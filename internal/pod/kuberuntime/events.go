package kuberuntime

import (
	"errors"

	"github.com/berthk8s/berth/internal/platform/cri"
)

// Event reasons, exactly as the upstream kubelet records them.
const (
	eventPulling                = "Pulling"
	eventPulled                 = "Pulled"
	eventFailed                 = "Failed"
	eventInspectFailed          = "InspectFailed"
	eventBackOff                = "BackOff"
	eventErrImageNeverPull      = "ErrImageNeverPull"
	eventCreated                = "Created"
	eventStarted                = "Started"
	eventKilling                = "Killing"
	eventSandboxChanged         = "SandboxChanged"
	eventFailedCreatePodSandBox = "FailedCreatePodSandBox"
	// eventFailedCreatePodContainer: the pod's cgroup could not be made.
	eventFailedCreatePodContainer = "FailedCreatePodContainer"
	eventFailedKillPod            = "FailedKillPod"
)

// Waiting reasons of a container that could not start, as upstream names
// them (kubecontainer and images errors).
const (
	ReasonErrImagePull               = "ErrImagePull"
	ReasonImagePullBackOff           = "ImagePullBackOff"
	ReasonErrImageNeverPull          = "ErrImageNeverPull"
	ReasonInvalidImageName           = "InvalidImageName"
	ReasonImageInspectError          = "ImageInspectError"
	ReasonCreateContainerConfigError = "CreateContainerConfigError"
	ReasonCreateContainerError       = "CreateContainerError"
	ReasonRunContainerError          = "RunContainerError"
)

// criMessage is the runtime's own message for a CRI error (what upstream
// shows from the gRPC status), or the error text for any other error.
func criMessage(err error) string {
	var ce *cri.Error
	if errors.As(err, &ce) {
		return ce.Message
	}
	return err.Error()
}
