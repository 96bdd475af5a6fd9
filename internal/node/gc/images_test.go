package gc

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func ids(images []Image) []string {
	var out []string
	for _, img := range images {
		out = append(out, img.ID)
	}
	return out
}

func TestEvictionOrder(t *testing.T) {
	images := []Image{
		{ID: "used", InUse: true},
		{ID: "pinned", Pinned: true},
		{ID: "recent", LastUsed: t0.Add(2 * time.Hour)},
		{ID: "never-late", FirstDetected: t0.Add(time.Hour)},
		{ID: "never-early", FirstDetected: t0},
		{ID: "old", LastUsed: t0.Add(time.Hour)},
	}
	want := []string{"never-early", "never-late", "old", "recent"}
	if diff := cmp.Diff(want, ids(EvictionOrder(images))); diff != "" {
		t.Errorf("EvictionOrder (-want +got):\n%s", diff)
	}
}

func TestChooseByAge(t *testing.T) {
	candidates := []Image{
		{ID: "a", LastUsed: t0},                       // unused 3h at now
		{ID: "b", LastUsed: t0.Add(2 * time.Hour)},    // unused 1h
		{ID: "c", LastUsed: t0.Add(30 * time.Minute)}, // unused 2h30
	}
	now := t0.Add(3 * time.Hour)
	for _, tt := range []struct {
		name       string
		maxAge     time.Duration
		began      time.Time
		wantRemove []string
	}{
		{name: "max age 0: never", maxAge: 0, began: t0.Add(-time.Hour)},
		{name: "older than max age go", maxAge: 2 * time.Hour, began: t0.Add(-time.Hour), wantRemove: []string{"a", "c"}},
		{name: "exactly max age stays", maxAge: 150 * time.Minute, began: t0.Add(-time.Hour), wantRemove: []string{"a"}},
		{name: "berth started less than max age ago", maxAge: 2 * time.Hour, began: t0.Add(90 * time.Minute)},
		{name: "berth started exactly max age ago", maxAge: 2 * time.Hour, began: t0.Add(time.Hour)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			remove, keep := ChooseByAge(candidates, ImagePolicy{MaxAge: tt.maxAge}, tt.began, now)
			if diff := cmp.Diff(tt.wantRemove, ids(remove)); diff != "" {
				t.Errorf("remove (-want +got):\n%s", diff)
			}
			if len(remove)+len(keep) != len(candidates) {
				t.Errorf("remove %d + keep %d != %d candidates", len(remove), len(keep), len(candidates))
			}
		})
	}
}

func TestChooseBySpace(t *testing.T) {
	const mi = 1 << 20
	now := t0.Add(time.Hour)
	candidates := []Image{
		{ID: "a", Size: 10 * mi, FirstDetected: t0},
		{ID: "fresh", Size: 50 * mi, FirstDetected: now.Add(-time.Minute)},
		{ID: "b", Size: 20 * mi, FirstDetected: t0},
		{ID: "c", Size: 30 * mi, FirstDetected: t0},
	}
	base := ImagePolicy{HighThresholdPercent: 85, LowThresholdPercent: 80, MinAge: 2 * time.Minute}
	for _, tt := range []struct {
		name                string
		policy              func(*ImagePolicy)
		capacity, available int64
		want                SpaceChoice
		wantShort, wantErr  bool
	}{
		{
			name: "under the high threshold: nothing", capacity: 1000 * mi, available: 200 * mi,
			want: SpaceChoice{UsagePercent: 80},
		},
		{
			// 86% used: free down to 80%, i.e. 200Mi available: 60Mi.
			name: "over: oldest first until the low threshold, fresh images skipped", capacity: 1000 * mi, available: 140 * mi,
			want: SpaceChoice{UsagePercent: 86, ToFree: 60 * mi, Freed: 60 * mi, Remove: []Image{candidates[0], candidates[2], candidates[3]}},
		},
		{
			name: "at the high threshold counts", capacity: 1000 * mi, available: 150 * mi,
			want: SpaceChoice{UsagePercent: 85, ToFree: 50 * mi, Freed: 60 * mi, Remove: []Image{candidates[0], candidates[2], candidates[3]}},
		},
		{
			name: "stops once enough is freed", capacity: 1000 * mi, available: 150 * mi,
			policy: func(p *ImagePolicy) { p.LowThresholdPercent = 83 },
			want:   SpaceChoice{UsagePercent: 85, ToFree: 20 * mi, Freed: 30 * mi, Remove: []Image{candidates[0], candidates[2]}},
		},
		{
			name: "min age 0: fresh images go too", capacity: 1000 * mi, available: 140 * mi,
			policy: func(p *ImagePolicy) { p.MinAge = 0 },
			want:   SpaceChoice{UsagePercent: 86, ToFree: 60 * mi, Freed: 60 * mi, Remove: []Image{candidates[0], candidates[1]}},
		},
		{
			name: "not enough to free: short", capacity: 1000 * mi, available: 0,
			want:      SpaceChoice{UsagePercent: 100, ToFree: 200 * mi, Freed: 60 * mi, Remove: []Image{candidates[0], candidates[2], candidates[3]}},
			wantShort: true,
		},
		{
			name: "available above capacity is capped", capacity: 100 * mi, available: 500 * mi,
			want: SpaceChoice{UsagePercent: 0},
		},
		{name: "capacity 0 is an error", capacity: 0, available: 0, wantErr: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := base
			if tt.policy != nil {
				tt.policy(&p)
			}
			got, err := ChooseBySpace(candidates, p, tt.capacity, tt.available, now)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ChooseBySpace (-want +got):\n%s", diff)
			}
			if got.Short() != tt.wantShort {
				t.Errorf("Short() = %v, want %v", got.Short(), tt.wantShort)
			}
		})
	}
}

func TestImagePolicyDisabled(t *testing.T) {
	for _, tt := range []struct {
		p    ImagePolicy
		want bool
	}{
		{ImagePolicy{HighThresholdPercent: 100}, true},
		{ImagePolicy{HighThresholdPercent: 100, MaxAge: time.Hour}, false},
		{ImagePolicy{HighThresholdPercent: 85}, false},
	} {
		if got := tt.p.Disabled(); got != tt.want {
			t.Errorf("%+v.Disabled() = %v, want %v", tt.p, got, tt.want)
		}
	}
}
