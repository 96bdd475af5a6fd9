package syncloop

import (
	"context"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/pod/pleg"
	"github.com/berthk8s/berth/internal/pod/podsource"
	"github.com/berthk8s/berth/internal/pod/podstatus"
	"github.com/berthk8s/berth/internal/pod/podworker"
	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// handleUpdate applies one source update to the desired set, publishes the
// set, and only then dispatches the pods to their workers, so that a worker
// acting on an update sees the desired set that includes it (a removed pod
// is no longer desired when its worker cleans up). Mirror pods are not run:
// they are tracked apart and wake their static pod.
func (l *Loop) handleUpdate(ctx context.Context, u podsource.Update) {
	logger := klog.FromContext(ctx)
	now := l.cfg.Clock.Now()
	logger.V(2).Info("Pod update", "op", u.Op, "source", u.Source, "pods", klog.KObjSlice(u.Pods))
	pods := u.Pods
	if u.Op == podsource.OpAdd {
		pods = byCreation(pods)
	}
	var dispatch []podworker.UpdateOptions
	// resized are the added or updated pods, each with the spec it
	// replaces (nil for a pod new to berth).
	var resized [][2]*corev1.Pod
	// reconciled are the known pods whose status alone changed.
	var reconciled [][2]*corev1.Pod
	for _, pod := range pods {
		if podutil.IsMirror(pod) {
			dispatch = append(dispatch, l.updateMirror(u.Op, pod, now)...)
			continue
		}
		old, known := l.pods[pod.UID]
		switch u.Op {
		case podsource.OpAdd, podsource.OpUpdate, podsource.OpReconcile:
			l.pods[pod.UID] = pod
			if known {
				if u.Op == podsource.OpReconcile {
					// Only the status changed in the source: nothing to run,
					// unless a readiness gate's condition now contradicts
					// Ready (upstream HandlePodReconcile).
					if podstatus.NeedsReadinessReconcile(pod) {
						dispatch = append(dispatch, podworker.UpdateOptions{Type: podworker.SyncPodSync, Pod: pod, StartTime: now})
					}
					reconciled = append(reconciled, [2]*corev1.Pod{old, pod})
					continue
				}
				if l.cfg.Resize != nil {
					resized = append(resized, [2]*corev1.Pod{old, pod})
				}
				dispatch = append(dispatch, podworker.UpdateOptions{Type: podworker.SyncPodUpdate, Pod: pod, StartTime: now})
				continue
			}
			l.admit(ctx, pod)
			if l.cfg.Resize != nil {
				// After a restart of berth, an admitted pod's spec may ask
				// for other resources than its allocation.
				resized = append(resized, [2]*corev1.Pod{nil, pod})
			}
			dispatch = append(dispatch, podworker.UpdateOptions{Type: podworker.SyncPodCreate, Pod: pod, StartTime: now})
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
	// After publishing: a resize is admitted among the pods of this
	// update too.
	for _, r := range resized {
		l.cfg.Resize(ctx, r[0], r[1])
	}
	if len(reconciled) > 0 && l.cfg.Reconciled != nil {
		l.cfg.Reconciled(ctx, reconciled)
	}
	for _, opts := range dispatch {
		l.cfg.Workers.Update(ctx, opts)
	}
}

// admit runs admission for a pod new to berth against the pods admitted
// before it. A rejected pod stays desired: Admit has recorded its failed
// status, and its worker ends it without running anything.
func (l *Loop) admit(ctx context.Context, pod *corev1.Pod) {
	if l.cfg.Admit == nil {
		return
	}
	others := make([]*corev1.Pod, 0, len(l.pods))
	for uid, p := range l.pods {
		if uid != pod.UID {
			others = append(others, p)
		}
	}
	l.cfg.Admit(ctx, pod, byCreation(others))
}

// updateMirror records a mirror pod change and wakes the static pod it
// mirrors, which re-creates or replaces the mirror as needed.
func (l *Loop) updateMirror(op podsource.Op, mirror *corev1.Pod, now time.Time) []podworker.UpdateOptions {
	name := podutil.FullName(mirror)
	if op == podsource.OpRemove {
		delete(l.mirrors, name)
	} else {
		l.mirrors[name] = mirror
	}
	for _, p := range l.pods {
		if podutil.IsStatic(p) && podutil.FullName(p) == name {
			return []podworker.UpdateOptions{{Type: podworker.SyncPodSync, Pod: p, StartTime: now}}
		}
	}
	return nil
}

// byCreation returns pods sorted by creation time, then full name, the
// order in which upstream admits them.
func byCreation(pods []*corev1.Pod) []*corev1.Pod {
	out := slices.Clone(pods)
	slices.SortStableFunc(out, func(a, b *corev1.Pod) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(podutil.FullName(a), podutil.FullName(b))
	})
	return out
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

// handleProbeResult syncs the pod whose probe results changed, as
// upstream's sync loop does on liveness, readiness and startup updates: the
// sync regenerates its status and restarts a container that failed.
func (l *Loop) handleProbeResult(ctx context.Context, uid types.UID) {
	l.syncKnown(ctx, uid, "Probe result changed")
}

// syncKnown wakes the worker of a desired pod for why (logged); other
// pods are ignored.
func (l *Loop) syncKnown(ctx context.Context, uid types.UID, why string) {
	pod, ok := l.pods[uid]
	if !ok {
		return
	}
	klog.FromContext(ctx).V(4).Info(why, "pod", klog.KObj(pod), "podUID", uid)
	l.cfg.Workers.Update(ctx, podworker.UpdateOptions{Type: podworker.SyncPodSync, Pod: pod, StartTime: l.cfg.Clock.Now()})
}
