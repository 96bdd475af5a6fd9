package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"
)

type options struct {
	kubeconfig      string
	nodeName        string
	root            string
	provisionerName string
	healthzAddress  string
}

func main() {
	klog.InitFlags(nil)
	var o options
	flag.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of the provisioner's identity")
	flag.StringVar(&o.nodeName, "node-name", "", "the node whose host this runs on: its volumes are made here")
	flag.StringVar(&o.root, "root", "", "directory under which each volume gets a directory of its own")
	flag.StringVar(&o.provisionerName, "provisioner-name", DefaultProvisionerName, "the StorageClass provisioner this answers for")
	flag.StringVar(&o.healthzAddress, "healthz-address", "", "host:port of a plain HTTP /healthz (200 once the controller runs); empty: none")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "local-provisioner:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	if o.kubeconfig == "" || o.nodeName == "" || o.root == "" {
		return errors.New("--kubeconfig, --node-name and --root are required")
	}
	root, err := filepath.Abs(o.root)
	if err != nil {
		return fmt.Errorf("resolve --root %q: %w", o.root, err)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return fmt.Errorf("make --root %q: %w", root, err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return fmt.Errorf("load kubeconfig %q: %w", o.kubeconfig, err)
	}
	cfg.UserAgent = "local-provisioner"
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("make client: %w", err)
	}
	p := &localProvisioner{client: client, node: o.nodeName, root: root}
	ctrl := controller.NewProvisionController(ctx, client, o.provisionerName, p,
		controller.LeaderElection(false))
	if o.healthzAddress != "" {
		if err := serveHealthz(ctx, o.healthzAddress, ctrl.HasRun); err != nil {
			return err
		}
	}
	klog.FromContext(ctx).Info("Starting", "provisioner", o.provisionerName, "node", o.nodeName, "root", root)
	ctrl.Run(ctx) // returns when ctx ends
	return nil
}

// serveHealthz answers /healthz on addr: 200 once running() holds.
func serveHealthz(ctx context.Context, addr string, running func() bool) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on --healthz-address %q: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		if !running() {
			http.Error(w, "controller not running yet", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 5 * time.Second, IdleTimeout: time.Minute}
	go func() { _ = srv.Serve(l) }()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	return nil
}
