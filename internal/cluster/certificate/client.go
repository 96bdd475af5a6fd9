package certificate

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/certificate"
	"k8s.io/client-go/util/keyutil"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// ClientOptions say where the node's API credentials come from.
type ClientOptions struct {
	// Kubeconfig is --kubeconfig: read, or written after bootstrapping.
	Kubeconfig string
	// BootstrapKubeconfig is --bootstrap-kubeconfig; empty: no bootstrap.
	BootstrapKubeconfig string
	// CertDir is --cert-dir, where the client key pairs are stored.
	CertDir string
	// NodeName is the name in the certificates' subject.
	NodeName string
	// Rotate is rotateCertificates.
	Rotate bool
	// UserAgent is sent by the certificate requests' clients.
	UserAgent string
	// Clock drives the rotating transport's checks.
	Clock clock.WithTicker
	// RenewError, if set, counts the Manager's failed renewals.
	RenewError func()
}

// Client is the API clients' side of the node's credentials: the base
// rest.Config every client is built from and, with rotation, the Manager
// that renews the client certificate. Config is read-only after NewClient;
// Run is called once.
type Client struct {
	config   *rest.Config
	manager  certificate.Manager // nil: no rotation
	rotation *rotation
}

// NewClient prepares the node's API credentials the way upstream's
// buildKubeletClientConfig does:
//   - rotation off, no bootstrap kubeconfig: --kubeconfig as it is;
//   - rotation off, bootstrap kubeconfig: when --kubeconfig is not Usable,
//     request a client certificate now with the bootstrap credentials,
//     wait for it, store it in --cert-dir and write --kubeconfig;
//   - rotation on: a certificate Manager keeps the client certificate in
//     --cert-dir (bootstrapping in the background when --kubeconfig is
//     not Usable, --kubeconfig then rewritten to point at the store) and
//     every client shares one transport that presents its current one.
func NewClient(ctx context.Context, o ClientOptions) (*Client, error) {
	if o.Kubeconfig == "" {
		return nil, errors.New("prepare API credentials: no kubeconfig given")
	}
	if !o.Rotate {
		if o.BootstrapKubeconfig != "" {
			if err := bootstrapOnce(ctx, o); err != nil {
				return nil, err
			}
		}
		cfg, err := loadRESTConfig(o.Kubeconfig)
		if err != nil {
			return nil, err
		}
		return &Client{config: cfg}, nil
	}
	return newRotatingClient(ctx, o)
}

// Config is the base rest.Config of every API client; callers copy it
// (rest.CopyConfig) before they change it.
func (c *Client) Config() *rest.Config { return c.config }

// Current is the client certificate in use, nil without rotation.
func (c *Client) Current() *tls.Certificate {
	if c.manager == nil {
		return nil
	}
	return c.manager.Current()
}

// Run renews the client certificate until ctx ends (rotation only;
// otherwise it just waits). It fails, which stops berth, when the node has
// had no valid certificate for a while although the API server answers, as
// upstream exits: a supervisor restarting berth bootstraps again.
func (c *Client) Run(ctx context.Context) error {
	if c.manager == nil {
		<-ctx.Done()
		return nil
	}
	c.manager.Start()
	defer c.manager.Stop()
	return c.rotation.run(ctx)
}

