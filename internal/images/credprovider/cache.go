package credprovider

import (
	"fmt"
	"strings"
	"sync"
	"time"

	credentialproviderv1 "k8s.io/kubelet/pkg/apis/credentialprovider/v1"
	"k8s.io/utils/clock"
)

const (
	// globalCacheKey is the key of credentials cached for every image; the
	// angle brackets keep it apart from image and registry names.
	globalCacheKey = "<global>"
	// cachePurgeInterval is how often expired entries that nobody looks
	// up are dropped, as upstream.
	cachePurgeInterval = 15 * time.Minute
)

// Credentials is what one plugin answered for an image: registry location
// ("host[:port][/path]", globs allowed, as matchImages) to user and
// password.
type Credentials map[string]credentialproviderv1.AuthConfig

// cacheKey is the key a response is cached under, by its cacheKeyType:
// the image, its registry (host[:port]) or the global key.
func cacheKey(keyType credentialproviderv1.PluginCacheKeyType, image string) (string, error) {
	switch keyType {
	case credentialproviderv1.ImagePluginCacheKeyType:
		return image, nil
	case credentialproviderv1.RegistryPluginCacheKeyType:
		return registryOf(image), nil
	case credentialproviderv1.GlobalPluginCacheKeyType:
		return globalCacheKey, nil
	}
	return "", fmt.Errorf("credential provider plugin did not return a valid cacheKeyType: %q", keyType)
}

// registryOf is the registry of an image: everything before the first "/".
func registryOf(image string) string {
	registry, _, _ := strings.Cut(image, "/")
	return registry
}

// cacheUntil says until when a response may be cached: the response's
// cacheDuration, or the provider's default when the response has none. A
// zero duration means no caching (ok false).
func cacheUntil(now time.Time, response, defaultDuration *time.Duration) (time.Time, bool) {
	d := defaultDuration
	if response != nil {
		d = response
	}
	if d == nil || *d <= 0 {
		return time.Time{}, false
	}
	return now.Add(*d), true
}

// cache holds one plugin's credentials until they expire. It is safe for
// concurrent use; mu guards entries and lastPurge.
type cache struct {
	clock clock.PassiveClock

	mu        sync.Mutex
	entries   map[string]cacheEntry
	lastPurge time.Time
}

type cacheEntry struct {
	creds     Credentials
	expiresAt time.Time
}

func newCache(c clock.PassiveClock) *cache {
	return &cache{clock: c, entries: map[string]cacheEntry{}, lastPurge: c.Now()}
}

// get returns the credentials cached for image under any cacheKeyType:
// the image, then its registry, then the global key. An entry is valid
// up to and including its expiry time, as upstream's.
func (c *cache) get(image string) (Credentials, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	if now.After(c.lastPurge.Add(cachePurgeInterval)) {
		for k, e := range c.entries {
			if now.After(e.expiresAt) {
				delete(c.entries, k)
			}
		}
		c.lastPurge = now
	}
	for _, key := range []string{image, registryOf(image), globalCacheKey} {
		e, ok := c.entries[key]
		if !ok {
			continue
		}
		if now.After(e.expiresAt) {
			delete(c.entries, key)
			continue
		}
		return e.creds, true
	}
	return nil, false
}

// put caches creds under key until expiresAt.
func (c *cache) put(key string, creds Credentials, expiresAt time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries[key] = cacheEntry{creds: creds, expiresAt: expiresAt}
}

// len is the number of entries, expired or not (for tests).
func (c *cache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
