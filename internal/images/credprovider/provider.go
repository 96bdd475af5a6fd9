package credprovider

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"
	"k8s.io/klog/v2"
	kubeletconfigv1 "k8s.io/kubelet/config/v1"
	credentialproviderv1 "k8s.io/kubelet/pkg/apis/credentialprovider/v1"
	"k8s.io/utils/clock"
)

// Config is what New needs.
type Config struct {
	// Providers is the loaded and validated CredentialProviderConfig
	// (LoadConfig, ValidateConfig).
	Providers *kubeletconfigv1.CredentialProviderConfig
	// BinDir is --image-credential-provider-bin-dir.
	BinDir string
	// Clock times the cache.
	Clock clock.PassiveClock
	// Environ is the environment plugins start from (os.Environ if nil);
	// each provider's env is added after it.
	Environ func() []string
	// ExecTimeout bounds one plugin run (DefaultExecTimeout if zero).
	ExecTimeout time.Duration
	// Registerer, when not nil, gets upstream's credential provider
	// metrics; ConfigHash (LoadConfig's) labels the config info.
	Registerer prometheus.Registerer
	ConfigHash string
}

// Providers asks the node's credential provider plugins for image
// credentials. It is safe for concurrent use: each plugin has its own
// cache and runs at most once at a time per image.
type Providers struct {
	plugins []*plugin
}

// plugin is one configured provider: its exec, cache and singleflight.
type plugin struct {
	name                 string
	matchImages          []string
	defaultCacheDuration time.Duration
	exec                 *execPlugin
	clock                clock.PassiveClock
	cache                *cache
	group                singleflight.Group // keyed by image
}

// New builds the plugins of cfg. It starts nothing.
func New(cfg Config) (*Providers, error) {
	if cfg.Providers == nil || cfg.Clock == nil {
		return nil, errors.New("credential providers: config and clock are required")
	}
	environ := cfg.Environ
	if environ == nil {
		environ = os.Environ
	}
	timeout := cfg.ExecTimeout
	if timeout == 0 {
		timeout = DefaultExecTimeout
	}
	m, err := newMetrics(cfg.Registerer, cfg.ConfigHash)
	if err != nil {
		return nil, fmt.Errorf("register credential provider metrics: %w", err)
	}
	ps := &Providers{}
	for _, p := range cfg.Providers.Providers {
		if p.DefaultCacheDuration == nil {
			return nil, fmt.Errorf("credential provider %q: defaultCacheDuration is required", p.Name)
		}
		env := make([]string, 0, len(p.Env))
		for _, v := range p.Env {
			env = append(env, v.Name+"="+v.Value)
		}
		ps.plugins = append(ps.plugins, &plugin{
			name:                 p.Name,
			matchImages:          p.MatchImages,
			defaultCacheDuration: p.DefaultCacheDuration.Duration,
			exec: &execPlugin{name: p.Name, path: filepath.Join(cfg.BinDir, p.Name), apiVersion: p.APIVersion,
				args: p.Args, env: env, environ: environ, timeout: timeout, clock: cfg.Clock, metrics: m},
			clock: cfg.Clock,
			cache: newCache(cfg.Clock),
		})
	}
	return ps, nil
}

// Provide returns, in config order, the credentials of every plugin whose
// matchImages cover image (a repository, "host[:port]/path" without tag or
// digest). A plugin that fails is logged and skipped, as upstream: the
// pull goes on with the other credentials.
func (ps *Providers) Provide(ctx context.Context, image string) []Credentials {
	var out []Credentials
	for _, p := range ps.plugins {
		creds, err := p.provide(ctx, image)
		if err != nil {
			klog.FromContext(ctx).Error(err, "Failed to provide credentials for image", "provider", p.name, "image", image)
			continue
		}
		if len(creds) > 0 {
			out = append(out, creds)
		}
	}
	return out
}

// provide answers from the cache or runs the plugin, once for all the
// callers asking about the same image at the same time.
func (p *plugin) provide(ctx context.Context, image string) (Credentials, error) {
	if !p.matches(image) {
		return nil, nil
	}
	if creds, ok := p.cache.get(image); ok {
		return creds, nil
	}
	// The run is shared, so one caller's cancellation must not end it;
	// the exec timeout bounds it. A caller that gives up stops waiting.
	ch := p.group.DoChan(image, func() (any, error) {
		return p.exec.run(context.WithoutCancel(ctx), image)
	})
	var res singleflight.Result
	select {
	case res = <-ch:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if res.Err != nil {
		return nil, res.Err
	}
	return p.store(image, res.Val.(*credentialproviderv1.CredentialProviderResponse))
}

// store turns a response into credentials and caches them by its
// cacheKeyType and cacheDuration (the provider's default when it has
// none; zero caches nothing).
func (p *plugin) store(image string, resp *credentialproviderv1.CredentialProviderResponse) (Credentials, error) {
	key, err := cacheKey(resp.CacheKeyType, image)
	if err != nil {
		return nil, err
	}
	creds := make(Credentials, len(resp.Auth))
	for loc, auth := range resp.Auth {
		creds[loc] = auth
	}
	var respDuration *time.Duration
	if resp.CacheDuration != nil {
		respDuration = &resp.CacheDuration.Duration
	}
	if until, ok := cacheUntil(p.clock.Now(), respDuration, &p.defaultCacheDuration); ok {
		p.cache.put(key, creds, until)
	}
	return creds, nil
}

// matches reports whether one of the provider's matchImages covers image.
func (p *plugin) matches(image string) bool {
	for _, m := range p.matchImages {
		if ok, _ := MatchImage(m, image); ok {
			return true
		}
	}
	return false
}
