package allocation

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/dump"

	"github.com/berthk8s/berth/internal/platform/checkpoint"
)

// The checkpoint files' names in the root directory, as upstream's.
const (
	AllocatedFile = "allocated_pods_state"
	ActuatedFile  = "actuated_pods_state"
)

// PodResources is what one pod has (allocated or actuated): the
// resources of its resizable containers by name and its pod-level
// resources. The JSON field names are upstream's PodResourceInfo's.
// Values are never modified in place: setters store copies.
type PodResources struct {
	ContainerResources map[string]corev1.ResourceRequirements
	PodLevelResources  *corev1.ResourceRequirements `json:",omitempty"`
	// EmptyDirVolumeLimits is kept as read (berth does not resize
	// memory-backed volumes: InPlacePodVerticalScalingMemoryBackedVolumes
	// is alpha and off).
	EmptyDirVolumeLimits map[string]*resource.Quantity `json:",omitempty"`
}

func (r PodResources) clone() PodResources {
	out := PodResources{ContainerResources: make(map[string]corev1.ResourceRequirements, len(r.ContainerResources))}
	for name, rr := range r.ContainerResources {
		out.ContainerResources[name] = *rr.DeepCopy()
	}
	out.PodLevelResources = r.PodLevelResources.DeepCopy()
	if r.EmptyDirVolumeLimits != nil {
		out.EmptyDirVolumeLimits = maps.Clone(r.EmptyDirVolumeLimits)
	}
	return out
}

// file is upstream's checkpoint envelope: data is the JSON of the
// entries, checksum upstream's FNV-32a over its dump.ForHash rendering.
type file struct {
	Data     string `json:"data"`
	Checksum uint64 `json:"checksum"`
}

type entries struct {
	Entries map[types.UID]PodResources `json:"entries,omitempty"`
}

func encode(m map[types.UID]PodResources) ([]byte, error) {
	d, err := json.Marshal(entries{Entries: m})
	if err != nil {
		return nil, fmt.Errorf("serialize pod resources: %w", err)
	}
	return json.Marshal(file{Data: string(d), Checksum: uint64(checkpoint.Hash(dump.ForHash(string(d))))})
}

func decode(b []byte) (map[types.UID]PodResources, error) {
	var f file
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("deserialize pod resources checkpoint: %w", err)
	}
	if got := uint64(checkpoint.Hash(dump.ForHash(f.Data))); got != f.Checksum {
		return nil, fmt.Errorf("checkpoint is corrupted: checksum %d, want %d", got, f.Checksum)
	}
	var e entries
	if err := json.Unmarshal([]byte(f.Data), &e); err != nil {
		return nil, fmt.Errorf("deserialize pod resources: %w", err)
	}
	if e.Entries == nil {
		e.Entries = map[types.UID]PodResources{}
	}
	return e.Entries, nil
}

// Store is one checkpoint file's content in memory, written through on
// every change. It is safe for concurrent use; mu guards entries and the
// file.
type Store struct {
	dir, name string
	mu        sync.Mutex
	entries   map[types.UID]PodResources
}

// OpenStore reads dir/name (none yet is an empty store). A corrupt file
// is an error: berth must not forget what it admitted.
func OpenStore(dir, name string) (*Store, error) {
	m, found, err := checkpoint.Load(dir, name, decode)
	if err != nil {
		return nil, err
	}
	if !found {
		m = map[types.UID]PodResources{}
	}
	return &Store{dir: dir, name: name, entries: m}, nil
}

// NewMemoryStore is a Store that is not persisted (tests, and berth with
// no root directory).
func NewMemoryStore() *Store { return &Store{entries: map[types.UID]PodResources{}} }

// Get returns a copy of the pod's entry.
func (s *Store) Get(uid types.UID) (PodResources, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.entries[uid]
	if !ok {
		return PodResources{}, false
	}
	return r.clone(), true
}

// apply returns pod with its entry overlaid (Apply), without copying the
// entry: Apply copies what it writes.
func (s *Store) apply(pod *corev1.Pod) (out *corev1.Pod, found bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.entries[pod.UID]
	if !ok {
		return pod, false
	}
	out, _ = Apply(pod, r)
	return out, true
}

// Set replaces the pod's entry with a copy of r; an unchanged entry
// writes nothing.
func (s *Store) Set(uid types.UID, r PodResources) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.entries[uid]; ok && equality.Semantic.DeepEqual(old, r) {
		return nil
	}
	s.entries[uid] = r.clone()
	return s.persist()
}

// Update changes the pod's entry (the zero entry when it has none) with
// f, which gets a copy.
func (s *Store) Update(uid types.UID, f func(*PodResources)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.entries[uid].clone()
	f(&r)
	if old, ok := s.entries[uid]; ok && equality.Semantic.DeepEqual(old, r) {
		return nil
	}
	s.entries[uid] = r
	return s.persist()
}

// uids lists the pods with an entry.
func (s *Store) uids() []types.UID {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Collect(maps.Keys(s.entries))
}

// Retain drops the entries of pods keep does not want.
func (s *Store) Retain(keep func(types.UID) bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := false
	for uid := range s.entries {
		if !keep(uid) {
			delete(s.entries, uid)
			changed = true
		}
	}
	if !changed {
		return nil
	}
	return s.persist()
}

// persist writes the file (mu held).
func (s *Store) persist() error {
	if s.dir == "" {
		return nil
	}
	return checkpoint.Store(s.dir, s.name, s.entries, encode)
}
