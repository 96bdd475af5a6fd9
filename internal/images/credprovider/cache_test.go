package credprovider

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	credentialproviderv1 "k8s.io/kubelet/pkg/apis/credentialprovider/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestCacheKey(t *testing.T) {
	tests := []struct {
		keyType credentialproviderv1.PluginCacheKeyType
		image   string
		want    string
		wantErr bool
	}{
		{keyType: "Image", image: "registry.example.com:5000/team/app", want: "registry.example.com:5000/team/app"},
		{keyType: "Registry", image: "registry.example.com:5000/team/app", want: "registry.example.com:5000"},
		{keyType: "Global", image: "registry.example.com/app", want: "<global>"},
		{keyType: "", image: "registry.example.com/app", wantErr: true},
		{keyType: "image", image: "registry.example.com/app", wantErr: true},
	}
	for _, tt := range tests {
		got, err := cacheKey(tt.keyType, tt.image)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("cacheKey(%q, %q) = %q, %v; want %q, error %v", tt.keyType, tt.image, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestCacheUntil(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	d := func(v time.Duration) *time.Duration { return &v }
	tests := []struct {
		name              string
		response, defualt *time.Duration
		want              time.Time
		wantOK            bool
	}{
		{name: "response duration", response: d(time.Minute), defualt: d(time.Hour), want: now.Add(time.Minute), wantOK: true},
		{name: "response zero: no cache", response: d(0), defualt: d(time.Hour)},
		{name: "no response duration: default", defualt: d(time.Hour), want: now.Add(time.Hour), wantOK: true},
		{name: "no response duration, default zero: no cache", defualt: d(0)},
	}
	for _, tt := range tests {
		got, ok := cacheUntil(now, tt.response, tt.defualt)
		if !got.Equal(tt.want) || ok != tt.wantOK {
			t.Errorf("%s: cacheUntil() = %v, %v; want %v, %v", tt.name, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestCache(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	creds := func(user string) Credentials {
		return Credentials{"r.io": {Username: user, Password: "p"}}
	}
	type put struct {
		key   string
		user  string
		until time.Duration // after start
	}
	tests := []struct {
		name  string
		puts  []put
		at    time.Duration // the lookup, after start
		image string
		want  Credentials
	}{
		{name: "empty", image: "r.io/app"},
		{name: "by image", puts: []put{{"r.io/app", "img", time.Hour}}, image: "r.io/app", want: creds("img")},
		{name: "other image", puts: []put{{"r.io/app", "img", time.Hour}}, image: "r.io/other"},
		{name: "by registry", puts: []put{{"r.io", "reg", time.Hour}}, image: "r.io/other", want: creds("reg")},
		{name: "registry with port", puts: []put{{"r.io:5000", "reg", time.Hour}}, image: "r.io:5000/app", want: creds("reg")},
		{name: "global", puts: []put{{"<global>", "glob", time.Hour}}, image: "q.io/app", want: creds("glob")},
		{name: "image before registry before global",
			puts:  []put{{"<global>", "glob", time.Hour}, {"r.io", "reg", time.Hour}, {"r.io/app", "img", time.Hour}},
			image: "r.io/app", want: creds("img")},
		{name: "valid at its expiry", puts: []put{{"r.io/app", "img", time.Hour}}, at: time.Hour, image: "r.io/app", want: creds("img")},
		{name: "expired", puts: []put{{"r.io/app", "img", time.Hour}}, at: time.Hour + time.Nanosecond, image: "r.io/app"},
		{name: "expired image falls back to registry",
			puts: []put{{"r.io/app", "img", time.Minute}, {"r.io", "reg", time.Hour}}, at: 2 * time.Minute, image: "r.io/app", want: creds("reg")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(start)
			c := newCache(clk)
			for _, p := range tt.puts {
				c.put(p.key, creds(p.user), start.Add(p.until))
			}
			clk.SetTime(start.Add(tt.at))
			got, ok := c.get(tt.image)
			if ok != (tt.want != nil) {
				t.Errorf("get(%q) found = %v, want %v", tt.image, ok, tt.want != nil)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("get(%q) (-want +got):\n%s", tt.image, diff)
			}
		})
	}
}

// TestCachePurge shows that expired entries nobody asks for again are
// dropped once the purge interval has passed.
func TestCachePurge(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(start)
	c := newCache(clk)
	c.put("a.io/x", Credentials{}, start.Add(time.Minute))
	c.put("b.io/y", Credentials{}, start.Add(time.Hour))
	clk.SetTime(start.Add(10 * time.Minute))
	c.get("c.io/z")
	if got := c.len(); got != 2 {
		t.Fatalf("before the purge interval: %d entries, want 2", got)
	}
	clk.SetTime(start.Add(cachePurgeInterval + time.Second))
	c.get("c.io/z")
	if got := c.len(); got != 1 {
		t.Errorf("after the purge interval: %d entries, want 1 (the unexpired one)", got)
	}
}
