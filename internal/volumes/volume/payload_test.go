package volume

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/volumes/atomicwriter"
)

func testPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "ns", UID: "uid-1",
			Labels:      map[string]string{"app": "web", "tier": "front"},
			Annotations: map[string]string{"note": `say "hi"`},
		},
		Spec: corev1.PodSpec{
			ServiceAccountName: "sa",
			Containers: []corev1.Container{{
				Name: "c",
				Resources: corev1.ResourceRequirements{
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")},
				},
			}},
		},
	}
}

// kubeAPIAccess is the volume the ServiceAccount admission plugin adds.
func kubeAPIAccess() corev1.Volume {
	return corev1.Volume{Name: "kube-api-access-abcde", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: ptr.To[int32](0o644),
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3607)}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		},
	}}}
}

func cmVolume(name string, items []corev1.KeyToPath, optional bool, mode *int32) corev1.Volume {
	return corev1.Volume{Name: "v", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}, Items: items, Optional: &optional, DefaultMode: mode}}}
}

func secretVolume(name string, items []corev1.KeyToPath, optional bool) corev1.Volume {
	return corev1.Volume{Name: "v", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: name, Items: items, Optional: &optional}}}
}

func file(data string, mode int32) atomicwriter.File {
	return atomicwriter.File{Data: []byte(data), Mode: mode}
}

