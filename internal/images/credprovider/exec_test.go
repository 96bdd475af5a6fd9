package credprovider

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2/ktesting"
	kubeletconfigv1 "k8s.io/kubelet/config/v1"
	credentialproviderv1 "k8s.io/kubelet/pkg/apis/credentialprovider/v1"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
)

// pluginBinDir holds the test plugin (testdata/plugin) built once by
// TestMain under the name "plugin".
var pluginBinDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "credprovider-plugin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pluginBinDir = dir
	out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "plugin"), "./testdata/plugin").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build test plugin: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func testExec(mode string, env ...string) *execPlugin {
	return &execPlugin{name: "plugin", path: filepath.Join(pluginBinDir, "plugin"), apiVersion: "credentialprovider.kubelet.k8s.io/v1",
		args: []string{mode}, env: env, environ: func() []string { return []string{"PLUGIN_USER=host"} }, timeout: 2 * time.Second,
		clock: clock.RealClock{}}
}

func TestExecPlugin(t *testing.T) {
	tests := []struct {
		name    string
		exec    *execPlugin
		want    *credentialproviderv1.CredentialProviderResponse
		wantErr string
	}{
		{name: "ok", exec: testExec("ok"), want: &credentialproviderv1.CredentialProviderResponse{
			TypeMeta:     metav1.TypeMeta{APIVersion: "credentialprovider.kubelet.k8s.io/v1", Kind: "CredentialProviderResponse"},
			CacheKeyType: "Image", Auth: map[string]credentialproviderv1.AuthConfig{"r.io/app": {Username: "host", Password: "pw-r.io/app"}}}},
		{name: "provider env overrides the environment", exec: testExec("ok", "PLUGIN_USER=config", "PLUGIN_CACHE_DURATION=5m"),
			want: &credentialproviderv1.CredentialProviderResponse{
				TypeMeta:     metav1.TypeMeta{APIVersion: "credentialprovider.kubelet.k8s.io/v1", Kind: "CredentialProviderResponse"},
				CacheKeyType: "Image", CacheDuration: &metav1.Duration{Duration: 5 * time.Minute},
				Auth: map[string]credentialproviderv1.AuthConfig{"r.io/app": {Username: "config", Password: "pw-r.io/app"}}}},
		{name: "v1beta1", exec: func() *execPlugin {
			e := testExec("ok")
			e.apiVersion = "credentialprovider.kubelet.k8s.io/v1beta1"
			return e
		}(),
			want: &credentialproviderv1.CredentialProviderResponse{
				TypeMeta:     metav1.TypeMeta{APIVersion: "credentialprovider.kubelet.k8s.io/v1beta1", Kind: "CredentialProviderResponse"},
				CacheKeyType: "Image", Auth: map[string]credentialproviderv1.AuthConfig{"r.io/app": {Username: "host", Password: "pw-r.io/app"}}}},
		{name: "hangs past the timeout", exec: func() *execPlugin { e := testExec("hang"); e.timeout = 300 * time.Millisecond; return e }(),
			wantErr: `exec credential provider plugin "plugin" for image "r.io/app": context deadline exceeded`},
		{name: "garbage", exec: testExec("garbage"), wantErr: "decode credential provider response: not a JSON object"},
		{name: "too much output", exec: testExec("flood"), wantErr: `exec credential provider plugin "plugin" for image "r.io/app": response is larger than 1048576 bytes`},
		{name: "fails", exec: testExec("fail"), wantErr: `exec credential provider plugin "plugin" for image "r.io/app": exit status 1: no credentials for you`},
		{name: "unknown field", exec: testExec("unknown"), wantErr: `decode credential provider response: unknown field "extra"`},
		{name: "missing binary", exec: func() *execPlugin { e := testExec("ok"); e.path += "-gone"; return e }(), wantErr: "no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			got, err := tt.exec.run(t.Context(), "r.io/app")
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("run took %v: not bounded", took)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("run() error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("run(): %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeResponse(t *testing.T) {
	const v1 = "credentialprovider.kubelet.k8s.io/v1"
	tests := []struct {
		name, data, wantErr string
	}{
		{name: "ok", data: `{"apiVersion":"` + v1 + `","kind":"CredentialProviderResponse","cacheKeyType":"Image","auth":{"r.io":{"username":"u","password":"p"}}}`},
		{name: "other version", data: `{"apiVersion":"credentialprovider.kubelet.k8s.io/v1beta1","kind":"CredentialProviderResponse","cacheKeyType":"Image"}`,
			wantErr: `apiVersion "credentialprovider.kubelet.k8s.io/v1beta1" does not match the provider's "credentialprovider.kubelet.k8s.io/v1"`},
		{name: "other kind", data: `{"apiVersion":"` + v1 + `","kind":"CredentialProviderRequest"}`, wantErr: `kind "CredentialProviderRequest", want "CredentialProviderResponse"`},
		{name: "duplicate field", data: `{"apiVersion":"` + v1 + `","kind":"CredentialProviderResponse","cacheKeyType":"Image","cacheKeyType":"Global"}`, wantErr: `duplicate field "cacheKeyType"`},
		{name: "mis-cased field", data: `{"apiVersion":"` + v1 + `","kind":"CredentialProviderResponse","CacheKeyType":"Image"}`, wantErr: `unknown field "CacheKeyType"`},
		{name: "wrong type keeps the secret out of the error", data: `{"apiVersion":"` + v1 + `","kind":"CredentialProviderResponse","auth":{"r.io":{"username":"u","password":12345}}}`,
			wantErr: "does not match the CredentialProviderResponse schema"},
		{name: "trailing garbage", data: `{"apiVersion":"` + v1 + `","kind":"CredentialProviderResponse"} secret`, wantErr: "not a JSON object"},
	}
	for _, tt := range tests {
		_, err := decodeResponse([]byte(tt.data), v1)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: decodeResponse(): %v", tt.name, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: decodeResponse() error = %v, want one containing %q", tt.name, err, tt.wantErr)
		case err != nil && strings.Contains(err.Error(), "secret") || err != nil && strings.Contains(err.Error(), "12345"):
			t.Errorf("%s: error %q quotes the output", tt.name, err)
		}
	}
}

// providersFor builds Providers running the test plugin in mode, logging
// each run to a file whose lines runs counts.
func providersFor(t *testing.T, clk *clocktesting.FakeClock, mode string, defaultCache time.Duration, env ...string) (*Providers, func() []string) {
	t.Helper()
	log := filepath.Join(t.TempDir(), "runs")
	var penv []kubeletconfigv1.ExecEnvVar
	for _, e := range env {
		k, v, _ := strings.Cut(e, "=")
		penv = append(penv, kubeletconfigv1.ExecEnvVar{Name: k, Value: v})
	}
	ps, err := New(Config{
		Providers: &kubeletconfigv1.CredentialProviderConfig{Providers: []kubeletconfigv1.CredentialProvider{{
			Name: "plugin", MatchImages: []string{"*.example.com", "127.0.0.1:5000"}, APIVersion: "credentialprovider.kubelet.k8s.io/v1",
			DefaultCacheDuration: &metav1.Duration{Duration: defaultCache}, Args: []string{mode}, Env: penv}}},
		BinDir:  pluginBinDir,
		Clock:   clk,
		Environ: func() []string { return []string{"PLUGIN_LOG=" + log, "PLUGIN_USER=u"} },
	})
	if err != nil {
		t.Fatal(err)
	}
	runs := func() []string {
		data, err := os.ReadFile(log)
		if os.IsNotExist(err) {
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		return strings.Fields(string(data))
	}
	return ps, runs
}

func TestProvidersCache(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	type step struct {
		advance time.Duration
		image   string
		want    []Credentials
	}
	cred := func(loc, image string) []Credentials {
		return []Credentials{{loc: {Username: "u", Password: "pw-" + image}}}
	}
	tests := []struct {
		name         string
		env          []string
		defaultCache time.Duration
		steps        []step
		wantRuns     []string
	}{
		{name: "not matching: never run", defaultCache: time.Hour,
			steps: []step{{image: "docker.io/library/busybox"}, {image: "a.b.example.com/app"}, {image: "127.0.0.1:6000/app"}}},
		{name: "image key: cached until the default duration", defaultCache: time.Hour,
			steps: []step{
				{image: "r.example.com/app", want: cred("r.example.com/app", "r.example.com/app")},
				{advance: time.Hour, image: "r.example.com/app", want: cred("r.example.com/app", "r.example.com/app")},
				{image: "r.example.com/other", want: cred("r.example.com/other", "r.example.com/other")},
				{advance: time.Second, image: "r.example.com/app", want: cred("r.example.com/app", "r.example.com/app")},
			},
			wantRuns: []string{"r.example.com/app", "r.example.com/other", "r.example.com/app"}},
		{name: "registry key covers the registry's images", env: []string{"PLUGIN_CACHE_KEY_TYPE=Registry", "PLUGIN_LOCATION=r.example.com"}, defaultCache: time.Hour,
			steps: []step{
				{image: "r.example.com/app", want: cred("r.example.com", "r.example.com/app")},
				{image: "r.example.com/other", want: cred("r.example.com", "r.example.com/app")},
				{image: "s.example.com/app", want: cred("r.example.com", "s.example.com/app")},
			},
			wantRuns: []string{"r.example.com/app", "s.example.com/app"}},
		{name: "global key covers every image", env: []string{"PLUGIN_CACHE_KEY_TYPE=Global", "PLUGIN_LOCATION=*.example.com"}, defaultCache: time.Hour,
			steps: []step{
				{image: "r.example.com/app", want: cred("*.example.com", "r.example.com/app")},
				{image: "127.0.0.1:5000/app", want: cred("*.example.com", "r.example.com/app")},
			},
			wantRuns: []string{"r.example.com/app"}},
		{name: "response duration wins over the default", env: []string{"PLUGIN_CACHE_DURATION=1m"}, defaultCache: time.Hour,
			steps: []step{
				{image: "r.example.com/app", want: cred("r.example.com/app", "r.example.com/app")},
				{advance: 2 * time.Minute, image: "r.example.com/app", want: cred("r.example.com/app", "r.example.com/app")},
			},
			wantRuns: []string{"r.example.com/app", "r.example.com/app"}},
		{name: "response duration zero: no cache", env: []string{"PLUGIN_CACHE_DURATION=0s"}, defaultCache: time.Hour,
			steps: []step{
				{image: "r.example.com/app", want: cred("r.example.com/app", "r.example.com/app")},
				{image: "r.example.com/app", want: cred("r.example.com/app", "r.example.com/app")},
			},
			wantRuns: []string{"r.example.com/app", "r.example.com/app"}},
		{name: "default zero: no cache",
			steps: []step{
				{image: "r.example.com/app", want: cred("r.example.com/app", "r.example.com/app")},
				{image: "r.example.com/app", want: cred("r.example.com/app", "r.example.com/app")},
			},
			wantRuns: []string{"r.example.com/app", "r.example.com/app"}},
		{name: "invalid cacheKeyType: no credentials", env: []string{"PLUGIN_CACHE_KEY_TYPE=Pod"}, defaultCache: time.Hour,
			steps:    []step{{image: "r.example.com/app"}, {image: "r.example.com/app"}},
			wantRuns: []string{"r.example.com/app", "r.example.com/app"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(start)
			ps, runs := providersFor(t, clk, "ok", tt.defaultCache, tt.env...)
			_, ctx := ktesting.NewTestContext(t)
			for i, s := range tt.steps {
				clk.Step(s.advance)
				if diff := cmp.Diff(s.want, ps.Provide(ctx, s.image)); diff != "" {
					t.Errorf("step %d: Provide(%q) (-want +got):\n%s", i, s.image, diff)
				}
			}
			if diff := cmp.Diff(tt.wantRuns, runs()); diff != "" {
				t.Errorf("plugin runs (-want +got):\n%s", diff)
			}
		})
	}
}

// TestProvidersSingleflight shows that concurrent requests for one image
// run the plugin once and all get its answer.
func TestProvidersSingleflight(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	ps, runs := providersFor(t, clk, "ok", 0, "PLUGIN_DELAY=500ms")
	_, ctx := ktesting.NewTestContext(t)
	var wg sync.WaitGroup
	results := make([][]Credentials, 5)
	for i := range results {
		wg.Go(func() { results[i] = ps.Provide(ctx, "r.example.com/app") })
	}
	wg.Wait()
	want := []Credentials{{"r.example.com/app": {Username: "u", Password: "pw-r.example.com/app"}}}
	for i, got := range results {
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("caller %d (-want +got):\n%s", i, diff)
		}
	}
	if got := runs(); len(got) != 1 {
		t.Errorf("plugin ran %d times (%v), want once", len(got), got)
	}
}

// TestProvidersCallerGivesUp shows that a caller whose context ends stops
// waiting for a slow plugin.
func TestProvidersCallerGivesUp(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	ps, _ := providersFor(t, clk, "hang", 0)
	_, tctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithTimeout(tctx, 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if got := ps.Provide(ctx, "r.example.com/app"); got != nil {
		t.Errorf("Provide() = %v, want nothing", got)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Provide() took %v after its context ended", took)
	}
}

func symlink(target, link string) error { return os.Symlink(target, link) }
