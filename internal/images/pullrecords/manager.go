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
	// records are the pulled records by image reference, as on disk,
	// their credential mappings keyed by normalised names (repository).
	records map[string]*kubeletconfigv1beta1.ImagePulledRecord
	// intents count the pulls of each image (its normalised reference,
	// canonical) in flight.
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
		r, renamed := canonicalMapping(r)
		m.records[r.ImageRef] = r
		if old[i] || renamed {
			m.persist(ctx, r)
		}
	}
	images, oldIntents, err := cfg.Store.Intents()
	if err != nil {
		logger.Error(err, "Some image pull intents could not be read")
	}
	for i, image := range images {
		m.loadIntent(ctx, image, oldIntents[i])
	}
	m.completeIntents(ctx, cfg.Images)
	m.count()
	return m, nil
}

// loadIntent marks the image of an intent a previous run left as pulled
// by berth. An intent under another spelling than the normalised one (an
// upstream kubelet's, or berth's before it normalised) or in an older
// version is rewritten under the normalised name first, so that every
// intent on disk is named as the Manager deletes it.
func (m *Manager) loadIntent(ctx context.Context, image string, old bool) {
	logger := klog.FromContext(ctx)
	key, err := canonical(image)
	if err != nil {
		logger.Error(err, "Ignoring an image pull intent")
		return
	}
	m.stale[key] = true
	if !old && key == image {
		return
	}
	if err := m.cfg.Store.WriteIntent(key); err != nil {
		logger.Error(err, "Cannot migrate an image pull intent", "image", image)
		return
	}
	if key != image {
		if err := m.cfg.Store.DeleteIntent(image); err != nil {
			logger.Error(err, "Cannot remove a migrated image pull intent", "image", image)
		}
	}
}

// completeIntents turns each intent whose image the runtime has (by tag
// or digest) into a record without credentials.
func (m *Manager) completeIntents(ctx context.Context, images []*runtimeapi.Image) {
	for _, img := range images {
		for _, name := range append(append([]string(nil), img.GetRepoDigests()...), img.GetRepoTags()...) {
			name, err := canonical(name)
			if err != nil || !m.stale[name] {
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
	key, err := canonical(image)
	if err != nil {
		return true, err
	}
	m.mu.Lock()
	rec := m.records[imageRef]
	pulledByKubelet := rec != nil || m.intents[key] > 0 || m.stale[key]
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

// StartPull records the intent to pull image, durably, before the pull.
// Every call that returns nil must be followed by one Pulled or
// PullFailed for the image; an image that does not parse is refused.
func (m *Manager) StartPull(image string) error {
	key, err := canonical(image)
	if err != nil {
		return fmt.Errorf("record image pull intent: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.cfg.Store.WriteIntent(key); err != nil {
		return fmt.Errorf("record image pull intent: %w", err)
	}
	m.intents[key]++
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
		// The intent stays, so the image still counts as pulled by berth
		// under every spelling, and the next start turns it into a record.
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
	key, err := canonical(image)
	if err != nil {
		return // StartPull refused it: no intent
	}
	if m.intents[key] > 1 {
		m.intents[key]--
		return
	}
	if err := m.cfg.Store.DeleteIntent(key); err != nil {
		klog.FromContext(ctx).Error(err, "Cannot remove an image pull intent", "image", key)
		return
	}
	delete(m.intents, key)
	delete(m.stale, key)
	m.count()
}

// recordLocked merges creds (nil: none, the image is only tracked) into
// the record of imageRef for image's name and writes it if it changed;
// false if it could not be written.
func (m *Manager) recordLocked(ctx context.Context, image, imageRef string, creds *kubeletconfigv1beta1.ImagePullCredentials) bool {
	name, err := repository(image)
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
