package cluster

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// mainModule is the module path of berth's repository, how repoRoot knows
// it has found it.
const mainModule = "github.com/berthk8s/berth"

// Binaries returns the names of the binaries a cluster needs in its BinDir.
func Binaries() []string {
	return []string{Etcd, APIServer, ControllerManager, Scheduler, Kubectl}
}

// ResolveBinDir returns dir if set, else $BERTH_TOOLS_BIN if set, else
// <repo>/_output/tools/bin for the berth repository holding the working
// directory.
func ResolveBinDir(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	if env := os.Getenv(BinDirEnv); env != "" {
		return env, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find the control plane binaries: %w", err)
	}
	root, err := repoRoot(wd)
	if err != nil {
		return "", fmt.Errorf("find the control plane binaries: %w (set %s)", err, BinDirEnv)
	}
	return filepath.Join(root, "_output", "tools", "bin"), nil
}

// CheckBinaries reports which binaries are missing from dir, those of
// Binaries and the optional ones named in extra, and how to build them.
func CheckBinaries(dir string, extra ...string) error {
	var missing []string
	for _, name := range append(Binaries(), extra...) {
		if info, err := os.Stat(filepath.Join(dir, name)); err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("control plane binaries missing in %s: %s; run `make cluster-tools` (or set %s)",
			dir, strings.Join(missing, ", "), BinDirEnv)
	}
	return nil
}

// repoRoot walks up from dir to the directory whose go.mod declares berth's
// main module.
func repoRoot(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		if modulePath(filepath.Join(d, "go.mod")) == mainModule {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("no berth repository above " + dir)
		}
	}
}

// modulePath returns the module path a go.mod declares, or "".
func modulePath(goMod string) string {
	f, err := os.Open(goMod)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}
