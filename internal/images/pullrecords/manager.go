package pullrecords

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/clock"
)

// Config is what New needs.
type Config struct {
	Store  *Store
	Policy Policy
	Clock  clock.PassiveClock
	// Images lists the runtime's images once at start, to turn the intents
	// of pulls that finished while berth was down into records.
	Images []*runtimeapi.Image
	// Checked, if set, counts one check with its result (Result*).
	Checked func(result string)
	// Counts, if set, is given the number of intents and records after
	// every change.
	Counts func(intents, records int)
}

// Manager tracks berth's image pulls and answers MustPull. It is safe for
// concurrent use.
type Manager struct {
	cfg Config

	mu sync.Mutex
	// records are the pulled records by image reference, as on disk.
	records map[string]*kubeletconfigv1beta1.ImagePulledRecord
	// intents count the pulls of each image (the container's image field)
	// in flight.
	intents map[string]int
	// stale are the intents a previous run left that did not become
	// records: the image still counts as pulled by berth until a pull of
	// it ends here.
	stale map[string]bool
}

// New loads the records, migrates older files and turns the intents of
// pulls that completed while berth was not running into records without
// credentials (so every pod must prove access), as upstream's initialize.
func New(ctx context.Context, cfg Config) (*Manager, error) {
	if cfg.Store == nil || cfg.Clock == nil {
		return nil, errors.New("pullrecords: Store and Clock are required")
	}
	m := &Manager{cfg: cfg, records: map[string]*kubeletconfigv1beta1.ImagePulledRecord{}, intents: map[string]int{}, stale: map[string]bool{}}
	logger := klog.FromContext(ctx)
	recs, old, err := cfg.Store.Records()
	if err != nil {
		logger.Error(err, "Some image pulled records could not be read; images they covered must be pulled again by pods that need them")
	}
	for i, r := range recs {
		m.records[r.ImageRef] = r
		if old[i] {
			m.persist(ctx, r)
		}
	}
	images, oldIntents, err := cfg.Store.Intents()
	if err != nil {
		logger.Error(err, "Some image pull intents could not be read")
	}
	for i, image := range images {
		m.stale[image] = true
		if oldIntents[i] {
			if err := cfg.Store.WriteIntent(image); err != nil {
				logger.Error(err, "Cannot migrate an image pull intent", "image", image)
			}
		}
	}
	m.completeIntents(ctx, cfg.Images)
	m.count()
	return m, nil
}

// completeIntents turns each intent whose image the runtime has (by tag
// or digest) into a record without credentials.
func (m *Manager) completeIntents(ctx context.Context, images []*runtimeapi.Image) {
	for _, img := range images {
		for _, name := range append(append([]string(nil), img.GetRepoDigests()...), img.GetRepoTags()...) {
			if !m.stale[name] {
				continue
			}
			m.recordLocked(ctx, name, img.GetId(), nil)
			if err := m.cfg.Store.DeleteIntent(name); err != nil {
				klog.FromContext(ctx).V(2).Info("Cannot remove an image pull intent", "image", name, "err", err)
				continue
			}
			delete(m.stale, name)
		}
	}
}

// MustPull says whether a pod must pull image (its container's image
// field) although the runtime has it as imageRef. podSecrets returns the
// pod's pull secrets that cover the image, each with the hash of what it
// gives; it is called only when needed. An error from it is returned with
// true.
func (m *Manager) MustPull(ctx context.Context, image, imageRef string, podSecrets func() ([]Secret, error)) (bool, error) {
	if imageRef == "" {
		return true, nil
	}
	m.mu.Lock()
	rec := m.records[imageRef]
	pulledByKubelet := rec != nil || m.intents[image] > 0 || m.stale[image]
	m.mu.Unlock()
	v, err := decide(m.cfg.Policy, image, rec, pulledByKubelet, podSecrets)
	if m.cfg.Checked != nil {
		m.cfg.Checked(v.result)
	}
	if v.learn != nil {
		m.mu.Lock()
		m.recordLocked(ctx, image, imageRef, &kubeletconfigv1beta1.ImagePullCredentials{KubernetesSecrets: []Secret{*v.learn}})
		m.mu.Unlock()
	}
	return v.mustPull, err
}

