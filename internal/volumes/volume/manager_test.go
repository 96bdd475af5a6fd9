package volume

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/volumes/objectcache"
)

// fakeMounter remembers mounts instead of mounting.
type fakeMounter struct {
	mu      sync.Mutex // guards mounts and unmounts
	mounts  map[string]int64
	unmount []string
	nfs     map[string]string // target: "source options"
	devices map[string]string // FormatAndMount's target: "device fsType options"
	sources map[string]string // mount target: its source, for MountSource
}

func (f *fakeMounter) MountTmpfs(target string, size int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mounts[target] = size
	return nil
}

// MountHugetlbfs records a hugetlbfs as a mount of size -3.
func (f *fakeMounter) MountHugetlbfs(target, _ string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mounts[target] = -3
	return nil
}

// MountNFS records an nfs mount as a mount of size -4, its source and
// options in nfs.
func (f *fakeMounter) MountNFS(source, target string, options []string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mounts[target] = -4
	if f.nfs == nil {
		f.nfs = map[string]string{}
	}
	f.nfs[target] = source + " " + strings.Join(options, ",")
	return nil
}

// FormatAndMount records a device mount as a mount of size -5, its
// device, type and options in devices.
func (f *fakeMounter) FormatAndMount(device, target, fsType string, options []string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mounts[target] = -5
	if f.devices == nil {
		f.devices = map[string]string{}
	}
	f.devices[target] = device + " " + fsType + " " + strings.Join(options, ",")
	f.source(target, device)
	return nil
}

// source records target's source; the caller holds mu.
func (f *fakeMounter) source(target, src string) {
	if f.sources == nil {
		f.sources = map[string]string{}
	}
	f.sources[target] = src
}

// MountSource is the recorded source of a device mount and its binds.
func (f *fakeMounter) MountSource(path string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.mounts[path]; !ok {
		return "", nil
	}
	return f.sources[path], nil
}

// BindMount records a bind as a mount of size -1 (-2 when read-only).
func (f *fakeMounter) BindMount(source, target string, readOnly bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mounts[target] = -1
	if readOnly {
		f.mounts[target] = -2
	}
	f.source(target, f.sources[source])
	return nil
}

func (f *fakeMounter) Unmount(target string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.mounts, target)
	f.unmount = append(f.unmount, target)
	return nil
}

func (f *fakeMounter) IsMountPoint(path string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.mounts[path]
	return ok, nil
}

func (f *fakeMounter) snapshot() map[string]int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]int64{}
	for k, v := range f.mounts {
		out[k] = v
	}
	return out
}

type fakeRecorder struct {
	mu       sync.Mutex // guards messages
	messages []string
}

func (r *fakeRecorder) Eventf(_ *corev1.Pod, eventType, reason, messageFmt string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.messages = append(r.messages, eventType+" "+reason+" "+fmt.Sprintf(messageFmt, args...))
}

type env struct {
	m       *Manager
	client  *fake.Clientset
	clock   *clocktesting.FakeClock
	mounter *fakeMounter
	events  *fakeRecorder
	dir     string
	tokens  *[]*authenticationv1.TokenRequest
}

