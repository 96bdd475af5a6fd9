package podsource

import (
	"path"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// FuzzLoadManifest: decoding, defaulting and validating any manifest
// never panics; every pod of an accepted manifest has a name (suffixed
// with the node's), a namespace and a UID, names no volume file, subPath
// or hostPath that climbs out of its directory, passes ValidatePod, is a fixed
// point of SetPodDefaults, and loading the same bytes again gives the same
// pods (the UID is a pure function of the content and the origin).
func FuzzLoadManifest(f *testing.F) {
	d, err := newManifestDecoder()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte, fromURL bool) {
		o := fileOrigin("/etc/kubernetes/manifests/pod.yaml")
		if fromURL {
			o = origin{source: podutil.HTTPSource, location: "https://example.invalid/pods", nodeName: "Node1", now: testNow}
		}
		pods, _, err := loadManifest(d, data, o)
		if err != nil {
			return
		}
		for _, pod := range pods {
			switch {
			case pod.Namespace == "" || pod.UID == "":
				t.Fatalf("accepted pod %q: namespace %q, uid %q", pod.Name, pod.Namespace, pod.UID)
			case !strings.HasSuffix(pod.Name, "-node1") || pod.Name == "-node1":
				t.Fatalf("accepted pod name %q: want <name>-node1", pod.Name)
			case pod.Annotations[podutil.ConfigHashAnnotation] != string(pod.UID):
				t.Fatalf("accepted pod %q: hash annotation %q, uid %q", pod.Name, pod.Annotations[podutil.ConfigHashAnnotation], pod.UID)
			}
			checkPodPaths(t, pod)
			if errs := ValidatePod(pod); len(errs) > 0 {
				t.Fatalf("accepted pod %q does not validate: %v", pod.Name, errs.ToAggregate())
			}
			defaulted := pod.DeepCopy()
			SetPodDefaults(defaulted)
			if !apiequality.Semantic.DeepEqual(pod, defaulted) {
				t.Fatalf("SetPodDefaults changes accepted pod %q:\n%s", pod.Name, cmp.Diff(pod, defaulted))
			}
		}
		again, _, err := loadManifest(d, data, o)
		if err != nil {
			t.Fatalf("second load of an accepted manifest: %v", err)
		}
		if !apiequality.Semantic.DeepEqual(pods, again) {
			t.Fatalf("loading the same manifest twice differs:\n%s", cmp.Diff(pods, again))
		}
	})
}

// checkPodPaths fails when a path of an accepted pod that berth joins to a
// directory could leave it: volume files and subPaths must stay strictly
// below, and a hostPath must not step back.
func checkPodPaths(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	below := func(what, p string) {
		if c := path.Clean(p); path.IsAbs(p) || c == ".." || strings.HasPrefix(c, "../") {
			t.Fatalf("accepted pod %q: %s %q leaves its directory", pod.Name, what, p)
		}
	}
	for _, v := range pod.Spec.Volumes {
		for _, p := range volumeFilePaths(&v.VolumeSource) {
			below("volume "+v.Name+" file", p)
		}
		if hp := v.HostPath; hp != nil && strings.Contains("/"+hp.Path+"/", "/../") {
			t.Fatalf("accepted pod %q: hostPath %q steps back", pod.Name, hp.Path)
		}
	}
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range list {
			for _, m := range c.VolumeMounts {
				if m.SubPath != "" {
					below("subPath", m.SubPath)
				}
				if m.SubPathExpr != "" {
					below("subPathExpr", m.SubPathExpr)
				}
			}
		}
	}
}

// volumeFilePaths lists the files a configMap, secret, downwardAPI or
// projected volume names.
func volumeFilePaths(src *corev1.VolumeSource) []string {
	var out []string
	keys := func(items []corev1.KeyToPath) {
		for _, it := range items {
			out = append(out, it.Path)
		}
	}
	files := func(items []corev1.DownwardAPIVolumeFile) {
		for _, it := range items {
			out = append(out, it.Path)
		}
	}
	switch {
	case src.ConfigMap != nil:
		keys(src.ConfigMap.Items)
	case src.Secret != nil:
		keys(src.Secret.Items)
	case src.DownwardAPI != nil:
		files(src.DownwardAPI.Items)
	case src.Projected != nil:
		for _, s := range src.Projected.Sources {
			switch {
			case s.ConfigMap != nil:
				keys(s.ConfigMap.Items)
			case s.Secret != nil:
				keys(s.Secret.Items)
			case s.DownwardAPI != nil:
				files(s.DownwardAPI.Items)
			case s.ServiceAccountToken != nil:
				out = append(out, s.ServiceAccountToken.Path)
			}
		}
	}
	return out
}
