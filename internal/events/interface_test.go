package events

import "github.com/berthk8s/berth/internal/kuberuntime"

var _ kuberuntime.Recorder = (*Recorder)(nil)
