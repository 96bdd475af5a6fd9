package config

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/spf13/pflag"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// maxFlagName bounds the flag names CheckArgs compares: longer ones are
// reported without a suggestion (edit distance is quadratic).
const maxFlagName = 80

// removedFlags are well-known flags the kubelet no longer registers, each
// with what became of it. Upstream keeps no such list; these are the ones
// people still pass.
func removedFlags() map[string]string {
	const dockershim = "removed upstream in v1.24 with dockershim: networking is the CRI runtime's job"
	const klogFlag = "removed upstream in v1.26 with klog's flags: use -v, or logging in --config"
	const cloud = "removed upstream with the in-tree cloud providers: use an external cloud provider"
	removed := map[string]string{
		"container-runtime":                      "removed upstream in v1.27: the runtime is always a CRI one, give --container-runtime-endpoint",
		"docker-endpoint":                        dockershim,
		"image-pull-progress-deadline":           dockershim,
		"experimental-dockershim-root-directory": dockershim,
		"network-plugin":                         dockershim,
		"network-plugin-mtu":                     dockershim,
		"cni-bin-dir":                            dockershim,
		"cni-conf-dir":                           dockershim,
		"cni-cache-dir":                          dockershim,
		"non-masquerade-cidr":                    dockershim,
		"dynamic-config-dir":                     "removed upstream in v1.24 with dynamic kubelet configuration: use --config and --config-dir",
		"cloud-config":                           cloud,
		"azure-container-registry-config":        cloud + " and --image-credential-provider-config",
		"logtostderr":                            klogFlag,
		"alsologtostderr":                        klogFlag,
		"log-dir":                                klogFlag,
		"log-file":                               klogFlag,
		"log-file-max-size":                      klogFlag,
		"log-backtrace-at":                       klogFlag,
		"one-output":                             klogFlag,
		"skip-headers":                           klogFlag,
		"skip-log-headers":                       klogFlag,
		"stderrthreshold":                        klogFlag,
		"add-dir-header":                         klogFlag,
		"register-schedulable":                   "removed upstream: use --register-with-taints",
		"keep-terminated-pod-volumes":            "removed upstream",
		"master-service-namespace":               "removed upstream",
		"experimental-check-node-capabilities-before-mount": "removed upstream",
	}
	for _, name := range removedCadvisorFlags() {
		removed[name] = "removed upstream in v1.37 with cAdvisor's deprecated flags (only --housekeeping-interval is kept)"
	}
	return removed
}

// removedCadvisorFlags are the cAdvisor flags the v1.37 kubelet stopped
// registering (github.com/google/cadvisor/lib cadvisorflags.Deprecated,
// pinned by TestRemovedCadvisorFlagsMatchUpstream), as the kubelet's
// flag set spells them (underscores become dashes).
func removedCadvisorFlags() []string {
	return []string{
		"application-metrics-count-limit", "boot-id-file", "container-hints", "containerd",
		"enable-load-reader", "event-storage-age-limit", "event-storage-event-limit",
		"global-housekeeping-interval", "log-cadvisor-usage", "machine-id-file",
		"storage-driver-user", "storage-driver-password", "storage-driver-host", "storage-driver-db",
		"storage-driver-table", "storage-driver-secure", "storage-driver-buffer-duration",
		"containerd-namespace",
	}
}

// CheckArgs reports every flag in args that fs does not know, in one
// error: for each, why it was removed upstream, or the nearest known flag
// and, where one matches, the KubeletConfiguration field to set instead.
// It reads args the way pflag does (up to "--"; a known flag that takes a
// value and has no "=" consumes the next argument) and returns nil when all
// flags are known, leaving value errors to the parser.
func CheckArgs(fs *pflag.FlagSet, args []string) error {
	var unknown []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		name, hasValue := flagName(a)
		var fl *pflag.Flag
		if strings.HasPrefix(a, "--") {
			fl = fs.Lookup(name)
		} else {
			fl = fs.ShorthandLookup(name)
		}
		if fl == nil {
			unknown = append(unknown, describeUnknown(fs, a, name))
			continue
		}
		if !hasValue && fl.NoOptDefVal == "" {
			i++ // the value
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	return fmt.Errorf("unknown flags (%d): %s", len(unknown), strings.Join(unknown, "; "))
}

// flagName returns the name in "--name[=v]" (normalized as pflag does:
// "_" is "-") or the first shorthand letter of "-abc", and whether the
// argument carries its value.
func flagName(arg string) (string, bool) {
	if rest, ok := strings.CutPrefix(arg, "--"); ok {
		name, _, hasValue := strings.Cut(rest, "=")
		return strings.ReplaceAll(name, "_", "-"), hasValue
	}
	return arg[1:2], len(arg) > 2
}

func describeUnknown(fs *pflag.FlagSet, arg, name string) string {
	shown, _, _ := strings.Cut(arg, "=")
	if len(shown) > maxFlagName {
		return shown[:maxFlagName] + "..."
	}
	if why, ok := removedFlags()[name]; ok {
		return fmt.Sprintf("%s (%s)", shown, why)
	}
	var hints []string
	if field := matchingField(name); field != "" {
		hints = append(hints, fmt.Sprintf("set %s in --config", field))
	}
	if near := nearestFlag(fs, name); near != "" {
		hint := "did you mean --" + near
		for _, c := range configFlags() {
			if c.Name == near {
				hint += fmt.Sprintf(" (KubeletConfiguration %s)", c.Field)
			}
		}
		hints = append(hints, hint+"?")
	}
	if len(hints) == 0 {
		return shown
	}
	return fmt.Sprintf("%s (%s)", shown, strings.Join(hints, "; "))
}

// matchingField returns the top-level KubeletConfiguration field whose JSON
// name is the flag name without dashes ("node-status-report-frequency" is
// nodeStatusReportFrequency), or "".
func matchingField(name string) string {
	want := strings.ReplaceAll(name, "-", "")
	t := reflect.TypeOf(kubeletconfigv1beta1.KubeletConfiguration{})
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.Anonymous && strings.EqualFold(jsonName(f), want) {
			return jsonName(f)
		}
	}
	return ""
}

// nearestFlag returns the known flag closest to name by edit distance,
// when it is close enough to be a likely typo, or "".
func nearestFlag(fs *pflag.FlagSet, name string) string {
	best, bestDist := "", len(name)/3+1
	var names []string
	fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	sort.Strings(names)
	for _, n := range names {
		if d := editDistance(name, n); d < bestDist {
			best, bestDist = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b (bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
