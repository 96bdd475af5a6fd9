package agent

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/images/pullprogress"
	"github.com/berthk8s/berth/internal/platform/contentstore"
	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/internal/pod/kuberuntime"
)

// pullWatcher reads image pull progress from containerd's content store,
// on the image service's socket. Other runtimes have no such API: berth
// says so once, here, and pulls go without progress.
func (n *node) pullWatcher(ctx context.Context, info cri.Info) kuberuntime.PullWatcher {
	if info.RuntimeName != "containerd" {
		klog.FromContext(ctx).Info("The container runtime does not report image pull progress: no progress in Pulling events or pod timelines", "runtime", info.RuntimeName)
		return nil
	}
	w, err := pullprogress.New(pullprogress.Config{Store: contentstore.New(n.conn.client.ImageConn()), Clock: n.clock})
	if err != nil {
		klog.FromContext(ctx).Error(err, "No image pull progress")
		return nil
	}
	return w
}

// pullEvents records a Pulling event whose message the pull's progress
// updates (kuberuntime.ProgressEventFunc).
func (c *cluster) pullEvents(pod *corev1.Pod, container, eventType, reason, msg string) (update func(string), done func()) {
	p := c.recorder.StartProgress(pod, container, eventType, reason, msg)
	return p.Update, p.Close
}
