package kuberuntime

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/images/credprovider"
	"github.com/berthk8s/berth/internal/images/pullrecords"
)

// SecretLookup returns the secret name of namespace, for a pod's
// imagePullSecrets. Declared here, by its consumer; the agent backs it with
// the node's source of secrets (internal/volumes/objectcache) in cluster mode. It
// must be safe for concurrent use.
type SecretLookup func(ctx context.Context, namespace, name string) (*corev1.Secret, error)

// CredentialProvider asks the node's image credential provider plugins
// for the credentials of a repository ("host[:port]/path", no tag or
// digest): one answer per plugin that covers it, in config order, each
// mapping registry locations to a user and password. Declared here, by its
// consumer; credprovider.Providers implements it. It must be safe for
// concurrent use.
type CredentialProvider interface {
	Provide(ctx context.Context, image string) []credprovider.Credentials
}

var _ CredentialProvider = (*credprovider.Providers)(nil)

// PullRecords tracks which credentials brought each image to the node and
// says whether a pod must pull an image that is present. Declared here, by
// its consumer; pullrecords.Manager implements it. It must be safe for
// concurrent use.
type PullRecords interface {
	MustPull(ctx context.Context, image, imageRef string, podSecrets func() ([]pullrecords.Secret, error)) (bool, error)
	StartPull(image string) error
	Pulled(ctx context.Context, image, imageRef string, secret *pullrecords.Secret)
	PullFailed(ctx context.Context, image string)
}

var _ PullRecords = (*pullrecords.Manager)(nil)

// eventFailedToRetrievePullSecret is upstream's event reason when some of a
// pod's pull secrets cannot be read.
const eventFailedToRetrievePullSecret = "FailedToRetrieveImagePullSecret"

// pullSecrets reads the pod's imagePullSecrets through the lookup. Secrets
// that cannot be read are skipped with a warning event, as upstream does:
// the pull may still succeed with the others or anonymously. The pod's
// service account's pull secrets are not read: the node authorizer does not
// let a node get ServiceAccounts, and the ServiceAccount admission plugin
// has already copied them into the pod.
func (m *Manager) pullSecrets(ctx context.Context, pod *corev1.Pod) []*corev1.Secret {
	if m.cfg.PullSecrets == nil || len(pod.Spec.ImagePullSecrets) == 0 {
		return nil
	}
	var secrets []*corev1.Secret
	var failed []string
	for _, ref := range pod.Spec.ImagePullSecrets {
		if ref.Name == "" {
			continue
		}
		s, err := m.cfg.PullSecrets(ctx, pod.Namespace, ref.Name)
		if err != nil {
			klog.FromContext(ctx).Info("Unable to retrieve pull secret, the image pull may not succeed",
				"pod", klog.KObj(pod), "secret", klog.KRef(pod.Namespace, ref.Name), "err", err)
			failed = append(failed, ref.Name)
			continue
		}
		secrets = append(secrets, s)
	}
	if len(failed) > 0 {
		m.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, eventFailedToRetrievePullSecret,
			"Unable to retrieve some image pull secrets (%s); attempting to pull the image may not succeed.", strings.Join(failed, ", "))
	}
	return secrets
}

// dockerConfigEntry is one registry's entry in a .dockercfg or
// .dockerconfigjson: a user and password, or "auth" holding
// base64("user:password"), or tokens.
type dockerConfigEntry struct {
	Username      string `json:"username,omitempty"`
	Password      string `json:"password,omitempty"`
	Email         string `json:"email,omitempty"`
	Auth          string `json:"auth,omitempty"`
	IdentityToken string `json:"identitytoken,omitempty"`
	RegistryToken string `json:"registrytoken,omitempty"`
}

// dockerConfig maps a registry location (host[:port][/path], with or
// without a scheme) to its credentials.
type dockerConfig map[string]dockerConfigEntry

// authConfig turns an entry into the CRI's credentials. A non-empty "auth"
// wins over username and password, as in upstream and the docker CLI.
func (e dockerConfigEntry) authConfig() (*runtimeapi.AuthConfig, error) {
	user, pass := e.Username, e.Password
	if e.Auth != "" {
		raw, err := base64.StdEncoding.DecodeString(e.Auth)
		if err != nil {
			return nil, fmt.Errorf("decode auth field: %w", err)
		}
		var ok bool
		if user, pass, ok = strings.Cut(string(raw), ":"); !ok {
			return nil, errors.New("unable to parse auth field, must be formatted as base64(username:password)")
		}
	}
	return &runtimeapi.AuthConfig{Username: user, Password: pass,
		IdentityToken: e.IdentityToken, RegistryToken: e.RegistryToken}, nil
}

