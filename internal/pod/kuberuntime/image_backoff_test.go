package kuberuntime

import (
	"testing"
	"time"
)

func TestPullBackoff(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const image = "busybox"
	b := PullBackoffs{}
	if b.holds(image, t0) {
		t.Fatal("no entry must not be in back-off")
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
		b.failed(image, now)
		delay := b[image].Delay
		if delay != s.wantDelay {
			t.Errorf("%s: delay = %v, want %v", s.name, delay, s.wantDelay)
		}
		if !b.holds(image, now.Add(delay-time.Nanosecond)) {
			t.Errorf("%s: not in back-off just before the delay ends", s.name)
		}
		if b.holds(image, now.Add(delay)) {
			t.Errorf("%s: still in back-off once the delay ended", s.name)
		}
	}
	last := t0.Add(610*time.Second + 601*time.Second)
	if b.gc(last.Add(600 * time.Second)); len(b) != 1 {
		t.Errorf("entry dropped after 2*max idle exactly: %v", b)
	}
	if b.gc(last.Add(600*time.Second + time.Nanosecond)); len(b) != 0 {
		t.Errorf("entry kept after more than 2*max idle: %v", b)
	}
}