// newRotatingClient is NewClient with rotation on.
func newRotatingClient(ctx context.Context, o ClientOptions) (*Client, error) {
	logger := klog.FromContext(ctx)
	certCfg, userCfg, err := rotationConfigs(ctx, o)
	if err != nil {
		return nil, err
	}
	store, err := certificate.NewFileStoreWithLogger(logger.V(2), clientPairPrefix, o.CertDir, o.CertDir, userCfg.CertFile, userCfg.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("open client certificate store in %q: %w", o.CertDir, err)
	}
	mctx := context.WithoutCancel(ctx)
	// Every client's config; newRotation installs the rotating transport
	// into it below, before the Manager starts.
	cfg := rest.AnonymousClientConfig(userCfg)
	m, err := certificate.NewManager(&certificate.Config{
		ClientsetFn: renewalClients(certCfg, cfg),
		Template:    ClientTemplate(o.NodeName),
		SignerName:  certificatesv1.KubeAPIServerClientKubeletSignerName,
		GetUsages:   certificate.DefaultKubeletClientGetUsages,
		// A kubeconfig with the credentials inline (kubeadm's control plane
		// nodes) seeds the store and is rotated out at once, as upstream.
		BootstrapCertificatePEM: userCfg.CertData,
		BootstrapKeyPEM:         userCfg.KeyData,
		CertificateStore:        store,
		CertificateRenewFailure: counter(o.RenewError),
		Name:                    "kubelet-client",
		Ctx:                     &mctx,
	})
	if err != nil {
		return nil, fmt.Errorf("create client certificate manager: %w", err)
	}
	rot, err := newRotation(cfg, m, o.Clock)
	if err != nil {
		return nil, err
	}
	return &Client{config: cfg, manager: m, rotation: rot}, nil
}

// renewalClients is the Manager's ClientsetFn, as upstream's: before the
// first certificate, requests go with the bootstrap credentials (certCfg);
// after, through the rotating transport (rotating) like every other
// client, so a renewal presents the certificate in use. A client of the
// kubeconfig's file pair instead would keep presenting the pair it read
// for minutes after a rotation, expired ones included.
func renewalClients(certCfg, rotating *rest.Config) func(current *tls.Certificate) (kubernetes.Interface, error) {
	return func(current *tls.Certificate) (kubernetes.Interface, error) {
		if current != nil {
			return kubernetes.NewForConfig(rotating)
		}
		return kubernetes.NewForConfig(certCfg)
	}
}

// rotationConfigs returns the credentials the Manager requests
// certificates with before it has one (certCfg) and the node's own
// (userCfg), as upstream's LoadClientConfig: --kubeconfig for both when
// there is no bootstrap kubeconfig or --kubeconfig is Usable; otherwise
// the bootstrap kubeconfig, and --kubeconfig (re)written to point at the
// store's current pair, which does not exist yet.
func rotationConfigs(ctx context.Context, o ClientOptions) (certCfg, userCfg *rest.Config, err error) {
	logger := klog.FromContext(ctx)
	useKubeconfig := o.BootstrapKubeconfig == ""
	if !useKubeconfig {
		usable, reason, err := Usable(o.Kubeconfig, o.Clock.Now())
		if err != nil {
			return nil, nil, err
		}
		useKubeconfig = usable
		if !usable {
			logger.Info("Bootstrapping the client certificate in the background", "kubeconfig", o.Kubeconfig, "reason", reason)
		}
	}
	if useKubeconfig {
		cfg, err := loadRESTConfig(o.Kubeconfig)
		if err != nil {
			return nil, nil, err
		}
		cfg.UserAgent = o.UserAgent
		return cfg, rest.CopyConfig(cfg), nil
	}
	boot, err := loadRESTConfig(o.BootstrapKubeconfig)
	if err != nil {
		return nil, nil, fmt.Errorf("load bootstrap kubeconfig: %w", err)
	}
	boot.UserAgent = o.UserAgent
	if err := os.MkdirAll(o.CertDir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("create cert dir %q: %w", o.CertDir, err)
	}
	pemPath := filepath.Join(o.CertDir, clientPairPrefix+"-current.pem")
	user := rest.AnonymousClientConfig(boot)
	user.CertFile, user.KeyFile = pemPath, pemPath
	if err := writeKubeconfig(boot, o.Kubeconfig, pemPath); err != nil {
		return nil, nil, err
	}
	return boot, user, nil
}