// secretDockerConfig reads a pull secret: type kubernetes.io/dockerconfigjson
// (key .dockerconfigjson, {"auths": {...}}) or kubernetes.io/dockercfg (key
// .dockercfg, the map itself). Other types, or an empty key, give nil.
func secretDockerConfig(s *corev1.Secret) (dockerConfig, error) {
	switch data := s.Data; {
	case s.Type == corev1.SecretTypeDockerConfigJson && len(data[corev1.DockerConfigJsonKey]) > 0:
		var cfg struct {
			Auths dockerConfig `json:"auths"`
		}
		if err := json.Unmarshal(data[corev1.DockerConfigJsonKey], &cfg); err != nil {
			return nil, fmt.Errorf("parse pull secret %q: %w", s.Name, err)
		}
		return cfg.Auths, nil
	case s.Type == corev1.SecretTypeDockercfg && len(data[corev1.DockerConfigKey]) > 0:
		var cfg dockerConfig
		if err := json.Unmarshal(data[corev1.DockerConfigKey], &cfg); err != nil {
			return nil, fmt.Errorf("parse pull secret %q: %w", s.Name, err)
		}
		return cfg, nil
	}
	return nil, nil
}

// credential is one registry credential and where it came from: a pod's
// pull secret (with the hash of what it gives, for the image pull
// records), or nil for credentials every pod on the node gets (the
// credential provider plugins'), as upstream's TrackedAuthConfig.
type credential struct {
	auth   *runtimeapi.AuthConfig
	secret *pullrecords.Secret
}

// keyring indexes credentials by registry location, "host[:port][/path]"
// without a scheme. Keys are sorted in reverse so that the more specific
// "quay.io/coreos" comes before "quay.io". A keyring is immutable.
type keyring struct {
	keys  []string
	creds map[string][]credential
}

// makeKeyring builds the keyring of the pod's pull secrets, in their order.
// A secret that does not parse fails the whole keyring, as upstream's
// MakeDockerKeyring does.
func makeKeyring(secrets []*corev1.Secret) (keyring, error) {
	k := keyring{creds: map[string][]credential{}}
	for _, s := range secrets {
		cfg, err := secretDockerConfig(s)
		if err != nil {
			return keyring{}, err
		}
		for _, loc := range slices.Sorted(maps.Keys(cfg)) { // a stable order among one secret's entries
			auth, err := cfg[loc].authConfig()
			if err != nil {
				return keyring{}, fmt.Errorf("parse pull secret %q entry %q: %w", s.Name, loc, err)
			}
			k.add(loc, credential{auth: auth, secret: &pullrecords.Secret{
				UID: string(s.UID), Namespace: s.Namespace, Name: s.Name, CredentialHash: hashAuth(auth, cfg[loc].Email),
			}})
		}
	}
	k.sort()
	return k, nil
}

// providerKeyring builds the keyring of what the node's credential
// provider plugins answered for an image, in their config order, as
// upstream's external credential provider keyring does.
func providerKeyring(answers []credprovider.Credentials) keyring {
	k := keyring{creds: map[string][]credential{}}
	for _, creds := range answers {
		for _, loc := range slices.Sorted(maps.Keys(creds)) {
			k.add(loc, credential{auth: &runtimeapi.AuthConfig{Username: creds[loc].Username, Password: creds[loc].Password}})
		}
	}
	k.sort()
	return k
}

// add appends auth to the credentials of location loc; locations that are
// not URLs are ignored, as upstream does.
func (k *keyring) add(loc string, c credential) {
	key, ok := keyringKey(loc)
	if !ok {
		return
	}
	if _, seen := k.creds[key]; !seen {
		k.keys = append(k.keys, key)
	}
	k.creds[key] = append(k.creds[key], c)
}

// sort orders the locations in reverse, most specific first.
func (k *keyring) sort() {
	sort.Sort(sort.Reverse(sort.StringSlice(k.keys)))
}

// keyringKey normalises a config location to "host[:port][/path]": the
// scheme goes, a leading /v1/ or /v2/ (API version, as docker writes
// "https://index.docker.io/v1/") goes, and Docker Hub's index.docker.io
// becomes docker.io, the domain repositories are normalised to.
func keyringKey(loc string) (string, bool) {
	if !strings.HasPrefix(loc, "https://") && !strings.HasPrefix(loc, "http://") {
		loc = "https://" + loc
	}
	u, err := url.Parse(loc)
	if err != nil || u.Host == "" {
		return "", false
	}
	host, p := u.Host, u.Path
	if strings.HasPrefix(p, "/v1/") || strings.HasPrefix(p, "/v2/") {
		p = p[3:]
	}
	if host == "index.docker.io" || host == "registry-1.docker.io" {
		host = "docker.io"
	}
	if p == "" || p == "/" {
		return host, true
	}
	return host + p, true
}

