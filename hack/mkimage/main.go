// Command mkimage writes a single-layer OCI image-layout tar from a root
// filesystem directory, without Docker or a registry.
//
// The archive holds oci-layout, index.json and blobs/sha256/ (a gzipped layer,
// the image config and the manifest). index.json names the manifest with both
// org.opencontainers.image.ref.name (the tag) and io.containerd.image.name (the
// full reference), so that
//
//	ctr -n k8s.io images import OUT.tar
//
// stores the image under its full name, where the CRI finds it. The output is
// reproducible: every file is owned by 0:0 and dated at the Unix epoch, so the
// same rootfs always gives the same manifest digest. mkimage prints that digest
// on stdout, which lets callers skip an import when the image is already there.
//
// Usage:
//
//	mkimage -rootfs DIR -name REF -o OUT.tar [-entrypoint ARG]... [-cmd ARG]... [-env K=V]... [-workdir DIR] [-user USER]
//
// -entrypoint and -cmd may be repeated; each occurrence adds one argument.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
)

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, " ") }

func (l *stringList) Set(v string) error {
	*l = append(*l, v)
	return nil
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "mkimage: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	var (
		spec   Spec
		rootfs string
		out    string
	)
	fs := flag.NewFlagSet("mkimage", flag.ContinueOnError)
	fs.StringVar(&rootfs, "rootfs", "", "root filesystem directory to pack as the only layer (required)")
	fs.StringVar(&spec.Name, "name", "", "full image reference, e.g. docker.io/library/busybox:1.36 (required)")
	fs.StringVar(&out, "o", "", "output OCI image-layout tar (required)")
	fs.Var((*stringList)(&spec.Entrypoint), "entrypoint", "entrypoint argument (repeatable)")
	fs.Var((*stringList)(&spec.Cmd), "cmd", "cmd argument (repeatable)")
	fs.Var((*stringList)(&spec.Env), "env", "environment variable KEY=VALUE (repeatable)")
	fs.StringVar(&spec.WorkingDir, "workdir", "", "working directory")
	fs.StringVar(&spec.User, "user", "", "user to run as")
	fs.StringVar(&spec.Arch, "arch", runtime.GOARCH, "image architecture")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if rootfs == "" || spec.Name == "" || out == "" {
		fs.Usage()
		return fmt.Errorf("-rootfs, -name and -o are required")
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	digest, err := WriteArchive(rootfs, spec, out)
	if err != nil {
		return err
	}
	fmt.Println(digest)
	return nil
}