// StartPull records the intent to pull image, before the pull. Every call
// must be followed by one Pulled or PullFailed for the image.
func (m *Manager) StartPull(image string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.cfg.Store.WriteIntent(image); err != nil {
		return fmt.Errorf("record image pull intent: %w", err)
	}
	m.intents[image]++
	m.count()
	return nil
}

// Pulled records that image was pulled as imageRef with secret, or with
// credentials every pod on the node has (anonymously, or from the node's
// credential providers) when secret is nil.
func (m *Manager) Pulled(ctx context.Context, image, imageRef string, secret *Secret) {
	creds := &kubeletconfigv1beta1.ImagePullCredentials{NodePodsAccessible: true}
	if secret != nil {
		creds = &kubeletconfigv1beta1.ImagePullCredentials{KubernetesSecrets: []Secret{*secret}}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.recordLocked(ctx, image, imageRef, creds) {
		// The intent stays, so the image still counts as pulled by berth,
		// and the next start turns it into a record.
		return
	}
	m.endPullLocked(ctx, image)
}

// PullFailed ends a pull of image that did not succeed.
func (m *Manager) PullFailed(ctx context.Context, image string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.endPullLocked(ctx, image)
}

func (m *Manager) endPullLocked(ctx context.Context, image string) {
	if m.intents[image] > 1 {
		m.intents[image]--
		return
	}
	if err := m.cfg.Store.DeleteIntent(image); err != nil {
		klog.FromContext(ctx).Error(err, "Cannot remove an image pull intent", "image", image)
		return
	}
	delete(m.intents, image)
	delete(m.stale, image)
	m.count()
}

// recordLocked merges creds (nil: none, the image is only tracked) into
// the record of imageRef for image's name and writes it if it changed;
// false if it could not be written.
func (m *Manager) recordLocked(ctx context.Context, image, imageRef string, creds *kubeletconfigv1beta1.ImagePullCredentials) bool {
	name, err := trimTagDigest(image)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Cannot record an image pull", "image", image)
		return false
	}
	rec, changed := m.records[imageRef], false
	if rec == nil {
		rec, changed = &kubeletconfigv1beta1.ImagePulledRecord{ImageRef: imageRef}, true
	}
	if creds != nil {
		var merged bool
		rec, merged = merge(rec, name, *creds)
		changed = changed || merged
	}
	if !changed {
		return true
	}
	rec.LastUpdatedTime = metav1.NewTime(m.cfg.Clock.Now())
	if !m.persist(ctx, rec) {
		return false
	}
	m.records[imageRef] = rec
	m.count()
	return true
}

func (m *Manager) persist(ctx context.Context, rec *kubeletconfigv1beta1.ImagePulledRecord) bool {
	if err := m.cfg.Store.WriteRecord(rec); err != nil {
		klog.FromContext(ctx).Error(err, "Cannot write an image pulled record", "imageRef", rec.ImageRef)
		return false
	}
	return true
}

// Prune removes the records of images the runtime no longer has (refs is
// every image ID it listed) that were last updated before until, a time
// taken before the listing: upstream's PruneUnknownRecords, which the
// image GC calls after each pass.
func (m *Manager) Prune(ctx context.Context, refs []string, until time.Time) {
	have := make(map[string]bool, len(refs))
	for _, r := range refs {
		have[r] = true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for ref, rec := range m.records {
		if have[ref] || !rec.LastUpdatedTime.Time.Before(until) {
			continue
		}
		if err := m.cfg.Store.DeleteRecord(ref); err != nil {
			klog.FromContext(ctx).Error(err, "Cannot remove an image pulled record", "imageRef", ref)
			continue
		}
		delete(m.records, ref)
	}
	m.count()
}

func (m *Manager) count() {
	if m.cfg.Counts != nil {
		n := len(m.intents)
		for image := range m.stale {
			if m.intents[image] == 0 {
				n++
			}
		}
		m.cfg.Counts(n, len(m.records))
	}
}
