package e2e

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/pod/timeline"
	"github.com/berthk8s/berth/test/cluster"
)

// Pull progress: a layer of pullLayerSize random bytes served at
// pullRate: the pull takes about 8 s, long enough for several readings.
const (
	pullLayerSize = 24 << 20
	pullRate      = 3 << 20 // bytes per second
)

// throttle is a reverse proxy in front of the registry that serves blob
// bodies at most rate bytes per second, as a slow registry link would.
func throttle(t *testing.T, registryHost string, rate int) string {
	t.Helper()
	target, err := url.Parse("http://" + registryHost)
	must(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(resp *http.Response) error {
		if strings.Contains(resp.Request.URL.Path, "/blobs/") {
			resp.Body = &slowBody{ReadCloser: resp.Body, rate: rate}
		}
		return nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	srv := &http.Server{Handler: proxy, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// slowBody reads at most rate bytes per second, in 64 KiB steps.
type slowBody struct {
	io.ReadCloser
	rate int
}

func (b *slowBody) Read(p []byte) (int, error) {
	const step = 64 << 10
	if len(p) > step {
		p = p[:step]
	}
	n, err := b.ReadCloser.Read(p)
	time.Sleep(time.Duration(n) * time.Second / time.Duration(b.rate))
	return n, err
}

// randomLayer is an uncompressed layer tar holding one file of size
// random bytes: a new digest every run, so that no earlier run's content
// is on the node.
func randomLayer(t *testing.T, size int) []byte {
	t.Helper()
	data := make([]byte, size)
	_, err := rand.Read(data)
	must(t, err)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	must(t, tw.WriteHeader(&tar.Header{Name: "data/blob", Mode: 0o644, Size: int64(size), Typeflag: tar.TypeReg}))
	_, err = tw.Write(data)
	must(t, err)
	must(t, tw.Close())
	return buf.Bytes()
}

// testPullProgress pulls a large image from the loopback registry through
// a link of pullRate bytes per second and reads, while it pulls, the pod's
// timeline through the API server's node proxy and its Pulling event:
// the image stage's progress rises before the pull completes, and the one
// Pulling event's message tells it, counted on the same object.
func (e *clusterEnv) testPullProgress(t *testing.T) {
	ctx := context.Background()
	reg := startRegistry(t)
	slow := throttle(t, reg.host, pullRate)
	root, err := cluster.ResolveBinDir("")
	must(t, err)
	layout := filepath.Join(root, "..", "..", "images", "busybox", "image.tar")
	if err := reg.push(layout, "large/busybox", "1.0", randomLayer(t, pullLayerSize)); err != nil {
		t.Fatalf("push the large image from %s: %v", layout, err)
	}
	image := slow + "/large/busybox:1.0"
	auth := base64.StdEncoding.EncodeToString([]byte(registryUser + ":" + registryPassword))
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "slowcred", Namespace: "default"},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"` + slow + `":{"auth":"` + auth + `"}}}`)},
	}
	_, err = e.admin.CoreV1().Secrets("default").Create(ctx, secret, metav1.CreateOptions{})
	must(t, err)
	pods := e.admin.CoreV1().Pods("default")
	t.Cleanup(func() {
		_ = pods.Delete(ctx, "large-image", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		e.waitAPI(t, "large-image gone", func(ctx context.Context) (bool, error) {
			_, err := pods.Get(ctx, "large-image", metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		_ = e.admin.CoreV1().Secrets("default").Delete(ctx, "slowcred", metav1.DeleteOptions{})
		removeImageNames(t, slow+"/")
	})
	_, err = pods.Create(ctx, privatePod("large-image", image, "slowcred"), metav1.CreateOptions{})
	must(t, err)

	// Read the timeline until the pod runs.
	var readings []timeline.Progress
	var pulled *timeline.Stage
	e.waitAPI(t, "large-image running", func(ctx context.Context) (bool, error) {
		body, err := e.cl.Kubectl(ctx, "get", "--raw", "/api/v1/nodes/"+nodeName+"/proxy/pods/default/large-image/timeline")
		if err == nil {
			var tl timeline.Timeline
			if err := json.Unmarshal([]byte(body), &tl); err != nil {
				return false, fmt.Errorf("timeline %q: %w", body, err)
			}
			for i, s := range tl.Stages {
				if s.Name != timeline.StageImage || s.Target != image {
					continue
				}
				if s.Outcome == timeline.OutcomeRunning && s.Progress != nil &&
					(len(readings) == 0 || readings[len(readings)-1] != *s.Progress) {
					readings = append(readings, *s.Progress)
				}
				if s.Outcome == timeline.OutcomeOK {
					pulled = &tl.Stages[i]
				}
			}
		}
		p, err := pods.Get(ctx, "large-image", metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning, err
	})
	t.Logf("progress readings while pulling: %+v", readings)
	if pulled == nil {
		t.Fatal("no image stage ended ok in the timeline")
	}
	t.Logf("image stage: %.1f s, %d bytes", pulled.DurationSeconds, pulled.Bytes)
	var rising int
	for i, r := range readings {
		if r.TotalBytes < pullLayerSize || r.DoneBytes > r.TotalBytes {
			t.Errorf("reading %d: %+v: total below the large layer, or done past it", i, r)
		}
		if i > 0 && r.DoneBytes > readings[i-1].DoneBytes && r.DoneBytes < r.TotalBytes {
			rising++
		}
	}
	if rising < 2 {
		t.Errorf("%d readings rose before the pull completed, want at least 2: %+v", rising, readings)
	}

	// The Pulling event: one object, its message with the progress.
	evs, err := e.admin.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=large-image,reason=Pulling"})
	must(t, err)
	if len(evs.Items) != 1 {
		t.Fatalf("%d Pulling events, want one: %+v", len(evs.Items), evs.Items)
	}
	ev := evs.Items[0]
	t.Logf("Pulling event (count %d): %s", ev.Count, ev.Message)
	if prefix := fmt.Sprintf("Pulling image %q: ", image); !strings.HasPrefix(ev.Message, prefix) || !strings.Contains(ev.Message, " MiB of ") || ev.Count < 2 {
		t.Errorf("Pulling event %q count %d: want %q and the bytes, updated at least once", ev.Message, ev.Count, prefix)
	}
}
