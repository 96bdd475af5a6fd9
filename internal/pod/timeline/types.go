package timeline

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// The stages' names (doc.go).
const (
	StageAdmitted       = "admitted"
	StageVolume         = "volume"
	StageSandbox        = "sandbox"
	StageImage          = "image"
	StageContainerStart = "container-start"
	StageInitContainer  = "init-container"
	StageProbe          = "probe"
	StageStatusWritten  = "status-written"
)

// Outcome is how a stage ended.
type Outcome string

// The outcomes.
const (
	OutcomeOK      Outcome = "ok"
	OutcomeFailed  Outcome = "failed"
	OutcomeRunning Outcome = "running"
)

// Timeline is one pod's start as GET /pods/{namespace}/{name}/timeline
// serves it as JSON. Its fields and their names are a stable API
// (docs/why-waiting.md). A plain value.
type Timeline struct {
	// Pod is "<namespace>/<name>".
	Pod string    `json:"pod"`
	UID types.UID `json:"uid"`
	// Created is the pod's creationTimestamp.
	Created time.Time `json:"created"`
	// Now is when the timeline was read: the end of the running stages'
	// durations.
	Now time.Time `json:"now"`
	// Dropped counts the oldest entries dropped past the bound.
	Dropped int     `json:"dropped"`
	Stages  []Stage `json:"stages"`
}

// Stage is one entry of a timeline.
type Stage struct {
	// Name is one of the Stage constants.
	Name string `json:"name"`
	// Target is what the stage is about: the volume, image or container
	// name ("" for the pod's own stages).
	Target string    `json:"target,omitempty"`
	Start  time.Time `json:"start"`
	// End is nil while the stage runs.
	End *time.Time `json:"end,omitempty"`
	// DurationSeconds is End - Start, or Now - Start while it runs.
	DurationSeconds float64 `json:"durationSeconds"`
	Outcome         Outcome `json:"outcome"`
	// Message is why it failed, or a note on success ("already present").
	Message string `json:"message,omitempty"`
	// Bytes is the size of a pulled or present image, when known.
	Bytes int64 `json:"bytes,omitempty"`
	// Progress is how far a running image pull has got, and then its last
	// reading; nil where the runtime does not tell.
	Progress *Progress `json:"progress,omitempty"`
}

// Progress is a reading of an image pull: the bytes of the image on the
// node, all of them, and the download rate.
type Progress struct {
	DoneBytes      int64   `json:"doneBytes"`
	TotalBytes     int64   `json:"totalBytes"`
	BytesPerSecond float64 `json:"bytesPerSecond"`
}
