package syncloop

import (
	"context"

	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/pleg"
	"github.com/berthk8s/berth/internal/podsource"
	"github.com/berthk8s/berth/internal/podworker"
)

// handleUpdate applies one source update to the desired set, publishes the
// set, and only then dispatches the pods to their workers, so that a worker
// acting on an update sees the desired set that includes it (a removed pod
// is no longer desired when its worker cleans up).
func (l *Loop) handleUpdate(ctx context.Context, u podsource.Update) {
	logger := klog.FromContext(ctx)
	now := l.cfg.Clock.Now()
	logger.V(2).Info("Pod update", "op", u.Op, "source", u.Source, "pods", klog.KObjSlice(u.Pods))
	var dispatch []podworker.UpdateOptions
	for _, pod := range u.Pods {
		_, known := l.pods[pod.UID]
		switch u.Op {
		case podsource.OpAdd, podsource.OpUpdate, podsource.OpReconcile:
			l.pods[pod.UID] = pod
			if u.Op == podsource.OpReconcile && known {
				continue // only the status changed in the source: nothing to run
			}
			t := podworker.SyncPodUpdate
			if !known {
				t = podworker.SyncPodCreate
			}
			dispatch = append(dispatch, podworker.UpdateOptions{Type: t, Pod: pod, StartTime: now})
		case podsource.OpDelete:
			// Graceful deletion: the pod stays desired until it is removed;
			// its worker terminates it with the requested grace period.
			l.pods[pod.UID] = pod
			dispatch = append(dispatch, podworker.UpdateOptions{
				Type: podworker.SyncPodKill, Pod: pod, StartTime: now,
				KillGracePeriod: pod.DeletionGracePeriodSeconds,
			})
		case podsource.OpRemove:
			delete(l.pods, pod.UID)
			dispatch = append(dispatch, podworker.UpdateOptions{Type: podworker.SyncPodKill, Pod: pod, StartTime: now})
		}
	}
	l.publish()
	for _, opts := range dispatch {
		l.cfg.Workers.Update(ctx, opts)
	}
}

// handleEvent wakes the worker of the pod a PLEG event is about. Events for
// pods berth does not know are left to housekeeping.
func (l *Loop) handleEvent(ctx context.Context, ev pleg.Event) {
	pod, ok := l.pods[ev.ID]
	if !ok {
		klog.FromContext(ctx).V(4).Info("PLEG event for unknown pod", "podUID", ev.ID, "event", ev.Type)
		return
	}
	l.cfg.Workers.Update(ctx, podworker.UpdateOptions{Type: podworker.SyncPodSync, Pod: pod, StartTime: l.cfg.Clock.Now()})
}
