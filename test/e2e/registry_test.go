package e2e

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/test/cluster"
)

// The registry's only user. registryHash is bcrypt(registryPassword) at
// cost 4, made once with golang.org/x/crypto/bcrypt (which berth's module
// does not build): distribution's htpasswd accepts only bcrypt.
const (
	registryUser     = "berth"
	registryPassword = "berth-e2e-secret"
	registryHash     = "$2a$04$y4/DkzpnuqYhvCHZ.hj8OOb/VZdDXQBUEm7fN4KWns8b12pNrRNiS"
)

// registry is a CNCF distribution registry with htpasswd basic auth on a
// free loopback port, storing into a temporary directory. containerd talks
// plain HTTP to it: its CRI plugin uses http for localhost and loopback
// registries (containerd 1.6's defaultScheme), so no TLS is needed.
type registry struct {
	host string // 127.0.0.1:<port>
}

func startRegistry(t *testing.T) *registry {
	t.Helper()
	bin, err := cluster.ResolveBinDir("")
	must(t, err)
	bin = filepath.Join(bin, "registry")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("registry binary: %v (run `make cluster-tools`)", err)
	}
	dir := t.TempDir()
	host := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	htpasswd := filepath.Join(dir, "htpasswd")
	must(t, os.WriteFile(htpasswd, []byte(registryUser+":"+registryHash+"\n"), 0o600))
	config := filepath.Join(dir, "config.yml")
	must(t, os.WriteFile(config, []byte(fmt.Sprintf(`version: 0.1
log:
  level: info
storage:
  filesystem:
    rootdirectory: %s
http:
  addr: %s
  secret: berth-e2e
auth:
  htpasswd:
    realm: berth-e2e
    path: %s
`, filepath.Join(dir, "data"), host, htpasswd)), 0o600))
	logFile, err := os.Create(filepath.Join(dir, "registry.log"))
	must(t, err)
	cmd := exec.Command(bin, "serve", config)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	must(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logFile.Close()
		if t.Failed() {
			if b, err := os.ReadFile(logFile.Name()); err == nil {
				t.Logf("registry log:\n%s", b)
			}
		}
	})
	r := &registry{host: host}
	waitUntil(t, "registry answers with 401", func() bool {
		resp, err := http.Get("http://" + host + "/v2/")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusUnauthorized
	})
	return r
}

// waitUntil polls cond until it holds or waitTimeout passes.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(pollInterval)
	}
}

// do sends one authenticated registry API request and checks its status.
func (r *registry) do(method, target, contentType string, body []byte, want int) (*http.Response, error) {
	req, err := http.NewRequest(method, target, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth(registryUser, registryPassword)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		return nil, fmt.Errorf("%s %s: %s: %s", method, target, resp.Status, msg)
	}
	return resp, nil
}

// push uploads an OCI image layout tar (hack/images.sh's image.tar) as
// repo:tag through the registry HTTP API v2: each blob by a monolithic
// upload (POST, then PUT with the digest), then the manifest. The image's
// config gets a label naming repo, so the pushed image has an ID of its own:
// the image pull records are kept by image ID, and a record made by
// pulling it with a secret must not cover the local busybox:1.36 that the
// other tests run without one (there is no registry to pull that from).
//
// extra layers (uncompressed tars) are added on top of the image's own.
func (r *registry) push(layoutTar, repo, tag string, extra ...[]byte) error {
	files, err := readTar(layoutTar)
	if err != nil {
		return err
	}
	type descriptor struct {
		MediaType string `json:"mediaType"`
		Digest    string `json:"digest"`
	}
	blob := func(d string) ([]byte, error) {
		b, ok := files["blobs/"+strings.Replace(d, ":", "/", 1)]
		if !ok {
			return nil, fmt.Errorf("blob %s missing from %s", d, layoutTar)
		}
		return b, nil
	}
	var index struct{ Manifests []descriptor }
	if err := json.Unmarshal(files["index.json"], &index); err != nil || len(index.Manifests) == 0 {
		return fmt.Errorf("read index.json of %s: %v", layoutTar, err)
	}
	manifestDesc := index.Manifests[0]
	manifest, err := blob(manifestDesc.Digest)
	if err != nil {
		return err
	}
	var m struct {
		Config descriptor
		Layers []descriptor
	}
	if err := json.Unmarshal(manifest, &m); err != nil {
		return fmt.Errorf("parse manifest: %w", err)
	}
	config, err := blob(m.Config.Digest)
	if err != nil {
		return err
	}
	if config, manifest, err = relabel(config, manifest, repo); err != nil {
		return err
	}
	for _, layer := range extra {
		if config, manifest, err = appendLayer(config, manifest, layer); err != nil {
			return err
		}
		d := descriptor{Digest: digestOf(layer)}
		files["blobs/"+strings.Replace(d.Digest, ":", "/", 1)] = layer
		m.Layers = append(m.Layers, d)
	}
	m.Config.Digest = digestOf(config)
	files["blobs/"+strings.Replace(m.Config.Digest, ":", "/", 1)] = config
	base := "http://" + r.host + "/v2/" + repo
	for _, d := range append([]descriptor{m.Config}, m.Layers...) {
		b, err := blob(d.Digest)
		if err != nil {
			return err
		}
		resp, err := r.do(http.MethodPost, base+"/blobs/uploads/", "", nil, http.StatusAccepted)
		if err != nil {
			return err
		}
		loc, err := url.Parse(base)
		if err == nil {
			loc, err = loc.Parse(resp.Header.Get("Location"))
		}
		if err != nil {
			return fmt.Errorf("parse upload location: %w", err)
		}
		q := loc.Query()
		q.Set("digest", d.Digest)
		loc.RawQuery = q.Encode()
		if _, err := r.do(http.MethodPut, loc.String(), "application/octet-stream", b, http.StatusCreated); err != nil {
			return err
		}
	}
	_, err = r.do(http.MethodPut, base+"/manifests/"+tag, manifestDesc.MediaType, manifest, http.StatusCreated)
	return err
}

