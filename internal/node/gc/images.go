package gc

import (
	"errors"
	"math"
	"sort"
	"time"
)

// ImagePolicy is upstream's ImageGCPolicy: the disk thresholds in percent
// of the image filesystem's capacity and the image age bounds.
type ImagePolicy struct {
	// HighThresholdPercent: at or above this usage, images are removed
	// until usage is down to LowThresholdPercent.
	HighThresholdPercent int
	LowThresholdPercent  int
	// MinAge: an image detected more recently is never removed for space.
	MinAge time.Duration
	// MaxAge, when not 0: an image unused for longer is removed whatever
	// the disk usage.
	MaxAge time.Duration
}

// Disabled reports whether the policy can never remove an image: a high
// threshold of 100 and no maximum age, as upstream stubs the manager then.
func (p ImagePolicy) Disabled() bool {
	return p.HighThresholdPercent >= 100 && p.MaxAge == 0
}

// Image is what the image GC knows of one image.
type Image struct {
	ID   string
	Size int64
	// FirstDetected is when berth first listed the image; LastUsed when
	// berth last saw a container of it (zero if never).
	FirstDetected time.Time
	LastUsed      time.Time
	// InUse: a container (in any state) uses it, or it is the sandbox
	// image. Pinned: the runtime says it must stay (CRI Image.pinned).
	InUse  bool
	Pinned bool
}

// Image GC reasons: the label values of kubelet_image_garbage_collected_total.
const (
	ReasonAge   = "age"
	ReasonSpace = "space"
)

// EvictionOrder returns the images that may ever be removed (neither in
// use nor pinned), least recently used first, then first detected first,
// as upstream's imagesInEvictionOrder.
func EvictionOrder(images []Image) []Image {
	var out []Image
	for _, img := range images {
		if !img.InUse && !img.Pinned {
			out = append(out, img)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].LastUsed.Equal(out[j].LastUsed) {
			return out[i].LastUsed.Before(out[j].LastUsed)
		}
		if !out[i].FirstDetected.Equal(out[j].FirstDetected) {
			return out[i].FirstDetected.Before(out[j].FirstDetected)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// ChooseByAge splits candidates (in eviction order) into those unused for
// longer than p.MaxAge, and the rest. Nothing is chosen when MaxAge is 0,
// or before berth has run for MaxAge (began is when it started), lest an
// image be removed before berth could see it used.
func ChooseByAge(candidates []Image, p ImagePolicy, began, now time.Time) (remove, keep []Image) {
	if p.MaxAge == 0 || now.Sub(began) <= p.MaxAge {
		return nil, candidates
	}
	for _, img := range candidates {
		if now.Sub(img.LastUsed) > p.MaxAge {
			remove = append(remove, img)
			continue
		}
		keep = append(keep, img)
	}
	return remove, keep
}

// SpaceChoice is what ChooseBySpace decided.
type SpaceChoice struct {
	// UsagePercent is the image filesystem's usage (100 - available/capacity).
	UsagePercent int
	// ToFree is how many bytes must go to reach the low threshold; 0 under
	// the high threshold.
	ToFree int64
	// Remove are the images to remove, in order; Freed their total size.
	Remove []Image
	Freed  int64
}

// Short reports whether removing every chosen image still frees less than
// needed: upstream's FreeDiskSpaceFailed.
func (c SpaceChoice) Short() bool { return c.Freed < c.ToFree }

// errInvalidCapacity is upstream's InvalidDiskCapacity.
var errInvalidCapacity = errors.New("invalid capacity 0 on image filesystem")

// ChooseBySpace decides, as upstream's GarbageCollect and freeSpace, which
// candidates (in eviction order) to remove when the image filesystem is at
// or above the high threshold: the oldest ones first, skipping images
// detected less than MinAge ago, until the low threshold would be reached.
// A capacity of 0 is an error.
func ChooseBySpace(candidates []Image, p ImagePolicy, capacity, available int64, now time.Time) (SpaceChoice, error) {
	if available > capacity {
		available = capacity
	}
	if capacity <= 0 {
		return SpaceChoice{}, errInvalidCapacity
	}
	c := SpaceChoice{UsagePercent: 100 - int(available*100/capacity)}
	if c.UsagePercent < p.HighThresholdPercent {
		return c, nil
	}
	c.ToFree = capacity*int64(100-p.LowThresholdPercent)/100 - available
	c.Remove, c.Freed = chooseToFree(candidates, p.MinAge, c.ToFree, now)
	return c, nil
}

// ChooseAllUnused decides, as upstream's DeleteUnusedImages (freeSpace
// with no byte target), which candidates (in eviction order) the
// eviction manager's node-level reclaim removes: every one detected at
// least MinAge ago, whatever the disk usage and MaxAge. freed is their
// total size.
func ChooseAllUnused(candidates []Image, p ImagePolicy, now time.Time) (remove []Image, freed int64) {
	return chooseToFree(candidates, p.MinAge, math.MaxInt64, now)
}

// chooseToFree is upstream's freeSpace: candidates in order, skipping
// those detected less than minAge ago (just pulled, about to be used),
// until toFree bytes are chosen.
func chooseToFree(candidates []Image, minAge time.Duration, toFree int64, now time.Time) (remove []Image, freed int64) {
	for _, img := range candidates {
		if now.Sub(img.FirstDetected) < minAge {
			continue
		}
		remove = append(remove, img)
		freed += img.Size
		if freed >= toFree {
			break
		}
	}
	return remove, freed
}
