package kuberuntime

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2/ktesting"

	"github.com/berthk8s/berth/internal/images/pullrecords"
)

func dockerConfigJSONSecret(name, auths string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Type: corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":` + auths + `}`)}}
}

func dockercfgSecret(name, cfg string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Type: corev1.SecretTypeDockercfg,
		Data: map[string][]byte{corev1.DockerConfigKey: []byte(cfg)}}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// creds renders credentials as "user:pass" (or "id=token", "reg=token").
func creds(cs []credential) []string {
	var out []string
	for _, c := range cs {
		a := c.auth
		switch {
		case a.GetIdentityToken() != "":
			out = append(out, "id="+a.GetIdentityToken())
		case a.GetRegistryToken() != "":
			out = append(out, "reg="+a.GetRegistryToken())
		default:
			out = append(out, a.GetUsername()+":"+a.GetPassword())
		}
	}
	return out
}

func TestKeyringLookup(t *testing.T) {
	tests := []struct {
		name    string
		secrets []*corev1.Secret
		repo    string
		want    []string
	}{
		{name: "no secrets: anonymous", repo: "docker.io/library/busybox"},
		{name: "dockerconfigjson username and password",
			secrets: []*corev1.Secret{dockerConfigJSONSecret("s", `{"registry.example.com":{"username":"u","password":"p"}}`)},
			repo:    "registry.example.com/app", want: []string{"u:p"}},
		{name: "auth field wins over username",
			secrets: []*corev1.Secret{dockerConfigJSONSecret("s", `{"registry.example.com":{"username":"x","auth":"`+b64("u:p:with:colons")+`"}}`)},
			repo:    "registry.example.com/app", want: []string{"u:p:with:colons"}},
		{name: "dockercfg",
			secrets: []*corev1.Secret{dockercfgSecret("s", `{"https://registry.example.com":{"auth":"`+b64("u:p")+`","email":"a@b"}}`)},
			repo:    "registry.example.com/team/app", want: []string{"u:p"}},
		{name: "host with port matches only that port",
			secrets: []*corev1.Secret{dockerConfigJSONSecret("s", `{"127.0.0.1:5000":{"username":"u","password":"p"},"127.0.0.1:6000":{"username":"v","password":"q"}}`)},
			repo:    "127.0.0.1:5000/private/busybox", want: []string{"u:p"}},
		{name: "host without port does not match a port",
			secrets: []*corev1.Secret{dockerConfigJSONSecret("s", `{"127.0.0.1":{"username":"u","password":"p"}}`)},
			repo:    "127.0.0.1:5000/private/busybox"},
		{name: "path prefixes, most specific first",
			secrets: []*corev1.Secret{dockerConfigJSONSecret("s", `{"quay.io":{"username":"host","password":"1"},"quay.io/coreos":{"username":"ns","password":"2"},"quay.io/other":{"username":"x","password":"3"}}`)},
			repo:    "quay.io/coreos/etcd", want: []string{"ns:2", "host:1"}},
		{name: "api version path is the host",
			secrets: []*corev1.Secret{dockerConfigJSONSecret("s", `{"https://index.docker.io/v1/":{"username":"hub","password":"p"}}`)},
			repo:    "docker.io/library/busybox", want: []string{"hub:p"}},
		{name: "glob host labels",
			secrets: []*corev1.Secret{dockerConfigJSONSecret("s", `{"*.example.com":{"username":"u","password":"p"}}`)},
			repo:    "registry.example.com/app", want: []string{"u:p"}},
		{name: "glob needs as many labels",
			secrets: []*corev1.Secret{dockerConfigJSONSecret("s", `{"*.example.com":{"username":"u","password":"p"}}`)},
			repo:    "a.registry.example.com/app"},
		{name: "other host: anonymous",
			secrets: []*corev1.Secret{dockerConfigJSONSecret("s", `{"registry.example.com":{"username":"u","password":"p"}}`)},
			repo:    "docker.io/library/busybox"},
		{name: "tokens",
			secrets: []*corev1.Secret{dockerConfigJSONSecret("s", `{"a.example.com":{"identitytoken":"it"},"b.example.com":{"registrytoken":"rt"}}`)},
			repo:    "b.example.com/app", want: []string{"reg=rt"}},
		{name: "several secrets in pod order",
			secrets: []*corev1.Secret{
				dockerConfigJSONSecret("one", `{"registry.example.com":{"username":"first","password":"1"}}`),
				dockercfgSecret("two", `{"registry.example.com":{"username":"second","password":"2"}}`),
			},
			repo: "registry.example.com/app", want: []string{"first:1", "second:2"}},
		{name: "other secret types are ignored",
			secrets: []*corev1.Secret{{Type: corev1.SecretTypeOpaque, Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte("not json")}}},
			repo:    "registry.example.com/app"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ring, err := makeKeyring(tt.secrets)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, creds(ring.lookup(tt.repo))); diff != "" {
				t.Errorf("lookup(%q) (-want +got):\n%s", tt.repo, diff)
			}
		})
	}
}