// relabel adds the label org.berth.e2e.repo=repo to an image config and
// points the manifest at the new config.
func relabel(config, manifest []byte, repo string) ([]byte, []byte, error) {
	return editImage(config, manifest, func(c map[string]any) error {
		inner, _ := c["config"].(map[string]any)
		if inner == nil {
			inner = map[string]any{}
			c["config"] = inner
		}
		labels, _ := inner["Labels"].(map[string]any)
		if labels == nil {
			labels = map[string]any{}
			inner["Labels"] = labels
		}
		labels["org.berth.e2e.repo"] = repo
		return nil
	}, func(map[string]any) {})
}

// appendLayer adds an uncompressed layer to an image config (its diff ID)
// and manifest (a descriptor of the media type of the manifest's kind).
func appendLayer(config, manifest, layer []byte) ([]byte, []byte, error) {
	return editImage(config, manifest, func(c map[string]any) error {
		rootfs, _ := c["rootfs"].(map[string]any)
		if rootfs == nil {
			return errors.New("image config has no rootfs")
		}
		ids, _ := rootfs["diff_ids"].([]any)
		rootfs["diff_ids"] = append(ids, digestOf(layer))
		return nil
	}, func(m map[string]any) {
		layers, _ := m["layers"].([]any)
		mediaType := "application/vnd.oci.image.layer.v1.tar"
		if mt, _ := m["mediaType"].(string); strings.Contains(mt, "docker") {
			mediaType = "application/vnd.docker.image.rootfs.diff.tar"
		}
		m["layers"] = append(layers, map[string]any{"mediaType": mediaType, "digest": digestOf(layer), "size": len(layer)})
	})
}

// editImage changes an image config and its manifest, and points the
// manifest at the new config.
func editImage(config, manifest []byte, editConfig func(map[string]any) error, editManifest func(map[string]any)) ([]byte, []byte, error) {
	var c map[string]any
	if err := json.Unmarshal(config, &c); err != nil {
		return nil, nil, fmt.Errorf("parse image config: %w", err)
	}
	if err := editConfig(c); err != nil {
		return nil, nil, err
	}
	newConfig, err := json.Marshal(c)
	if err != nil {
		return nil, nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(manifest, &m); err != nil {
		return nil, nil, fmt.Errorf("parse manifest: %w", err)
	}
	editManifest(m)
	desc, _ := m["config"].(map[string]any)
	if desc == nil {
		return nil, nil, errors.New("manifest has no config descriptor")
	}
	desc["digest"], desc["size"] = digestOf(newConfig), len(newConfig)
	newManifest, err := json.Marshal(m)
	return newConfig, newManifest, err
}

func digestOf(b []byte) string {
	return fmt.Sprintf("sha256:%x", sha256.Sum256(b))
}

// readTar returns the regular files of a tar by name.
func readTar(path string) (map[string][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", path, err)
			}
			files[strings.TrimPrefix(h.Name, "./")] = b
		}
	}
}