func newEnv(t *testing.T, objects ...runtime.Object) env {
	t.Helper()
	e := env{clock: clocktesting.NewFakeClock(t0), mounter: &fakeMounter{mounts: map[string]int64{}}, events: &fakeRecorder{}, dir: t.TempDir()}
	e.client = fake.NewClientset(objects...)
	var mu sync.Mutex
	var tokens []*authenticationv1.TokenRequest
	e.tokens = &tokens
	e.client.PrependReactor("create", "serviceaccounts", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "token" {
			return false, nil, nil
		}
		tr := a.(k8stesting.CreateAction).GetObject().(*authenticationv1.TokenRequest).DeepCopy()
		mu.Lock()
		defer mu.Unlock()
		tokens = append(tokens, tr.DeepCopy())
		tr.Status = authenticationv1.TokenRequestStatus{
			Token:               fmt.Sprintf("token-%d", len(tokens)),
			ExpirationTimestamp: metav1.NewTime(e.clock.Now().Add(time.Duration(*tr.Spec.ExpirationSeconds) * time.Second)),
		}
		return true, tr, nil
	})
	source, err := objectcache.New(objectcache.Config{Client: e.client, Strategy: "Get", Clock: clock.RealClock{}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(Config{PodsDir: e.dir, Client: e.client, Objects: source, Clock: e.clock, NodeName: "node", Recorder: e.events, Mounter: e.mounter})
	if err != nil {
		t.Fatal(err)
	}
	e.m = m
	return e
}

func fullPod(hostDir string) *corev1.Pod {
	pod := testPod()
	pod.Spec.SecurityContext = &corev1.PodSecurityContext{FSGroup: ptr.To(int64(os.Getgid()))}
	dirOrCreate := corev1.HostPathDirectoryOrCreate
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "mem", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: ptr.To(resource.MustParse("1Mi"))}}},
		{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: hostDir, Type: &dirOrCreate}}},
		{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}},
		{Name: "sec", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "sec", DefaultMode: ptr.To[int32](0o400)}}},
		{Name: "info", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
			{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}}}}}},
		kubeAPIAccess(),
	}
	return pod
}

