package subpath

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		sub     string
		wantErr string
	}{
		{sub: "a"},
		{sub: "a/b/c"},
		{sub: "."},
		{sub: "./a/"},
		{sub: "..data/key"},
		{sub: "a..b/c.."},
		{sub: "", wantErr: "empty"},
		{sub: "..", wantErr: "without '..'"},
		{sub: "a/../../b", wantErr: "without '..'"},
		{sub: "a/..", wantErr: "without '..'"},
		{sub: "/etc", wantErr: "without '..'"},
		{sub: "a\x00b", wantErr: "NUL"},
		{sub: strings.Repeat("a/", maxLen), wantErr: "longer than"},
	} {
		t.Run(tc.sub, func(t *testing.T) {
			err := Validate(tc.sub)
			if tc.wantErr == "" && err != nil {
				t.Fatalf("Validate(%q) = %v, want nil", tc.sub, err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("Validate(%q) = %v, want an error with %q", tc.sub, err, tc.wantErr)
			}
		})
	}
}

func TestRequestValidate(t *testing.T) {
	base := Request{PodDir: "/pods/uid", Volume: "data", VolumeDir: "/pods/uid/volumes/x/data", SubPath: "a", Container: "app"}
	for _, tc := range []struct {
		name   string
		mutate func(*Request)
		ok     bool
	}{
		{name: "valid", mutate: func(*Request) {}, ok: true},
		{name: "bad subPath", mutate: func(r *Request) { r.SubPath = "../x" }},
		{name: "relative pod dir", mutate: func(r *Request) { r.PodDir = "pods/uid" }},
		{name: "relative volume dir", mutate: func(r *Request) { r.VolumeDir = "data" }},
		{name: "volume name with slash", mutate: func(r *Request) { r.Volume = "a/b" }},
		{name: "volume name dot-dot", mutate: func(r *Request) { r.Volume = ".." }},
		{name: "empty container", mutate: func(r *Request) { r.Container = "" }},
		{name: "negative index", mutate: func(r *Request) { r.Index = -1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := base
			tc.mutate(&r)
			if err := r.validate(); (err == nil) != tc.ok {
				t.Fatalf("validate() = %v, want ok=%v", err, tc.ok)
			}
		})
	}
	r := base
	r.Index = 2
	if got, want := r.target(), "/pods/uid/volume-subpaths/data/app/2"; got != want {
		t.Errorf("target() = %q, want %q", got, want)
	}
}

// FuzzSubPath checks that any subPath Validate accepts stays inside the
// root it is joined to.
func FuzzSubPath(f *testing.F) {
	for _, s := range []string{"a", "a/b", ".", "..", "../x", "a/../..", "/etc", "a//b/./c", "..data", "\x00"} {
		f.Add(s)
	}
	const root = "/var/lib/berth/pods/uid/volumes/kubernetes.io~empty-dir/data"
	f.Fuzz(func(t *testing.T, sub string) {
		if Validate(sub) != nil {
			return
		}
		joined := filepath.Join(root, sub)
		rel, err := filepath.Rel(root, joined)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") || !strings.HasPrefix(joined, root) {
			t.Fatalf("Validate accepted %q, which joins to %q outside %q", sub, joined, root)
		}
		if strings.ContainsRune(sub, 0) || filepath.IsAbs(sub) {
			t.Fatalf("Validate accepted %q", sub)
		}
	})
}
