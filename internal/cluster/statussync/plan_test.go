package statussync

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestPlan(t *testing.T) {
	// The base: an API pod whose running status was written and shows in
	// the API object.
	base := func() (Pod, map[types.UID]Record) {
		api := withStatus(apiPod("u1", ""), running())
		return Pod{UID: "u1", Status: running(), Config: api, API: api},
			map[types.UID]Record{"u1": {Target: "u1", Status: running()}}
	}
	static := staticPod("hash1")
	mirror := withStatus(mirrorOf(static, "m1", ""), running())
	otherCondition := func(st corev1.PodStatus) corev1.PodStatus {
		st.Conditions = append([]corev1.PodCondition{{Type: "example.com/lb", Status: corev1.ConditionTrue}}, st.Conditions...)
		return st
	}

	tests := []struct {
		name     string
		periodic bool
		mutate   func(p *Pod, recs map[types.UID]Record)
		want     []Op
	}{
		{"written and unchanged", false, func(*Pod, map[types.UID]Record) {}, nil},
		{"written and unchanged, periodic pass", true, func(*Pod, map[types.UID]Record) {}, nil},
		{"never written", false, func(_ *Pod, r map[types.UID]Record) { delete(r, "u1") }, []Op{{UID: "u1", Write: true}}},
		{"status changed", false, func(p *Pod, _ map[types.UID]Record) { p.Status = failed() }, []Op{{UID: "u1", Write: true}}},
		{"sub-second times do not count", false, func(p *Pod, _ map[types.UID]Record) {
			p.Status.StartTime = ptrTime(t0.Add(5e8))
		}, nil},
		{"only others' conditions changed", false, func(p *Pod, _ map[types.UID]Record) { p.Status = otherCondition(p.Status) }, nil},
		{"written to another object of that name", false, func(_ *Pod, r map[types.UID]Record) {
			r["u1"] = Record{Target: "old", Status: running()}
		}, []Op{{UID: "u1", Write: true}}},
		{"API status differs: only the periodic pass reconciles", false, func(p *Pod, _ map[types.UID]Record) {
			p.API = withStatus(p.API, corev1.PodStatus{Phase: corev1.PodPending})
		}, nil},
		{"API status differs, periodic pass", true, func(p *Pod, _ map[types.UID]Record) {
			p.API = withStatus(p.API, corev1.PodStatus{Phase: corev1.PodPending})
		}, []Op{{UID: "u1", Write: true}}},
		{"API has others' conditions too, periodic pass", true, func(p *Pod, _ map[types.UID]Record) {
			p.API = withStatus(p.API, otherCondition(running()))
		}, nil},
		{"API is terminal, berth is not: held", false, func(p *Pod, _ map[types.UID]Record) {
			p.API = withStatus(p.API, failed())
		}, []Op{{UID: "u1", Hold: holdReason(corev1.PodFailed, corev1.PodRunning)}}},
		{"API is terminal, berth is not: held, never written", true, func(p *Pod, r map[types.UID]Record) {
			p.API = withStatus(p.API, corev1.PodStatus{Phase: corev1.PodSucceeded})
			delete(r, "u1")
		}, []Op{{UID: "u1", Hold: holdReason(corev1.PodSucceeded, corev1.PodRunning)}}},
		{"held already", true, func(p *Pod, r map[types.UID]Record) {
			p.API = withStatus(p.API, failed())
			r["u1"] = Record{Target: "u1", Status: running(), Held: true}
		}, nil},
		{"held, now berth agrees", false, func(p *Pod, r map[types.UID]Record) {
			p.API = withStatus(p.API, failed())
			p.Status = failed()
			r["u1"] = Record{Target: "u1", Status: running(), Held: true}
		}, []Op{{UID: "u1", Write: true}}},
		{"held, same terminal phase status unchanged", false, func(p *Pod, r map[types.UID]Record) {
			p.API = withStatus(p.API, failed())
			p.Status = failed()
			r["u1"] = Record{Target: "u1", Status: failed(), Held: true}
		}, []Op{{UID: "u1", Write: true}}},
		{"terminal status delayed while containers could run", false, func(p *Pod, r map[types.UID]Record) {
			p.Status, p.CouldRun = failed(), true
			r["u1"] = Record{Target: "u1", Status: failed(), Delayed: true}
		}, nil},
		{"delayed terminal status, containers now stopped", false, func(p *Pod, r map[types.UID]Record) {
			p.Status = failed()
			r["u1"] = Record{Target: "u1", Status: failed(), Delayed: true}
		}, []Op{{UID: "u1", Write: true}}},
		{"pod gone", true, func(p *Pod, r map[types.UID]Record) { p.Config, p.API = nil, nil; delete(r, "u1") }, nil},
		{"static pod without a mirror pod", true, func(p *Pod, r map[types.UID]Record) {
			p.UID, p.Config, p.API = "hash1", static, nil
			delete(r, "u1")
		}, nil},
		{"static pod with a mirror pod", false, func(p *Pod, r map[types.UID]Record) {
			p.UID, p.Config, p.API = "hash1", static, mirror
			delete(r, "u1")
		}, []Op{{UID: "hash1", Write: true}}},
		{"static pod written to its mirror pod", true, func(p *Pod, r map[types.UID]Record) {
			p.UID, p.Config, p.API = "hash1", static, mirror
			delete(r, "u1")
			r["hash1"] = Record{Target: "m1", Status: running()}
		}, nil},
		{"static pod, mirror pod replaced", false, func(p *Pod, r map[types.UID]Record) {
			p.UID, p.Config, p.API = "hash1", static, withStatus(mirrorOf(static, "m2", ""), running())
			delete(r, "u1")
			r["hash1"] = Record{Target: "m1", Status: running()}
		}, []Op{{UID: "hash1", Write: true}}},
		{"deleted static pod: the mirror pod is not deleted here", false, func(p *Pod, r map[types.UID]Record) {
			p.UID, p.Config, p.API, p.Status = "hash1", deleting(static), deleting(mirror), failed()
			p.CanBeDeleted = true
			delete(r, "u1")
		}, []Op{{UID: "hash1", Write: true}}},
		{"deleted, finished: write then delete", false, func(p *Pod, _ map[types.UID]Record) {
			p.Config, p.API = deleting(p.Config), deleting(p.API)
			p.Status, p.CanBeDeleted = failed(), true
		}, []Op{{UID: "u1", Write: true, Delete: true}}},
		{"deleted, finished, status written: delete", false, func(p *Pod, r map[types.UID]Record) {
			p.Config, p.API = deleting(p.Config), deleting(withStatus(p.API, failed()))
			p.Status, p.CanBeDeleted = failed(), true
			r["u1"] = Record{Target: "u1", Status: failed()}
		}, []Op{{UID: "u1", Delete: true}}},
		{"deleted, terminal, pod workers not done", false, func(p *Pod, _ map[types.UID]Record) {
			p.Config, p.API = deleting(p.Config), deleting(p.API)
			p.Status = failed()
		}, []Op{{UID: "u1", Write: true}}},
		{"deleted, not terminal", false, func(p *Pod, _ map[types.UID]Record) {
			p.Config, p.API = deleting(p.Config), deleting(p.API)
			p.Status.ContainerStatuses[0].RestartCount = 1
			p.CanBeDeleted = true
		}, []Op{{UID: "u1", Write: true}}},
		{"deleted already", true, func(p *Pod, r map[types.UID]Record) {
			p.Config, p.API = deleting(p.Config), deleting(withStatus(p.API, failed()))
			p.Status, p.CanBeDeleted = failed(), true
			r["u1"] = Record{Target: "u1", Status: failed(), Deleted: true}
		}, nil},
		{"held and deleted: the API's terminal phase allows the deletion", false, func(p *Pod, _ map[types.UID]Record) {
			p.Config, p.API = deleting(p.Config), deleting(withStatus(p.API, failed()))
			p.CanBeDeleted = true
		}, []Op{{UID: "u1", Hold: holdReason(corev1.PodFailed, corev1.PodRunning), Delete: true}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, recs := base()
			tc.mutate(&p, recs)
			got := Plan(Inputs{Pods: []Pod{p}, Records: recs, Periodic: tc.periodic, Now: now})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Plan mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlanOrdersByUID(t *testing.T) {
	var pods []Pod
	for _, uid := range []types.UID{"c", "a", "b"} {
		api := apiPod(string(uid), corev1.PodPending)
		pods = append(pods, Pod{UID: uid, Status: running(), Config: api, API: api})
	}
	got := Plan(Inputs{Pods: pods, Now: now})
	want := []Op{{UID: "a", Write: true}, {UID: "b", Write: true}, {UID: "c", Write: true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Plan mismatch (-want +got):\n%s", diff)
	}
}