func clusterObjects() []runtime.Object {
	return []runtime.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "ns"}, Data: map[string]string{"k": "v1"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kube-root-ca.crt", Namespace: "ns"}, Data: map[string]string{"ca.crt": "PEM"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "sec", Namespace: "ns"}, Data: map[string][]byte{"pw": []byte("hunter2")}},
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestSetUpRefreshTearDown(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, clusterObjects()...)
	hostDir := filepath.Join(t.TempDir(), "host")
	pod := fullPod(hostDir)
	vol := func(plugin, name string) string { return filepath.Join(e.dir, "uid-1", "volumes", plugin, name) }

	paths, err := e.m.SetUp(ctx, pod)
	if err != nil {
		t.Fatalf("SetUp() = %v", err)
	}
	want := map[string]string{
		"cache": vol("kubernetes.io~empty-dir", "cache"), "mem": vol("kubernetes.io~empty-dir", "mem"), "host": hostDir,
		"cfg": vol("kubernetes.io~configmap", "cfg"), "sec": vol("kubernetes.io~secret", "sec"),
		"info": vol("kubernetes.io~downward-api", "info"), "kube-api-access-abcde": vol("kubernetes.io~projected", "kube-api-access-abcde"),
	}
	if diff := cmp.Diff(want, paths); diff != "" {
		t.Fatalf("SetUp() paths (-want +got):\n%s", diff)
	}
	// Secret and projected tmpfs are bounded by the pod's memory limit.
	wantMounts := map[string]int64{paths["mem"]: 1 << 20, paths["sec"]: 64 << 20, paths["kube-api-access-abcde"]: 64 << 20}
	if diff := cmp.Diff(wantMounts, e.mounter.snapshot()); diff != "" {
		t.Errorf("mounts (-want +got):\n%s", diff)
	}
	if info, err := os.Stat(paths["cache"]); err != nil || info.Mode().Perm() != 0o777 {
		t.Errorf("emptyDir mode = %v, %v; want 0777", info.Mode(), err)
	}
	// Berth writes the content of these; no container may write there.
	for _, name := range []string{"cfg", "sec", "info", "kube-api-access-abcde"} {
		if info, err := os.Stat(paths[name]); err != nil || info.Mode().Perm() != 0o755 {
			t.Errorf("%s directory mode = %v, %v; want 0755", name, info.Mode(), err)
		}
	}
	if info, err := os.Stat(hostDir); err != nil || !info.IsDir() {
		t.Errorf("hostPath not created: %v", err)
	}
	for path, content := range map[string]string{
		"cfg/k": "v1", "sec/pw": "hunter2", "info/labels": "app=\"web\"\ntier=\"front\"",
		"kube-api-access-abcde/token": "token-1", "kube-api-access-abcde/ca.crt": "PEM", "kube-api-access-abcde/namespace": "ns",
	} {
		name, file, _ := strings.Cut(path, "/")
		if got := readFile(t, filepath.Join(paths[name], file)); got != content {
			t.Errorf("%s = %q, want %q", path, got, content)
		}
	}
	// The secret's defaultMode plus group read from fsGroup.
	if info, _ := os.Stat(filepath.Join(paths["sec"], "pw")); info.Mode().Perm() != 0o440 {
		t.Errorf("secret file mode = %v, want 0440", info.Mode())
	}
	// A token under an fsGroup: 0600 plus group read.
	if info, _ := os.Stat(filepath.Join(paths["kube-api-access-abcde"], "token")); info.Mode().Perm() != 0o640 {
		t.Errorf("token file mode = %v, want 0640", info.Mode())
	}
	wantTR := authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3607),
		BoundObjectRef: &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: "web", UID: "uid-1"}}
	if len(*e.tokens) != 1 || !cmp.Equal(wantTR, (*e.tokens)[0].Spec) {
		t.Fatalf("token requests = %+v, want one %+v", *e.tokens, wantTR)
	}

	// Idempotent: no new token, no new mount.
	if _, err := e.m.SetUp(ctx, pod); err != nil {
		t.Fatalf("second SetUp() = %v", err)
	}
	if len(*e.tokens) != 1 {
		t.Errorf("second SetUp requested %d tokens in all, want 1", len(*e.tokens))
	}

	// A changed configMap reaches the running pod on the next round.
	cm := clusterObjects()[0].(*corev1.ConfigMap)
	cm.Data["k"] = "v2"
	if _, err := e.client.CoreV1().ConfigMaps("ns").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.m.refresh(ctx, false)
	if got := readFile(t, filepath.Join(paths["cfg"], "k")); got != "v2" {
		t.Errorf("configMap after refresh = %q, want v2", got)
	}

	// Changed labels reach the downward API file after Update.
	updated := pod.DeepCopy()
	updated.Labels["tier"] = "back"
	e.m.Update(updated)
	e.m.refresh(ctx, true)
	if got := readFile(t, filepath.Join(paths["info"], "labels")); got != "app=\"web\"\ntier=\"back\"" {
		t.Errorf("labels after Update = %q", got)
	}

	// 80% of the token's lifetime later, a new token is written.
	e.clock.Step(2886 * time.Second)
	e.m.refresh(ctx, false)
	if got := readFile(t, filepath.Join(paths["kube-api-access-abcde"], "token")); got != "token-2" {
		t.Errorf("token after 80%% of its lifetime = %q, want token-2", got)
	}

	if err := e.m.TearDown(ctx, pod.UID); err != nil {
		t.Fatalf("TearDown() = %v", err)
	}
	if got := e.mounter.snapshot(); len(got) != 0 {
		t.Errorf("mounts after TearDown = %v", got)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "uid-1", "volumes")); !os.IsNotExist(err) {
		t.Errorf("volumes directory after TearDown: %v", err)
	}
	if _, err := os.Stat(hostDir); err != nil {
		t.Errorf("TearDown removed the hostPath: %v", err)
	}
	e.m.refresh(ctx, false) // a forgotten pod is not set up again
	if _, err := os.Stat(filepath.Join(e.dir, "uid-1")); err == nil {
		if _, err := os.Stat(filepath.Join(e.dir, "uid-1", "volumes")); !os.IsNotExist(err) {
			t.Errorf("refresh after TearDown recreated volumes: %v", err)
		}
	}
}

