package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/platform/cri"
)

// sharedImages are hack/images.sh's test images, which every e2e run uses.
var sharedImages = []string{"registry.k8s.io/pause:3.10.1", busybox, "localhost/berth/grpc-health:1.0"}

// TestClusterDiskPressure checks disk pressure with node-level reclaim on a
// berth node joined to a real control plane. nodefs and imagefs thresholds
// are set 3 GiB below the free space measured at the start; a file
// allocated on the node's filesystem takes the free space 1 GiB below
// them. Then DiskPressure and its NoSchedule taint appear, the image GC
// removes a throwaway image no pod uses (and none of the shared test
// images, which a static pod keeps in use), a pod is refused with
// upstream's reason and message, and once the file is removed the
// condition and the taint clear. The static pod is critical: it is never
// evicted, so the test's pressure evicts nothing.
func TestClusterDiskPressure(t *testing.T) {
	requireE2E(t)
	c := runtimeClient(t)
	guardSharedImages(t, c)
	throwaway := importThrowawayImage(t, c)
	e := startClusterEnv(t)
	e.node.writeManifest("keeper.yaml", keeperPod())
	fsDir := imageFsMountpoint(t, c)
	threshold := freeBytes(t, fsDir) - 3<<30
	if threshold < 1<<30 {
		t.Skipf("%s has too little free space for the test", fsDir)
	}
	q := strconv.FormatInt(threshold, 10)
	e.node.setEviction(fmt.Sprintf("evictionHard:\n  nodefs.available: %q\n  imagefs.available: %q\nevictionPressureTransitionPeriod: 15s\nimageMinimumGCAge: 1s\n", q, q))
	e.node.start()
	e.node.waitPod(fullName("keeper"), "running", running)
	if !hasImage(t, c, throwaway) {
		t.Fatalf("image %s gone before any disk pressure", throwaway)
	}

	fill := filepath.Join(e.node.rootDir, "disk-pressure-fill")
	allocateBelow(t, fill, fsDir, threshold-1<<30)
	waitDiskPressure(t, e, true)
	e.node.waitFor("image GC removes "+throwaway, func() bool { return !hasImage(t, c, throwaway) })
	for _, img := range sharedImages {
		if !hasImage(t, c, img) {
			t.Errorf("node-level reclaim removed %s, which the static pod uses (or the sandbox image)", img)
		}
	}
	e.waitAPI(t, "EvictionThresholdMet event", func(ctx context.Context) (bool, error) {
		evs, err := e.admin.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Node,reason=EvictionThresholdMet"})
		return err == nil && len(evs.Items) > 0 && evs.Items[0].Message == "Attempting to reclaim ephemeral-storage", err
	})
	e.testDiskPressureAdmission(t)
	if p := e.node.waitPod(fullName("keeper"), "running", running); p.Status.Phase != corev1.PodRunning {
		t.Errorf("static pod %s under disk pressure", p.Status.Phase)
	}

	must(t, os.Remove(fill))
	waitDiskPressure(t, e, false)
}

// keeperPod keeps busybox and grpc-health in use, so the node-level image
// reclaim cannot remove them; a static pod is critical and never evicted.
func keeperPod() string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: keeper
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: busybox
    image: %s
    imagePullPolicy: IfNotPresent
    command: ["sleep", "3600"]
  - name: grpc-health
    image: localhost/berth/grpc-health:1.0
    imagePullPolicy: IfNotPresent