func TestPayload(t *testing.T) {
	inputs := Inputs{
		ConfigMaps: map[string]*corev1.ConfigMap{
			"cfg":              {Data: map[string]string{"a": "1", "b": "2"}, BinaryData: map[string][]byte{"bin": {0, 1}}},
			"gone":             nil,
			"kube-root-ca.crt": {Data: map[string]string{"ca.crt": "PEM"}},
		},
		Secrets:     map[string]*corev1.Secret{"s": {Data: map[string][]byte{"user": []byte("admin")}}, "gone": nil},
		Tokens:      map[string]string{"kube-api-access-abcde/token": "jwt"},
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")},
	}
	tests := []struct {
		name    string
		volume  corev1.Volume
		want    atomicwriter.Payload
		wantErr string
	}{
		{name: "configMap all keys default mode", volume: cmVolume("cfg", nil, false, nil),
			want: atomicwriter.Payload{"a": file("1", 0o644), "b": file("2", 0o644), "bin": file("\x00\x01", 0o644)}},
		{name: "configMap defaultMode", volume: cmVolume("cfg", []corev1.KeyToPath{{Key: "a", Path: "x/a"}}, false, ptr.To[int32](0o400)),
			want: atomicwriter.Payload{"x/a": file("1", 0o400)}},
		{name: "configMap item mode", volume: cmVolume("cfg", []corev1.KeyToPath{{Key: "a", Path: "a", Mode: ptr.To[int32](0o600)}, {Key: "bin", Path: "b"}}, false, nil),
			want: atomicwriter.Payload{"a": file("1", 0o600), "b": file("\x00\x01", 0o644)}},
		{name: "configMap missing optional", volume: cmVolume("gone", nil, true, nil), want: atomicwriter.Payload{}},
		{name: "configMap missing", volume: cmVolume("gone", nil, false, nil), wantErr: `configmap "gone" not found`},
		{name: "configMap missing key", volume: cmVolume("cfg", []corev1.KeyToPath{{Key: "zz", Path: "zz"}}, false, nil), wantErr: "configmap references non-existent config key: zz"},
		{name: "configMap missing key optional", volume: cmVolume("cfg", []corev1.KeyToPath{{Key: "zz", Path: "zz"}, {Key: "a", Path: "a"}}, true, nil),
			want: atomicwriter.Payload{"a": file("1", 0o644)}},
		{name: "secret", volume: secretVolume("s", nil, false), want: atomicwriter.Payload{"user": file("admin", 0o644)}},
		{name: "secret missing", volume: secretVolume("gone", nil, false), wantErr: `secret "gone" not found`},
		{name: "secret missing optional", volume: secretVolume("gone", nil, true), want: atomicwriter.Payload{}},
		{name: "secret missing key", volume: secretVolume("s", []corev1.KeyToPath{{Key: "pw", Path: "pw"}}, false), wantErr: "references non-existent secret key: pw"},
		{name: "downwardAPI", volume: corev1.Volume{Name: "d", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
			{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}},
			{Path: "app", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['app']"}, Mode: ptr.To[int32](0o400)},
			{Path: "mem", ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "c", Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}},
		}}}},
			want: atomicwriter.Payload{"labels": file("app=\"web\"\ntier=\"front\"", 0o644), "app": file("web", 0o400), "mem": file("64", 0o644)}},
		{name: "downwardAPI bad field", volume: corev1.Volume{Name: "d", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
			{Path: "ip", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}}}}},
			wantErr: `compute downward API file "ip": unsupported fieldPath: status.podIP`},
		{name: "kube-api-access", volume: kubeAPIAccess(),
			want: atomicwriter.Payload{"token": file("jwt", 0o644), "ca.crt": file("PEM", 0o644), "namespace": file("ns", 0o644)}},
		{name: "projected defaultMode and optional secret", volume: corev1.Volume{Name: "p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			DefaultMode: ptr.To[int32](0o440),
			Sources: []corev1.VolumeProjection{
				{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "gone"}, Optional: ptr.To(true)}},
				{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Items: []corev1.KeyToPath{{Key: "user", Path: "u", Mode: ptr.To[int32](0o400)}}}},
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Items: []corev1.KeyToPath{{Key: "a", Path: "a"}}}},
			}}}},
			want: atomicwriter.Payload{"u": file("admin", 0o400), "a": file("1", 0o440)}},
		{name: "projected token not fetched", volume: func() corev1.Volume { v := kubeAPIAccess(); v.Name = "other"; return v }(), wantErr: `no token for path "token"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Payload(testPod(), tt.volume, inputs)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Payload() error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Payload() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Payload() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name    string
		source  corev1.VolumeSource
		want    Kind
		wantErr string
	}{
		{name: "emptyDir", source: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}, want: KindEmptyDir},
		{name: "hostPath", source: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/x"}}, want: KindHostPath},
		{name: "configMap", source: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}, want: KindConfigMap},
		{name: "secret", source: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{}}, want: KindSecret},
		{name: "downwardAPI", source: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{}}, want: KindDownwardAPI},
		{name: "projected", source: kubeAPIAccess().VolumeSource, want: KindProjected},
		{name: "pvc", source: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}, want: KindClaim},
		{name: "generic ephemeral", source: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}, want: KindClaim},
		{name: "csi", source: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{}}, want: KindCSI},
		{name: "image", source: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: "busybox"}}, want: KindImage},
		{name: "migrated in-tree", source: corev1.VolumeSource{AWSElasticBlockStore: &corev1.AWSElasticBlockStoreVolumeSource{VolumeID: "vol-1"}}, want: KindMigrated},
		{name: "nfs", source: corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs", Path: "/export"}}, want: KindNFS},
		{name: "fc", source: corev1.VolumeSource{FC: &corev1.FCVolumeSource{WWIDs: []string{"w"}}}, want: KindFC},
		{name: "iscsi", source: corev1.VolumeSource{ISCSI: &corev1.ISCSIVolumeSource{}}, wantErr: "type iscsi is not supported by berth yet"},
		{name: "gitRepo", source: corev1.VolumeSource{GitRepo: &corev1.GitRepoVolumeSource{Repository: "https://example.com/r.git"}},
			wantErr: "type gitRepo: the git-repo volume plugin has been disabled (feature gate GitRepoVolumeDriver is off and locked since Kubernetes 1.36, as on the upstream kubelet); clone the repository into an emptyDir from an init container instead"},
		{name: "rbd", source: corev1.VolumeSource{RBD: &corev1.RBDVolumeSource{}},
			wantErr: "type rbd has no volume plugin: it was removed from Kubernetes, and the upstream kubelet refuses it too (no volume plugin matched); use the storage's CSI driver instead"},
		{name: "trust bundle", source: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{}}}}},
			want: KindProjected},
		{name: "pod certificate", source: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{PodCertificate: &corev1.PodCertificateProjection{}}}}},
			want: KindProjected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Classify(corev1.Volume{Name: "v", VolumeSource: tt.source})
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Classify() error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Classify() = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}