// TestForgetDropsThePod: a pod that is gone leaves nothing in the
// Manager; its mounts are TearDown's, not Forget's.
func TestForgetDropsThePod(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, clusterObjects()...)
	if _, err := e.m.SetUp(ctx, fullPod(filepath.Join(t.TempDir(), "host"))); err != nil {
		t.Fatalf("SetUp() = %v", err)
	}
	mounts := e.mounter.snapshot()
	e.m.Forget(ctx, "uid-1")
	e.m.Forget(ctx, "uid-1") // idempotent
	e.m.mu.Lock()
	n := len(e.m.pods)
	e.m.mu.Unlock()
	if n != 0 {
		t.Errorf("%d pods remembered after Forget, want 0", n)
	}
	if diff := cmp.Diff(mounts, e.mounter.snapshot()); diff != "" {
		t.Errorf("Forget changed the mounts (-before +after):\n%s", diff)
	}
}

func TestSetUpErrors(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	e.m.cfg.Client, e.m.cfg.Objects = nil, nil // standalone
	pod := testPod()
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "data", VolumeSource: corev1.VolumeSource{ISCSI: &corev1.ISCSIVolumeSource{TargetPortal: "t", IQN: "i"}}},
		{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}},
		kubeAPIAccess(),
		{Name: "ok", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	for range 2 {
		paths, err := e.m.SetUp(ctx, pod)
		want := strings.Join([]string{
			`volume "data": type iscsi is not supported by berth yet`,
			`volume "cfg": configmap "cfg" needs an API server (berth runs standalone)`,
			`volume "kube-api-access-abcde": token of service account "sa" needs an API server (berth runs standalone)`,
		}, "\n")
		if err == nil || err.Error() != want {
			t.Fatalf("SetUp() error = %v\nwant %s", err, want)
		}
		if _, ok := paths["ok"]; !ok || len(paths) != 1 {
			t.Errorf("SetUp() paths = %v, want only ok", paths)
		}
	}
	wantEvents := []string{
		`Warning FailedMount MountVolume.SetUp failed for volume "data" : type iscsi is not supported by berth yet`,
		`Warning FailedMount MountVolume.SetUp failed for volume "cfg" : configmap "cfg" needs an API server (berth runs standalone)`,
		`Warning FailedMount MountVolume.SetUp failed for volume "kube-api-access-abcde" : token of service account "sa" needs an API server (berth runs standalone)`,
	}
	if diff := cmp.Diff(wantEvents, e.events.messages); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// A required configMap still missing after the short retries fails the
// set-up with one FailedMount event; a missing optional one is an answer,
// read once and not retried.
func TestSetUpMissingConfigMap(t *testing.T) {
	e := newEnv(t)
	pod := testPod()
	pod.Spec.Volumes = []corev1.Volume{kubeAPIAccess()}
	waited, err := driven(e, func() error { _, err := e.m.SetUp(context.Background(), pod); return err })
	want := `volume "kube-api-access-abcde": configmap "kube-root-ca.crt" not found`
	if err == nil || err.Error() != want {
		t.Fatalf("SetUp() error = %v, want %s", err, want)
	}
	// The pod's PodReadyToStartContainers condition names the volume.
	var se *SetUpError
	if !errors.As(err, &se) || se.Volume != "kube-api-access-abcde" {
		t.Errorf("SetUp() error %v is no SetUpError of the volume", err)
	}
	if waited < 4*time.Second || waited > 5100*time.Millisecond {
		t.Errorf("SetUp retried for %v of the clock, want the default policy's 5 s", waited)
	}
	if got := len(e.events.messages); got != 1 {
		t.Errorf("FailedMount events = %d (%v), want 1", got, e.events.messages)
	}

	e = newEnv(t)
	gets := refuse(e, "get", "configmaps", 0, nil)
	pod = testPod()
	pod.Spec.Volumes = []corev1.Volume{{Name: "opt", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: "gone"}, Optional: ptr.To(true)}}}}
	waited, err = driven(e, func() error { _, err := e.m.SetUp(context.Background(), pod); return err })
	if err != nil || waited != 0 || *gets != 1 {
		t.Errorf("optional missing configMap: SetUp() = %v after %v of the clock and %d reads, want nil at once after 1 read", err, waited, *gets)
	}
}

