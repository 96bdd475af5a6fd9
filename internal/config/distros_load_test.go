package config

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// rootToken stands for the test's root directory in the corpus files: the
// local paths a distribution writes (/etc/kubernetes/..., the runtime socket)
// point into it.
const rootToken = "$ROOT"

// distroDir is where the corpus lives; one directory per distribution with a
// SOURCE, a cmdline and, under root/, the files the kubelet reads.
const distroDir = "testdata/distros"

// installDistro copies the distribution's root/ into a new temporary
// directory, with rootToken replaced by that directory, creates the stubs
// (files a node holds that the distribution does not write: a CA bundle for
// a ".crt", else a kubeconfig) and the plugins (executables that fail if
// run), and returns the directory.
func installDistro(t *testing.T, d distro) string {
	t.Helper()
	root := t.TempDir()
	src := filepath.Join(distroDir, d.dir, "root")
	err := filepath.WalkDir(src, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return writeDistroFile(filepath.Join(root, rel), strings.ReplaceAll(string(data), rootToken, root))
	})
	if err != nil {
		t.Fatalf("install %s: %v", d.dir, err)
	}
	ca, err := os.ReadFile(filepath.Join("testdata", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, stub := range d.stubs {
		content := string(ca)
		if !strings.HasSuffix(stub, ".crt") {
			content = stubKubeconfig
		}
		if err := writeDistroFile(filepath.Join(root, stub), content); err != nil {
			t.Fatal(err)
		}
	}
	for _, plugin := range d.plugins {
		path := filepath.Join(root, plugin)
		if err := writeDistroFile(path, "#!/bin/sh\nexit 1\n"); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func writeDistroFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o600)
}

// stubKubeconfig stands for the node's credentials (written by TLS
// bootstrap or by the distribution's installer at join time).
const stubKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: default
  cluster:
    server: https://127.0.0.1:6443
    insecure-skip-tls-verify: true
users:
- name: default
  user:
    token: stub
contexts:
- name: default
  context:
    cluster: default
    user: default
current-context: default
`

// distroArgs reads the distribution's command line: lines starting with
// "#" are comments, the rest is split on white space (as systemd splits an
// unquoted $VARIABLE), with rootToken replaced by root.
func distroArgs(t *testing.T, d distro, root string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(distroDir, d.dir, "cmdline"))
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		args = append(args, strings.Fields(strings.ReplaceAll(line, rootToken, root))...)
	}
	return args
}

// loadDistro runs the distribution's command line and files through what
// cmd/berth runs: CheckArgs, the flag set, Load. It returns the flags that
// berth does not know (dropped before parsing, as upstream also refuses
// them) and the fields and flags that block the start (nil: berth starts).
func loadDistro(t *testing.T, d distro) (unknown, blockers []string) {
	t.Helper()
	root := installDistro(t, d)
	args := distroArgs(t, d, root)
	flags := NewFlags()
	fs := pflag.NewFlagSet("berth", pflag.ContinueOnError)
	fs.SetOutput(io.Discard) // deprecation notices
	flags.AddFlags(fs)
	checkErr := CheckArgs(fs, args)
	known := args[:0:0]
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "--") && fs.Lookup(name) == nil {
			if !strings.Contains(a, "=") {
				t.Fatalf("unknown flag %q without =value: this test cannot tell its value from the next argument", a)
			}
			unknown = append(unknown, "--"+name)
			continue
		}
		known = append(known, a)
	}
	if (checkErr != nil) != (len(unknown) > 0) {
		t.Fatalf("CheckArgs(%q) = %v, but the unknown flags are %q", args, checkErr, unknown)
	}
	if err := fs.Parse(known); err != nil {
		t.Fatalf("parse %q: %v", known, err)
	}
	_, err := Load(context.Background(), flags, testEnv("distro-node"))
	if err == nil {
		return unknown, nil
	}
	var verr *ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("Load refused the files themselves (not a field or flag): %v", err)
	}
	t.Logf("%s: %v", d.dir, err)
	return unknown, verr.Fields()
}

// sortedUnion returns the sorted union of lists, without duplicates.
func sortedUnion(lists ...[]string) []string {
	var all []string
	for _, l := range lists {
		all = append(all, l...)
	}
	slices.Sort(all)
	return slices.Compact(all)
}
