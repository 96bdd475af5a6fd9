package podsource

import (
	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// localAnnotations are the annotations berth itself manages. They are
// ignored when the merger decides whether a pod changed, and kept from the
// stored pod when it updates one.
var localAnnotations = [...]string{podutil.ConfigSourceAnnotation, podutil.ConfigMirrorAnnotation, podutil.ConfigSeenAnnotation}