func TestRunRefreshesAfterUpdate(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	e := newEnv(t, clusterObjects()...)
	pod := fullPod(filepath.Join(t.TempDir(), "host"))
	paths, err := e.m.SetUp(ctx, pod)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- e.m.Run(ctx) }()
	updated := pod.DeepCopy()
	updated.Labels = map[string]string{"app": "new"}
	e.m.Update(updated)
	labels := filepath.Join(paths["info"], "labels")
	deadline := time.Now().Add(10 * time.Second)
	for readFile(t, labels) != `app="new"` {
		if time.Now().After(deadline) {
			t.Fatalf("labels never rewritten: %q", readFile(t, labels))
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run() = %v", err)
	}
}

func TestSysMounterTmpfs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting tmpfs needs root")
	}
	dir := t.TempDir()
	var m SysMounter
	if err := m.MountTmpfs(dir, 1<<20); err != nil {
		t.Skipf("cannot mount tmpfs here: %v", err)
	}
	t.Cleanup(func() { _ = m.Unmount(dir) })
	if ok, err := m.IsMountPoint(dir); err != nil || !ok {
		t.Fatalf("IsMountPoint() after mount = %v, %v", ok, err)
	}
	if err := m.Unmount(dir); err != nil {
		t.Fatal(err)
	}
	if ok, err := m.IsMountPoint(dir); err != nil || ok {
		t.Fatalf("IsMountPoint() after unmount = %v, %v", ok, err)
	}
}

func TestSetUpTearDownRealTmpfs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting tmpfs needs root")
	}
	e := newEnv(t, clusterObjects()...)
	e.m.cfg.Mounter = SysMounter{}
	pod := testPod()
	pod.Spec.Volumes = []corev1.Volume{secretVolume("sec", nil, false)}
	ctx := context.Background()
	paths, err := e.m.SetUp(ctx, pod)
	if err != nil {
		t.Skipf("cannot set up a tmpfs secret here: %v", err)
	}
	t.Cleanup(func() { _ = SysMounter{}.Unmount(paths["v"]) })
	if ok, err := (SysMounter{}).IsMountPoint(paths["v"]); err != nil || !ok {
		t.Fatalf("secret volume is not a mount point: %v, %v", ok, err)
	}
	if got := readFile(t, filepath.Join(paths["v"], "pw")); got != "hunter2" {
		t.Errorf("secret file = %q", got)
	}
	if err := e.m.TearDown(ctx, pod.UID); err != nil {
		t.Fatalf("TearDown() = %v", err)
	}
	if ok, _ := (SysMounter{}).IsMountPoint(paths["v"]); ok {
		t.Error("secret volume still mounted after TearDown")
	}
	if _, err := os.Stat(paths["v"]); !os.IsNotExist(err) {
		t.Errorf("secret volume directory after TearDown: %v", err)
	}
}

func TestSysMounterResolvesSymlinks(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting tmpfs needs root")
	}
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	var m SysMounter
	if err := m.MountTmpfs(real, 0); err != nil {
		t.Skipf("cannot mount tmpfs here: %v", err)
	}
	t.Cleanup(func() { _ = m.Unmount(real) })
	if ok, err := m.IsMountPoint(link); err != nil || !ok {
		t.Errorf("IsMountPoint(symlink to mount) = %v, %v; want true", ok, err)
	}
	if ok, err := m.IsMountPoint(filepath.Join(dir, "missing")); err != nil || ok {
		t.Errorf("IsMountPoint(missing) = %v, %v; want false, nil", ok, err)
	}
}
