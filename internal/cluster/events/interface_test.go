package events

import "github.com/berthk8s/berth/internal/pod/kuberuntime"

var _ kuberuntime.Recorder = (*Recorder)(nil)
