package kuberuntime

import (
	"testing"
	"time"
)

func TestPullBackoff(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var b pullBackoff
	if b.inBackoff(t0) {
		t.Fatal("zero entry must not be in back-off")
	}
	steps := []struct {
		name      string
		at        time.Duration // since t0, when the pull fails
		wantDelay time.Duration
	}{
		{"first failure", 0, 10 * time.Second},
		{"second", 10 * time.Second, 20 * time.Second},
		{"third", 30 * time.Second, 40 * time.Second},
		{"fourth", 70 * time.Second, 80 * time.Second},
		{"fifth", 150 * time.Second, 160 * time.Second},
		{"capped", 310 * time.Second, 300 * time.Second},
		{"stays capped", 610 * time.Second, 300 * time.Second},
		{"reset after 2*max idle", 610*time.Second + 601*time.Second, 10 * time.Second},
	}
	for _, s := range steps {
		now := t0.Add(s.at)
		b = b.next(now)
		if b.Delay != s.wantDelay {
			t.Errorf("%s: delay = %v, want %v", s.name, b.Delay, s.wantDelay)
		}
		if !b.inBackoff(now.Add(b.Delay - time.Nanosecond)) {
			t.Errorf("%s: not in back-off just before the delay ends", s.name)
		}
		if b.inBackoff(now.Add(b.Delay)) {
			t.Errorf("%s: still in back-off once the delay ended", s.name)
		}
	}
}
