package logrotate

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestChoose(t *testing.T) {
	now := time.Date(2026, 11, 23, 10, 0, 5, 0, time.UTC)
	const rotateTo = "0.log.20261123-100005"
	p := Policy{MaxSize: 100, MaxFiles: 5}
	for _, tt := range []struct {
		name    string
		size    int64
		policy  func(*Policy)
		rotated []string
		want    Plan
		wantOK  bool
	}{
		{name: "under the max size: nothing", size: 99},
		{name: "rotation off", size: 1 << 30, policy: func(p *Policy) { p.MaxSize = -1 }},
		{name: "first rotation", size: 100, wantOK: true, want: Plan{RotateTo: rotateTo}},
		{
			name: "the previous rotated file is compressed", size: 150, wantOK: true,
			rotated: []string{"0.log.20261123-095900"},
			want:    Plan{Compress: []string{"0.log.20261123-095900"}, RotateTo: rotateTo},
		},
		{
			name: "leftovers of an interrupted compression go first", size: 150, wantOK: true,
			rotated: []string{"0.log.20261123-095900", "0.log.20261123-095900.gz", "0.log.20261123-095950", "0.log.20261123-095950.tmp"},
			want: Plan{
				Remove:   []string{"0.log.20261123-095900", "0.log.20261123-095950.tmp"},
				Compress: []string{"0.log.20261123-095950"},
				RotateTo: rotateTo,
			},
		},
		{
			// MaxFiles 5: the current log, the one rotated now, and 3 more.
			name: "the oldest beyond MaxFiles-2 go", size: 150, wantOK: true,
			rotated: []string{"0.log.20261123-095600.gz", "0.log.20261123-095700.gz", "0.log.20261123-095800.gz", "0.log.20261123-095900.gz", "0.log.20261123-095950"},
			want: Plan{
				Remove:   []string{"0.log.20261123-095600.gz", "0.log.20261123-095700.gz"},
				Compress: []string{"0.log.20261123-095950"},
				RotateTo: rotateTo,
			},
		},
		{
			name: "MaxFiles 2 keeps only the file rotated now", size: 150, wantOK: true,
			policy:  func(p *Policy) { p.MaxFiles = 2 },
			rotated: []string{"0.log.20261123-095800.gz", "0.log.20261123-095900"},
			want:    Plan{Remove: []string{"0.log.20261123-095800.gz", "0.log.20261123-095900"}, RotateTo: rotateTo},
		},
		{
			name: "other containers' logs are not ours", size: 150, wantOK: true,
			rotated: []string{"1.log.20261123-095900", "0.log.20261123-095900.gz"},
			want:    Plan{RotateTo: rotateTo},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pol := p
			if tt.policy != nil {
				tt.policy(&pol)
			}
			got, ok := Choose("0.log", tt.size, tt.rotated, pol, now)
			if ok != tt.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tt.wantOK)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Choose (-want +got):\n%s", diff)
			}
		})
	}
}