`, busybox)
}

// testDiskPressureAdmission creates a pod bound to the node (the taint
// keeps the scheduler away): berth refuses it as upstream's eviction
// admission does.
func (e *clusterEnv) testDiskPressureAdmission(t *testing.T) {
	pod := lifecyclePod("disk-refused", "sleep 3600")
	pod.Spec.NodeName = nodeName
	_, err := e.admin.CoreV1().Pods("default").Create(context.Background(), pod, metav1.CreateOptions{})
	must(t, err)
	var got *corev1.Pod
	e.waitAPI(t, "disk-refused rejected", func(ctx context.Context) (bool, error) {
		p, err := e.admin.CoreV1().Pods("default").Get(ctx, "disk-refused", metav1.GetOptions{})
		got = p
		return err == nil && p.Status.Phase == corev1.PodFailed, err
	})
	// upstream's rejectPod prefixes the admit handler's message.
	const want = "Pod was rejected: The node had condition: [DiskPressure]. "
	if got.Status.Reason != "Evicted" || got.Status.Message != want {
		t.Errorf("refused pod: reason %q, message %q; want Evicted, %q", got.Status.Reason, got.Status.Message, want)
	}
}

// waitDiskPressure waits for the DiskPressure condition and the
// node.kubernetes.io/disk-pressure NoSchedule taint (the node lifecycle
// controller's) to be both present or both gone.
func waitDiskPressure(t *testing.T, e *clusterEnv, want bool) {
	t.Helper()
	status := corev1.ConditionFalse
	if want {
		status = corev1.ConditionTrue
	}
	e.waitAPI(t, fmt.Sprintf("DiskPressure %s with its taint", status), func(ctx context.Context) (bool, error) {
		n, err := e.admin.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		tainted := slices.ContainsFunc(n.Spec.Taints, func(tn corev1.Taint) bool {
			return tn.Key == corev1.TaintNodeDiskPressure && tn.Effect == corev1.TaintEffectNoSchedule
		})
		return hasNodeCondition(n.Status.Conditions, corev1.NodeDiskPressure, status) && tainted == want, nil
	})
}

// guardSharedImages skips the test when containerd holds tagged images
// other than the shared test images (someone else's: the node-level
// reclaim would remove them), and restores the shared ones with hack/images.sh at
// the end should any be gone.
func guardSharedImages(t *testing.T, c *cri.Client) {
	resp, err := c.Image.ListImages(context.Background(), &runtimeapi.ListImagesRequest{})
	must(t, err)
	for _, img := range resp.Images {
		// An untagged image is dangling (its tag moved on): no name refers
		// to it, and removing it loses nothing.
		if len(img.RepoTags) > 0 && !slices.ContainsFunc(img.RepoTags, func(tag string) bool { return slices.Contains(sharedImages, tag) }) {
			t.Skipf("containerd holds image %s %v, which image GC could remove: not running the disk pressure test", img.Id, img.RepoTags)
		}
	}
	t.Cleanup(func() {
		for _, img := range sharedImages {
			if !hasImage(t, c, img) {
				t.Errorf("%s is gone: restoring the test images", img)
				out, err := exec.Command("bash", "../../hack/images.sh").CombinedOutput()
				if err != nil {
					t.Errorf("hack/images.sh: %v: %s", err, out)
				}
				return
			}
		}
	})
}

// importThrowawayImage builds a one-file image with hack/mkimage, imports
// it into containerd's k8s.io namespace and returns its name; it is
// removed at the end if still there.
func importThrowawayImage(t *testing.T, c *cri.Client) string {
	dir := t.TempDir()
	name := fmt.Sprintf("localhost/berth/e2e-throwaway:%d", time.Now().UnixNano())
	rootfs := filepath.Join(dir, "rootfs")
	must(t, os.MkdirAll(rootfs, 0o755))
	must(t, os.WriteFile(filepath.Join(rootfs, "unused"), []byte("no pod runs this image\n"), 0o644))
	mkimage, archive := filepath.Join(dir, "mkimage"), filepath.Join(dir, "image.tar")
	for _, cmd := range [][]string{
		{"go", "build", "-o", mkimage, "github.com/berthk8s/berth/hack/mkimage"},
		{mkimage, "-rootfs", rootfs, "-name", name, "-entrypoint", "/unused", "-o", archive},
		{"ctr", "--address", strings.TrimPrefix(criEndpoint, "unix://"), "-n", "k8s.io", "images", "import", archive},
	} {
		if out, err := exec.Command(cmd[0], cmd[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", strings.Join(cmd, " "), err, out)
		}
	}
	t.Cleanup(func() {
		if hasImage(t, c, name) {
			_, _ = c.Image.RemoveImage(context.Background(), &runtimeapi.RemoveImageRequest{Image: &runtimeapi.ImageSpec{Image: name}})
		}
	})
	if !hasImage(t, c, name) {
		t.Fatalf("imported image %s not in the CRI", name)
	}
	return name
}

func hasImage(t *testing.T, c *cri.Client, name string) bool {
	resp, err := c.Image.ImageStatus(context.Background(), &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: name}})
	must(t, err)
	return resp.Image != nil
}

// imageFsMountpoint is where containerd keeps its images (the imagefs);
// on this machine it is also the nodefs (berth's root directory).
func imageFsMountpoint(t *testing.T, c *cri.Client) string {
	resp, err := c.Image.ImageFsInfo(context.Background(), &runtimeapi.ImageFsInfoRequest{})
	must(t, err)
	if len(resp.ImageFilesystems) == 0 {
		t.Fatal("the CRI reports no image filesystem")
	}
	return resp.ImageFilesystems[0].FsId.Mountpoint
}

// freeBytes is a filesystem's space available to unprivileged users, as
// berth's statfs reads it.
func freeBytes(t *testing.T, path string) int64 {
	var st unix.Statfs_t
	must(t, unix.Statfs(path, &st))
	return int64(st.Bavail) * st.Bsize
}

// allocateBelow allocates file (without writing it) so that path's
// filesystem has target bytes free, and removes it when the test ends. It
// refuses to allocate more than 8 GiB, which would mean the free space
// moved far from the start.
func allocateBelow(t *testing.T, file, path string, target int64) {
	size := freeBytes(t, path) - target
	if size <= 0 || size > 8<<30 {
		t.Fatalf("would allocate %d bytes to reach %d free: the free space moved too far", size, target)
	}
	f, err := os.Create(file)
	must(t, err)
	t.Cleanup(func() { _ = os.Remove(file) })
	must(t, unix.Fallocate(int(f.Fd()), 0, 0, size))
	must(t, f.Close())
}
