package volume

import (
	"path"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/downward"
	"github.com/berthk8s/berth/internal/volumes/atomicwriter"
)

// FuzzDownwardAPIVolume: computing a downwardAPI volume from any item path
// and fieldRef or resourceFieldRef never panics; it writes the item at the
// path it names, with the fieldRef's value; and a payload the writer's
// plan accepts only names paths that are relative, hold no ".." element
// and stay below the volume directory.
func FuzzDownwardAPIVolume(f *testing.F) {
	f.Fuzz(func(t *testing.T, itemPath, fieldPath, res string) {
		item := corev1.DownwardAPIVolumeFile{Path: itemPath, FieldRef: &corev1.ObjectFieldSelector{FieldPath: fieldPath}}
		if res != "" {
			item.FieldRef = nil
			item.ResourceFieldRef = &corev1.ResourceFieldSelector{ContainerName: "c", Resource: res}
		}
		v := corev1.Volume{Name: "podinfo", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
			Items: []corev1.DownwardAPIVolumeFile{item, {Path: "name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		}}}
		pod := testPod()
		payload, err := Payload(pod, v, Inputs{})
		if err != nil {
			return
		}
		file, ok := payload[itemPath]
		if !ok || len(payload) > 2 {
			t.Fatalf("item %q: payload paths %v", itemPath, keys(payload))
		}
		if want, ok := downward.Metadata(pod, fieldPath); res == "" && itemPath != "name" && (!ok || string(file.Data) != want) {
			t.Fatalf("item %q = %q, want fieldRef %q = %q", itemPath, file.Data, fieldPath, want)
		}
		if _, err := atomicwriter.Compute(nil, payload); err != nil {
			return
		}
		for p := range payload {
			c := path.Clean(p)
			if path.IsAbs(p) || c == ".." || strings.HasPrefix(c, "../") || hasDotDot(p) {
				t.Fatalf("plan accepts item path %q", p)
			}
		}
	})
}

func hasDotDot(p string) bool {
	for _, elem := range strings.Split(p, "/") {
		if elem == ".." {
			return true
		}
	}
	return false
}

func keys(p atomicwriter.Payload) []string {
	var out []string
	for k := range p {
		out = append(out, k)
	}
	return out
}