// lookup returns the credentials for a repository ("host[:port]/path", see
// lookupRepository), most specific location first; none means anonymous.
func (k keyring) lookup(repo string) []credential {
	var out []credential
	for _, key := range k.keys {
		if locationMatches(key, repo) {
			out = append(out, k.creds[key]...)
		}
	}
	return out
}

// locationMatches reports whether a keyring location covers a repository,
// as upstream's URLsMatch (credprovider.MatchImage, which also matches a
// credential provider's matchImages).
func locationMatches(loc, repo string) bool {
	ok, _ := credprovider.MatchImage(loc, repo)
	return ok
}

// lookupRepository returns the repository an image is pulled from in the
// form keyring locations use: "busybox:1.36" is
// "docker.io/library/busybox", "127.0.0.1:5000/private/app@sha256:..." is
// "127.0.0.1:5000/private/app".
func lookupRepository(image string) string {
	name, _, _ := strings.Cut(image, "@")
	if _, ok := splitTag(name); ok {
		name = name[:strings.LastIndexByte(name, ':')]
	}
	domain, rest, found := strings.Cut(name, "/")
	if !found || !isRegistryHost(domain) {
		domain, rest = "docker.io", name
	}
	if domain == "index.docker.io" {
		domain = "docker.io"
	}
	if domain == "docker.io" && !strings.Contains(rest, "/") {
		rest = "library/" + rest
	}
	return domain + "/" + rest
}

// pullWithCredentials pulls the image with each credential in turn and
// returns the first success with the pull secret it came from (nil for an
// anonymous pull or node-wide credentials); with no credentials it pulls
// anonymously. Like upstream it does not fall back to anonymous after
// credentials failed. The error joins the attempts' distinct CRI messages
// ("[a, b]" for more than one, upstream's aggregate format).
func pullWithCredentials(ctx context.Context, images runtimeapi.ImageServiceClient, req *runtimeapi.PullImageRequest, creds []credential) (*runtimeapi.PullImageResponse, *pullrecords.Secret, error) {
	if len(creds) == 0 {
		resp, err := images.PullImage(ctx, req)
		return resp, nil, err
	}
	var msgs []string // distinct messages, in order
	for _, c := range creds {
		attempt := &runtimeapi.PullImageRequest{Image: req.GetImage(), Auth: c.auth, SandboxConfig: req.GetSandboxConfig()}
		resp, err := images.PullImage(ctx, attempt)
		if err == nil {
			return resp, c.secret, nil
		}
		if msg := criMessage(err); !slices.Contains(msgs, msg) {
			msgs = append(msgs, msg)
		}
	}
	if len(msgs) == 1 {
		return nil, nil, errors.New(msgs[0])
	}
	return nil, nil, errors.New("[" + strings.Join(msgs, ", ") + "]")
}

// hashAuth is the hash of what a pull secret gives for a registry, by
// which the image pull records recognise the same credentials in another
// secret: upstream's hashAuthConfig, the hex SHA-256 of its AuthConfig's
// JSON, so records written by either kubelet match. The tokens, which
// upstream's secrets keyring drops and berth passes on, are part of it
// when set.
func hashAuth(a *runtimeapi.AuthConfig, email string) string {
	raw, err := json.Marshal(struct {
		Username      string `json:"username,omitempty"`
		Password      string `json:"password,omitempty"`
		Auth          string `json:"auth,omitempty"`
		Email         string `json:"email,omitempty"`
		ServerAddress string `json:"serveraddress,omitempty"`
		IdentityToken string `json:"identitytoken,omitempty"`
		RegistryToken string `json:"registrytoken,omitempty"`
	}{Username: a.GetUsername(), Password: a.GetPassword(), Email: email,
		IdentityToken: a.GetIdentityToken(), RegistryToken: a.GetRegistryToken()})
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%x", sha256.Sum256(raw))
}

// secrets returns the pull secrets whose credentials cover a repository,
// for the image pull records; node-wide credentials are not among them.
func (k keyring) secrets(repo string) []pullrecords.Secret {
	var out []pullrecords.Secret
	for _, c := range k.lookup(repo) {
		if c.secret != nil {
			out = append(out, *c.secret)
		}
	}
	return out
}
