package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/kubernetes/test/e2e/storage/drivers/csi-test/mock/service"
)

// options is the command line.
type options struct {
	csiAddress      string
	registrationDir string
	callLog         string
	holdPublish     string
	mock            service.Config
}

func main() {
	o, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	d, err := start(o)
	if err != nil {
		log.Fatalf("csi-mock-driver: %v", err)
	}
	log.Printf("csi-mock-driver: %s serving CSI on %s, registration on %s", o.mock.DriverName, d.csiPath, d.regPath)
	if err := d.run(ctx); err != nil {
		log.Printf("csi-mock-driver: %v", err)
		os.Exit(1)
	}
	log.Printf("csi-mock-driver: stopped")
}

// parseFlags reads the command line; errors and -help go to out.
func parseFlags(args []string, out io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("csi-mock-driver", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&o.csiAddress, "csi-address", "", "unix socket to serve CSI on (required; a stale socket is removed)")
	fs.StringVar(&o.registrationDir, "registration-dir", "/var/lib/kubelet/plugins_registry", "kubelet's plugin registration directory; the registration socket is <dir>/<name>-reg.sock")
	fs.StringVar(&o.callLog, "call-log", "", "file to append one JSON line per gRPC call to (none when empty)")
	fs.StringVar(&o.holdPublish, "hold-publish", "", "hold each NodePublishVolume while this file exists (writing <file>.held as one starts waiting)")
	fs.StringVar(&o.mock.DriverName, "name", service.Name, "CSI driver name; also the node ID NodeGetInfo answers")
	fs.BoolVar(&o.mock.EnableTopology, "enable-topology", false, "advertise VOLUME_ACCESSIBILITY_CONSTRAINTS and answer NodeGetInfo with topology "+service.TopologyKey+"="+service.TopologyValue)
	fs.Int64Var(&o.mock.AttachLimit, "attach-limit", 0, "NodeGetInfo's max_volumes_per_node (0: unset)")
	fs.BoolVar(&o.mock.NodeExpansionRequired, "node-expansion-required", false, "advertise the EXPAND_VOLUME node capability")
	fs.BoolVar(&o.mock.DisableAttach, "disable-attach", false, "no ControllerPublishVolume; stage and publish need no publish_context device")
	fs.BoolVar(&o.mock.PermissiveTargetPath, "permissive-target-path", false, "allow NodePublishVolume to an existing target path (the mock allows it anyway)")
	fs.BoolVar(&o.mock.VolumeMountGroupRequired, "enable-volume-mount-group", false, "advertise the VOLUME_MOUNT_GROUP node capability")
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	if fs.NArg() > 0 {
		err := fmt.Errorf("unexpected arguments %q", fs.Args())
		fmt.Fprintln(out, err)
		return options{}, err
	}
	if o.mock.DriverName == "" || o.csiAddress == "" || o.registrationDir == "" {
		err := fmt.Errorf("--name, --csi-address and --registration-dir must not be empty")
		fmt.Fprintln(out, err)
		return options{}, err
	}
	return o, nil
}
