package hostsetup

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	utilsysctl "k8s.io/component-helpers/node/util/sysctl"
	"k8s.io/klog/v2"
)

// ProcSys is where the kernel's tunables live.
const ProcSys = "/proc/sys"

// Tunable is one kernel tunable and the value upstream's kubelet requires.
// Name is its path under /proc/sys ("vm/overcommit_memory").
type Tunable struct {
	Name  string
	Value int
}

// KernelTunables returns the tunables upstream's setupKernelTunables
// requires, by name.
func KernelTunables() []Tunable {
	return []Tunable{
		{utilsysctl.KernelPanic, utilsysctl.KernelPanicRebootTimeout},
		{utilsysctl.KernelPanicOnOops, utilsysctl.KernelPanicOnOopsAlways},
		{utilsysctl.RootMaxBytes, utilsysctl.RootMaxBytesSetting},
		{utilsysctl.RootMaxKeys, utilsysctl.RootMaxKeysSetting},
		{utilsysctl.VMOvercommitMemory, utilsysctl.VMOvercommitMemoryAlways},
		{utilsysctl.VMPanicOnOOM, utilsysctl.VMPanicOnOOMInvokeOOMKiller},
	}
}

// Reading is what one tunable was found to be: its value, or why it could
// not be read.
type Reading struct {
	Tunable
	Actual int
	Err    error
}

// Differing returns the readings that are not the required value (an
// unreadable tunable differs), in name order. It is the one decision
// EnsureKernelTunables acts on.
func Differing(readings []Reading) []Reading {
	var out []Reading
	for _, r := range readings {
		if r.Err != nil || r.Actual != r.Value {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// String names the tunable with dots, as sysctl(8) does, and says what it
// is and must be.
func (r Reading) String() string {
	name := strings.ReplaceAll(r.Name, "/", ".")
	if r.Err != nil {
		return fmt.Sprintf("%s: %v (must be %d)", name, r.Err, r.Value)
	}
	return fmt.Sprintf("%s is %d, must be %d", name, r.Actual, r.Value)
}

// EnsureKernelTunables reads the tunables under root (ProcSys outside
// tests). With protect (protectKernelDefaults) it returns an error naming
// every tunable that differs, and changes nothing. Without, it writes the
// required value of each differing tunable, best effort: failures are
// logged and berth runs on. (Upstream's kubelet stops on a failed write
// outside a user namespace; berth, like upstream in one, runs on.)
func EnsureKernelTunables(ctx context.Context, root string, protect bool) error {
	logger := klog.FromContext(ctx)
	differing := Differing(read(root, KernelTunables()))
	if len(differing) == 0 {
		return nil
	}
	if protect {
		msgs := make([]string, len(differing))
		for i, r := range differing {
			msgs[i] = r.String()
		}
		return fmt.Errorf("protectKernelDefaults is set and kernel tunables differ from the kubelet's required values: %s", strings.Join(msgs, "; "))
	}
	for _, r := range differing {
		path := filepath.Join(root, r.Name)
		logger.V(2).Info("Updating kernel tunable", "tunable", r.Name, "expectedValue", r.Value, "actualValue", r.Actual)
		if err := os.WriteFile(path, []byte(strconv.Itoa(r.Value)), 0o640); err != nil {
			logger.Error(err, "Cannot set kernel tunable, running on with the current value", "tunable", r.Name, "expectedValue", r.Value)
		}
	}
	return nil
}

// read reads each tunable under root.
func read(root string, tunables []Tunable) []Reading {
	out := make([]Reading, 0, len(tunables))
	for _, t := range tunables {
		r := Reading{Tunable: t}
		data, err := os.ReadFile(filepath.Join(root, t.Name))
		if err == nil {
			r.Actual, err = strconv.Atoi(strings.TrimSpace(string(data)))
		}
		r.Err = err
		out = append(out, r)
	}
	return out
}