// bootstrapOnce is the bootstrap without rotation, as upstream's
// LoadClientCert: nothing when --kubeconfig is Usable; otherwise the key
// of the store's pair (or a kept or new key), one CSR with the bootstrap
// credentials, the issued pair stored and --kubeconfig written.
func bootstrapOnce(ctx context.Context, o ClientOptions) error {
	logger := klog.FromContext(ctx)
	usable, reason, err := Usable(o.Kubeconfig, o.Clock.Now())
	if err != nil || usable {
		return err
	}
	logger.Info("Bootstrapping the client certificate", "kubeconfig", o.Kubeconfig, "reason", reason)
	boot, err := loadRESTConfig(o.BootstrapKubeconfig)
	if err != nil {
		return fmt.Errorf("load bootstrap kubeconfig: %w", err)
	}
	boot.UserAgent = o.UserAgent
	client, err := kubernetes.NewForConfig(boot)
	if err != nil {
		return fmt.Errorf("create bootstrap API client: %w", err)
	}
	if err := os.MkdirAll(o.CertDir, 0o755); err != nil {
		return fmt.Errorf("create cert dir %q: %w", o.CertDir, err)
	}
	store, err := certificate.NewFileStoreWithLogger(logger.V(2), clientPairPrefix, o.CertDir, o.CertDir, "", "")
	if err != nil {
		return fmt.Errorf("open client certificate store in %q: %w", o.CertDir, err)
	}
	keyPath := filepath.Join(o.CertDir, tmpClientKeyFile)
	keyPEM, err := bootstrapKey(store, keyPath)
	if err != nil {
		return err
	}
	if err := waitForServer(ctx, client, o.Clock); err != nil {
		logger.Info("Requesting the client certificate anyway", "err", err)
	}
	certPEM, err := requestClientCertificate(ctx, client, keyPEM, o.NodeName)
	if err != nil {
		return err
	}
	if _, err := store.Update(certPEM, keyPEM); err != nil {
		return fmt.Errorf("store client certificate: %w", err)
	}
	if err := os.Remove(keyPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		logger.V(2).Info("Could not remove the bootstrap key", "path", keyPath, "err", err)
	}
	logger.Info("Client certificate issued", "kubeconfig", o.Kubeconfig, "pair", store.CurrentPath())
	return writeKubeconfig(boot, o.Kubeconfig, store.CurrentPath())
}

// bootstrapKey is the key to request the certificate for: the store's
// current pair's (its certificate expired, the key is still good), else
// the one kept at keyPath by an earlier attempt, else a new one kept
// there until the certificate is issued.
func bootstrapKey(store certificate.FileStore, keyPath string) ([]byte, error) {
	if cur, err := store.Current(); err == nil && cur.PrivateKey != nil {
		if data, err := keyutil.MarshalPrivateKeyToPEM(cur.PrivateKey); err == nil {
			return data, nil
		}
	}
	data, _, err := keyutil.LoadOrGenerateKeyFile(keyPath)
	if err != nil {
		return nil, fmt.Errorf("load or generate bootstrap key %q: %w", keyPath, err)
	}
	return data, nil
}

// waitForServer waits, at most serverWait, for the API server to answer
// /healthz, as upstream does before its bootstrap request: a node often
// boots before its control plane.
func waitForServer(ctx context.Context, client kubernetes.Interface, clk clock.WithTicker) error {
	logger := klog.FromContext(ctx)
	ctx, cancel := context.WithTimeout(ctx, serverWait)
	defer cancel()
	t := clk.NewTicker(2 * time.Second)
	defer t.Stop()
	for {
		attempt, stop := context.WithTimeout(ctx, time.Second)
		_, err := client.Discovery().RESTClient().Get().AbsPath("/healthz").Do(attempt).Raw()
		stop()
		if err == nil {
			return nil
		}
		logger.Info("Waiting for the API server", "err", err)
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for the API server: %w", ctx.Err())
		case <-t.C():
		}
	}
}

// defaultCheckPeriod and firstCertPeriod are how often the rotating
// transport looks for a new certificate: every 10s, every second until the
// first one; exitAfter is how long it tolerates having no valid one while
// the API server answers. All as upstream.
const (
	defaultCheckPeriod = 10 * time.Second
	firstCertPeriod    = time.Second
	exitAfter          = 5 * time.Minute
	// serverWait bounds waitForServer, as upstream.
	serverWait = time.Minute
)
