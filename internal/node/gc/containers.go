package gc

import (
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// ContainerPolicy is upstream's container GCPolicy.
type ContainerPolicy struct {
	// MinAge: a dead container created more recently is kept.
	MinAge time.Duration
	// MaxPerPodContainer: dead instances kept per pod and container name;
	// negative means no limit.
	MaxPerPodContainer int
	// MaxContainers: dead containers kept on the node; negative means no
	// limit.
	MaxContainers int
}

// ContainerInputs is the snapshot ChooseContainers and ChooseSandboxes
// decide on.
type ContainerInputs struct {
	// Pods is every pod in the runtime (kuberuntime ListPods).
	Pods map[types.UID]*runtimestate.Pod
	// ContentRemovable are the pods whose every dead container and idle
	// sandbox may go: deleted or evicted and terminated, or unknown once
	// every pod source was seen (podworker's ShouldPodContentBeRemoved).
	// Empty until the sources are ready.
	ContentRemovable map[types.UID]bool
	Policy           ContainerPolicy
	Now              time.Time
}

// DeadContainer is one container chosen for removal, with its pod.
type DeadContainer struct {
	PodUID    types.UID
	Container runtimestate.Container
}

// evictUnit is the dead instances of one container name of one pod,
// newest first.
type evictUnit struct {
	uid  types.UID
	name string
	dead []runtimestate.Container
}

// ChooseContainers decides which dead containers to remove, as upstream's
// evictContainers: every container not running and created at least
// MinAge ago is evictable; all of a content-removable pod's go; then the
// oldest beyond MaxPerPodContainer per pod and container name; then, over
// MaxContainers, the node-wide limit is spread evenly over the units (at
// least one each), and what is still over goes oldest first.
func ChooseContainers(in ContainerInputs) []DeadContainer {
	units := evictableUnits(in.Pods, in.Now.Add(-in.Policy.MinAge))
	var out []DeadContainer
	kept := units[:0]
	for _, u := range units {
		if in.ContentRemovable[u.uid] {
			out = appendDead(out, u.uid, u.dead)
			continue
		}
		kept = append(kept, u)
	}
	units = kept
	if in.Policy.MaxPerPodContainer >= 0 {
		out = enforcePerUnit(out, units, in.Policy.MaxPerPodContainer)
	}
	if limit := in.Policy.MaxContainers; limit >= 0 && countDead(units) > limit {
		perUnit := limit / len(units)
		if perUnit < 1 {
			perUnit = 1
		}
		out = enforcePerUnit(out, units, perUnit)
		if countDead(units) > limit {
			var flat []DeadContainer
			for _, u := range units {
				flat = appendDead(flat, u.uid, u.dead)
			}
			sort.SliceStable(flat, func(i, j int) bool { return newer(flat[i].Container, flat[j].Container) })
			out = append(out, flat[limit:]...)
		}
	}
	return out
}

// evictableUnits groups the containers that are not running and were
// created no later than newest, by pod and name, newest first; units are
// ordered by pod UID and name so the choice is deterministic.
func evictableUnits(pods map[types.UID]*runtimestate.Pod, newest time.Time) []*evictUnit {
	byKey := map[[2]string]*evictUnit{}
	var units []*evictUnit
	for uid, p := range pods {
		for _, c := range p.Containers {
			if c.State == runtimestate.ContainerRunning || c.CreatedAt.After(newest) {
				continue
			}
			k := [2]string{string(uid), c.Name}
			u := byKey[k]
			if u == nil {
				u = &evictUnit{uid: uid, name: c.Name}
				byKey[k] = u
				units = append(units, u)
			}
			u.dead = append(u.dead, c)
		}
	}
	for _, u := range units {
		sort.SliceStable(u.dead, func(i, j int) bool { return newer(u.dead[i], u.dead[j]) })
	}
	sort.Slice(units, func(i, j int) bool {
		if units[i].uid != units[j].uid {
			return units[i].uid < units[j].uid
		}
		return units[i].name < units[j].name
	})
	return units
}

// enforcePerUnit moves the oldest dead containers beyond keep of each unit
// to out.
func enforcePerUnit(out []DeadContainer, units []*evictUnit, keep int) []DeadContainer {
	for _, u := range units {
		if len(u.dead) > keep {
			out = appendDead(out, u.uid, u.dead[keep:])
			u.dead = u.dead[:keep]
		}
	}
	return out
}

func appendDead(out []DeadContainer, uid types.UID, cs []runtimestate.Container) []DeadContainer {
	for _, c := range cs {
		out = append(out, DeadContainer{PodUID: uid, Container: c})
	}
	return out
}

func countDead(units []*evictUnit) int {
	n := 0
	for _, u := range units {
		n += len(u.dead)
	}
	return n
}

// newer orders containers newest first: creation time, then ID for a
// stable order.
func newer(a, b runtimestate.Container) bool {
	if !a.CreatedAt.Equal(b.CreatedAt) {
		return a.CreatedAt.After(b.CreatedAt)
	}
	return a.ID > b.ID
}

// ChooseSandboxes decides which sandboxes to remove, as upstream's
// evictSandboxes: a sandbox is active while it is ready or holds a
// container (in any state). Of each pod's sandboxes, newest first, every
// inactive one goes if the pod's content is removable; otherwise every
// inactive one but the newest sandbox of the pod.
func ChooseSandboxes(in ContainerInputs) []runtimestate.Sandbox {
	var out []runtimestate.Sandbox
	uids := make([]types.UID, 0, len(in.Pods))
	for uid := range in.Pods {
		uids = append(uids, uid)
	}
	sort.Slice(uids, func(i, j int) bool { return uids[i] < uids[j] })
	for _, uid := range uids {
		p := in.Pods[uid]
		holding := map[string]bool{}
		for _, c := range p.Containers {
			holding[c.SandboxID] = true
		}
		sbs := append([]runtimestate.Sandbox(nil), p.Sandboxes...)
		sort.SliceStable(sbs, func(i, j int) bool { return sbs[i].CreatedAt.After(sbs[j].CreatedAt) })
		from := 1
		if in.ContentRemovable[uid] {
			from = 0
		}
		for i := len(sbs) - 1; i >= from; i-- {
			if sbs[i].State != runtimestate.SandboxReady && !holding[sbs[i].ID] {
				out = append(out, sbs[i])
			}
		}
	}
	return out
}