// removeImageNames drops containerd's names starting with prefix (the tag
// and the repo@digest the CRI adds), which removes the pushed image (push
// gives it an ID of its own) and leaves every other.
func removeImageNames(t *testing.T, prefix string) {
	out, err := exec.Command("ctr", "-n", "k8s.io", "images", "ls", "-q").Output()
	if err != nil {
		t.Logf("list image names: %v", err)
		return
	}
	var names []string
	for _, n := range strings.Fields(string(out)) {
		if strings.HasPrefix(n, prefix) {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return
	}
	if out, err := exec.Command("ctr", append([]string{"-n", "k8s.io", "images", "rm"}, names...)...).CombinedOutput(); err != nil {
		t.Logf("remove image names %q: %v: %s", names, err, out)
	}
}

// privatePod runs image, always pulled, with the given pull secrets.
func privatePod(name, image string, secrets ...string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken:  ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []corev1.Container{{
				Name: "app", Image: image, ImagePullPolicy: corev1.PullAlways,
				Command: []string{"sleep", "3600"},
			}},
		},
	}
	for _, s := range secrets {
		p.Spec.ImagePullSecrets = append(p.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: s})
	}
	return p
}

// testPullSecrets pushes busybox to a registry that requires basic auth: a
// pod without a pull secret ends in ImagePullBackOff after ErrImagePull
// with the registry's 401 in the Failed event; a pod with one runs.
func (e *clusterEnv) testPullSecrets(t *testing.T) {
	ctx := context.Background()
	reg := startRegistry(t)
	root, err := cluster.ResolveBinDir("")
	must(t, err)
	layout := filepath.Join(root, "..", "..", "images", "busybox", "image.tar")
	image := reg.host + "/private/busybox:1.0"
	if err := reg.push(layout, "private/busybox", "1.0"); err != nil {
		t.Fatalf("push %s from %s (run `make node` for hack/images.sh): %v", image, layout, err)
	}
	auth := base64.StdEncoding.EncodeToString([]byte(registryUser + ":" + registryPassword))
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "regcred", Namespace: "default"},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(
			`{"auths":{"` + reg.host + `":{"auth":"` + auth + `"}}}`)},
	}
	_, err = e.admin.CoreV1().Secrets("default").Create(ctx, secret, metav1.CreateOptions{})
	must(t, err)
	pods := e.admin.CoreV1().Pods("default")
	t.Cleanup(func() {
		for _, name := range []string{"private-anon", "private-auth"} {
			_ = pods.Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		}
		e.waitAPI(t, "private pods gone", func(ctx context.Context) (bool, error) {
			for _, name := range []string{"private-anon", "private-auth"} {
				if _, err := pods.Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					return false, nil
				}
			}
			return true, nil
		})
		removeImageNames(t, reg.host+"/private/")
	})

	_, err = pods.Create(ctx, privatePod("private-anon", image), metav1.CreateOptions{})
	must(t, err)
	var waiting *corev1.ContainerStateWaiting
	e.waitAPI(t, "private-anon waiting in ImagePullBackOff", func(ctx context.Context) (bool, error) {
		p, err := pods.Get(ctx, "private-anon", metav1.GetOptions{})
		if err != nil || len(p.Status.ContainerStatuses) == 0 {
			return false, err
		}
		waiting = p.Status.ContainerStatuses[0].State.Waiting
		return waiting != nil && waiting.Reason == "ImagePullBackOff", nil
	})
	if want := fmt.Sprintf("Back-off pulling image %q", image); !strings.HasPrefix(waiting.Message, want) {
		t.Errorf("waiting message %q, want it to start with %q", waiting.Message, want)
	}
	var failed []string
	e.waitAPI(t, "ErrImagePull and the registry's 401 in events", func(ctx context.Context) (bool, error) {
		evs, err := e.admin.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=private-anon,reason=Failed"})
		if err != nil {
			return false, err
		}
		failed = failed[:0]
		var pullFailed, errImagePull bool
		for _, ev := range evs.Items {
			failed = append(failed, ev.Message)
			pullFailed = pullFailed || strings.HasPrefix(ev.Message, fmt.Sprintf("Failed to pull image %q", image)) && strings.Contains(ev.Message, "401 Unauthorized")
			errImagePull = errImagePull || ev.Message == "Error: ErrImagePull"
		}
		return pullFailed && errImagePull, nil
	})
	t.Logf("Failed events without a pull secret: %q", failed)

	_, err = pods.Create(ctx, privatePod("private-auth", image, "regcred"), metav1.CreateOptions{})
	must(t, err)
	e.waitPodRunning(t, "private-auth")
}