func TestMakeKeyringErrors(t *testing.T) {
	tests := map[string]*corev1.Secret{
		"bad json":         dockerConfigJSONSecret("s", `{"registry.example.com":`),
		"bad base64 auth":  dockerConfigJSONSecret("s", `{"registry.example.com":{"auth":"%%%"}}`),
		"auth lacks colon": dockercfgSecret("s", `{"registry.example.com":{"auth":"`+b64("nocolon")+`"}}`),
	}
	for name, s := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := makeKeyring([]*corev1.Secret{s}); err == nil {
				t.Error("makeKeyring succeeded, want an error")
			}
		})
	}
}

func TestLookupRepository(t *testing.T) {
	tests := map[string]string{
		"busybox":                                   "docker.io/library/busybox",
		"busybox:1.36":                              "docker.io/library/busybox",
		"team/app:v1":                               "docker.io/team/app",
		"index.docker.io/library/busybox":           "docker.io/library/busybox",
		"127.0.0.1:5000/private/busybox:1.0":        "127.0.0.1:5000/private/busybox",
		"localhost/app@sha256:" + sha("x"):          "localhost/app",
		"quay.io/coreos/etcd:v3@sha256:" + sha("y"): "quay.io/coreos/etcd",
		// An upper-case first component is a registry host, as containerd
		// takes it (issue #26, finding 5: it got Docker Hub credentials).
		"Registry/app:1": "Registry/app",
	}
	for image, want := range tests {
		if got := lookupRepository(image); got != want {
			t.Errorf("lookupRepository(%q) = %q, want %q", image, got, want)
		}
	}
}

func sha(s string) string { return strings.Repeat(s, 64) }

// authImages is an image service that pulls only with the credentials it
// wants for an image, like a registry with basic auth, and records every
// attempt as "image user:pass" ("image anonymous" without credentials).
type authImages struct {
	runtimeapi.ImageServiceClient
	want map[string]string

	mu    sync.Mutex // guards tried
	tried []string
}

func (a *authImages) PullImage(ctx context.Context, req *runtimeapi.PullImageRequest, opts ...grpc.CallOption) (*runtimeapi.PullImageResponse, error) {
	image, got := req.GetImage().GetImage(), "anonymous"
	if req.GetAuth() != nil {
		got = creds([]credential{{auth: req.GetAuth()}})[0]
	}
	a.mu.Lock()
	a.tried = append(a.tried, image+" "+got)
	a.mu.Unlock()
	if want, ok := a.want[image]; ok && got != want {
		return nil, errors.New("failed to authorize: 401 Unauthorized (" + got + ")")
	}
	return a.ImageServiceClient.PullImage(ctx, req, opts...)
}

func (a *authImages) attempts() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.tried
}

func TestPullWithCredentials(t *testing.T) {
	const image = "127.0.0.1:5000/private/busybox:1.0"
	tests := []struct {
		name      string
		creds     []string // user:pass
		wantTried []string
		wantErr   string
	}{
		{name: "anonymous", wantTried: []string{image + " anonymous"},
			wantErr: "failed to authorize: 401 Unauthorized (anonymous)"},
		{name: "right credentials", creds: []string{"u:p"}, wantTried: []string{image + " u:p"}},
		{name: "second credential works", creds: []string{"bad:1", "u:p", "bad:2"},
			wantTried: []string{image + " bad:1", image + " u:p"}},
		{name: "all fail, no anonymous fallback", creds: []string{"bad:1", "bad:2"},
			wantTried: []string{image + " bad:1", image + " bad:2"},
			wantErr:   "[failed to authorize: 401 Unauthorized (bad:1), failed to authorize: 401 Unauthorized (bad:2)]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			e := newEnv(t)
			e.fake.AllowPull(image)
			images := &authImages{ImageServiceClient: e.m.cfg.Images, want: map[string]string{image: "u:p"}}
			var auths []credential
			for _, c := range tt.creds {
				user, pass, _ := strings.Cut(c, ":")
				auths = append(auths, credential{auth: &runtimeapi.AuthConfig{Username: user, Password: pass}, secret: &pullrecords.Secret{Name: c}})
			}
			req := &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: image}}
			resp, used, err := pullWithCredentials(ctx, images, req, auths)
			if err == nil && len(auths) > 0 && used.Name != "u:p" {
				t.Errorf("used secret %+v, want the one with u:p", used)
			}
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			} else if resp.GetImageRef() == "" {
				t.Error("no image ref")
			}
			if gotErr != tt.wantErr {
				t.Errorf("error = %q, want %q", gotErr, tt.wantErr)
			}
			if diff := cmp.Diff(tt.wantTried, images.attempts()); diff != "" {
				t.Errorf("attempts (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSyncPodPullSecrets runs SyncPod for a pod whose image needs the
// credentials of one of its pull secrets; a missing secret is skipped with
// a warning.
func TestSyncPodPullSecrets(t *testing.T) {
	const image = "127.0.0.1:5000/private/busybox:1.0"
	e := newEnv(t)
	e.fake.AllowPull(image)
	images := &authImages{ImageServiceClient: e.m.cfg.Images, want: map[string]string{image: "u:p"}}
	e.m.cfg.Images = images
	secrets := map[string]*corev1.Secret{
		"regcred": dockerConfigJSONSecret("regcred", `{"127.0.0.1:5000":{"auth":"`+b64("u:p")+`"}}`),
		"other":   dockerConfigJSONSecret("other", `{"quay.io":{"username":"q","password":"q"}}`),
	}
	var asked []string
	e.m.cfg.PullSecrets = func(_ context.Context, namespace, name string) (*corev1.Secret, error) {
		asked = append(asked, namespace+"/"+name)
		if s, ok := secrets[name]; ok {
			return s, nil
		}
		return nil, errors.New(`secrets "` + name + `" not found`)
	}

	anon := basePod()
	anon.Spec.Containers[0].Image = image
	f := e.sync(anon)["app"]
	if f.Reason != ReasonErrImagePull || !strings.Contains(f.Message, "401 Unauthorized") {
		t.Fatalf("without pull secrets: failure = %+v, want ErrImagePull with the registry's 401", f)
	}
	if evs := e.events.take(); !hasEvent(evs, `Warning Failed Failed to pull image "`+image+`": failed to authorize: 401 Unauthorized`) {
		t.Errorf("events %q lack the Failed event with the registry's message", evs)
	}

	pod := basePod()
	pod.Name, pod.UID = "with-secret", "uid-with-secret"
	pod.Spec.Containers[0].Image = image
	pod.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "missing"}, {Name: "other"}, {Name: "regcred"}}
	if f := e.sync(pod); len(f) != 0 {
		t.Fatalf("with pull secrets: failures %v", f)
	}
	e.running(pod, "app")
	if diff := cmp.Diff([]string{"default/missing", "default/other", "default/regcred"}, asked); diff != "" {
		t.Errorf("secrets read (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{image + " anonymous", image + " u:p"}, images.attempts()); diff != "" {
		t.Errorf("pull attempts (-want +got):\n%s", diff)
	}
	if evs := e.events.take(); !hasEvent(evs, "Warning FailedToRetrieveImagePullSecret Unable to retrieve some image pull secrets (missing); ") {
		t.Errorf("events %q lack FailedToRetrieveImagePullSecret", evs)
	}
}
