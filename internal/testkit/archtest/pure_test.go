package archtest

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// effects are imports no pure file may have: RPC, API clients, HTTP,
// processes, upstream's kubelet. (k8s.io/api pulls net/http in
// transitively; the rules are about what a file imports itself.)
var effects = []string{"google.golang.org/grpc", "k8s.io/client-go", "net/http", "os/exec", "k8s.io/kubernetes"}

// rule says which files of a package are pure and what else they must not
// import. Files nil means every non-test file of the package.
type rule struct {
	dir   string
	files []string
	also  []string
}

var rules = []rule{
	{dir: "pod/podplan", also: []string{"os", "k8s.io/klog/v2", "math/rand", "math/rand/v2", "k8s.io/utils/clock", "k8s.io/cri-api"}},
	// containerconfig builds CRI configs, so it may import the CRI types
	// that podplan may not.
	{dir: "pod/containerconfig", also: []string{"os", "k8s.io/klog/v2", "math/rand", "math/rand/v2", "k8s.io/utils/clock"}},
	{dir: "pod/podstatus"},
	// The cgroup arithmetic containers and pod cgroups share: plain values
	// only, not even the CRI or API types.
	{dir: "podkit/cgroupmath", also: []string{"os", "k8s.io/klog/v2", "math/rand", "math/rand/v2", "k8s.io/utils/clock", "k8s.io/cri-api", "k8s.io/api"}},
	// The route by which per-pod state ends: a registry, no effects.
	{dir: "pod/podgone", also: []string{"os", "math/rand", "math/rand/v2", "k8s.io/utils/clock"}},
	{dir: "podkit/podutil", also: []string{"os", "k8s.io/klog/v2", "k8s.io/apimachinery/pkg/util/runtime"}},
	{dir: "pod/pleg", files: []string{"diff.go", "cache.go"}},
	// Admission counts requests with podutil's PodRequests and
	// HeldRequests, over upstream's own pure helper,
	// k8s.io/component-helpers/resource.
	{dir: "pod/admission"},
	// The declared features: k8s.io/component-helpers/nodedeclaredfeatures
	// over berth's gates, version and runtime features, fixed at start.
	{dir: "pod/declaredfeatures", also: []string{"os", "k8s.io/klog/v2", "k8s.io/utils/clock"}},
	{dir: "podkit/downward"},
	{dir: "podkit/expansion"},
	{dir: "podkit/sysctl"},
	{dir: "pod/prober", files: []string{"decide.go"}},
	// berth simulate's application model: annotations in, behaviour out.
	{dir: "sim/appmodel", also: []string{"os", "k8s.io/klog/v2", "math/rand", "math/rand/v2", "k8s.io/utils/clock", "k8s.io/cri-api"}},
	{dir: "cluster/nodestatus", files: []string{"inputs.go", "setters.go", "allocatable.go", "conditions.go", "initial.go", "patch.go"}},
	{dir: "cluster/mirrorpod", files: []string{"plan.go"}},
	{dir: "volumes/objectcache", files: []string{"refs.go"}, also: []string{"k8s.io/klog/v2", "k8s.io/utils/clock"}},
	{dir: "cluster/statussync", files: []string{"plan.go", "merge.go", "patch.go"}},
	{dir: "node/cm", files: []string{"name.go", "resources.go", "config.go"}, also: []string{"os", "k8s.io/klog/v2", "k8s.io/utils/clock"}},
	{dir: "volumes/volume", files: []string{"plugins.go", "payload.go", "downward.go", "token.go", "tmpfs.go", "hostpath.go", "resize.go", "resizestatus.go"}},
	{dir: "volumes/atomicwriter", files: []string{"plan.go"}},
	// What a CSI driver's registration changes in the Node and the
	// CSINode, and which of its versions is spoken; nodeapi.go and
	// handler.go perform it. What a driver is told of a volume and where
	// the volume lives; mounter.go, publish.go and teardown.go perform it.
	{dir: "volumes/csi", files: []string{"nodeinfo.go", "versions.go", "capability.go", "paths.go"}, also: []string{"os", "k8s.io/klog/v2", "k8s.io/utils/clock"}},
	// The eviction manager's decisions; manager.go performs them.
	{dir: "node/eviction", files: []string{"threshold.go", "observe.go", "decide.go", "rank.go", "message.go", "local.go", "choose.go", "admit.go",
		"explain.go", "explaintext.go"},
		also: []string{"os", "k8s.io/utils/clock"}},
	// internal/config loads and validates the plugins' config at load time.
	{dir: "images/credprovider", files: []string{"config.go", "match.go"}, also: []string{"os", "k8s.io/klog/v2", "k8s.io/utils/clock"}},
	{dir: "node/nodeshutdown", files: []string{"plan.go"}, also: []string{"os", "github.com/godbus/dbus/v5", "k8s.io/klog/v2", "k8s.io/utils/clock"}},
	{dir: "node/gc", files: []string{"images.go", "containers.go"}, also: []string{"os", "k8s.io/klog/v2", "k8s.io/utils/clock", "k8s.io/cri-api"}},
	// The user namespace allocator and file format; manager.go keeps them.
	{dir: "node/userns", files: []string{"allocator.go", "file.go", "subids.go"}, also: []string{"os", "k8s.io/klog/v2", "math/rand", "math/rand/v2", "k8s.io/utils/clock", "k8s.io/cri-api"}},
	{dir: "platform/iptables", files: []string{"plan.go"}, also: []string{"os", "k8s.io/klog/v2", "k8s.io/utils/clock", "k8s.io/utils/exec"}},
	{dir: "serve/logquery", files: []string{"query.go", "args.go"}, also: []string{"os", "k8s.io/klog/v2", "k8s.io/utils/clock"}},
	// The topology manager's hints and policies; manager.go admits with them.
	{dir: "node/topology", files: []string{"options.go", "mask.go", "numa.go", "policy.go", "merger.go"}, also: []string{"os", "k8s.io/klog/v2", "k8s.io/utils/clock"}},
	// The memory manager's decisions and checkpoint format; manager.go
	// and state/file.go do the file.
	{dir: "node/memorymanager", files: []string{"policy.go", "reserved.go", "topology.go", "static.go", "hints.go", "allocate.go", "restore.go"},
		also: []string{"os", "k8s.io/klog/v2", "k8s.io/utils/clock", "k8s.io/cri-api"}},
	{dir: "node/memorymanager/state", files: []string{"types.go", "checkpoint.go"}, also: []string{"os", "k8s.io/klog/v2", "k8s.io/utils/clock"}},
	{dir: "node/logrotate", files: []string{"choose.go"}, also: []string{"os", "k8s.io/klog/v2", "k8s.io/utils/clock", "k8s.io/cri-api"}},
}

// TestPureFiles holds the line of STYLE.md: planners take a snapshot and
// return a value; they never perform effects or read the time themselves.
func TestPureFiles(t *testing.T) {
	for _, r := range rules {
		dir := filepath.Join("..", "..", r.dir)
		files := r.files
		if files == nil {
			all, err := filepath.Glob(filepath.Join(dir, "*.go"))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range all {
				if !strings.HasSuffix(f, "_test.go") {
					files = append(files, filepath.Base(f))
				}
			}
		}
		if len(files) == 0 {
			t.Errorf("%s: no files to check", r.dir)
		}
		forbidden := append(append([]string{}, effects...), r.also...)
		for _, name := range files {
			checkFile(t, filepath.Join(dir, name), forbidden)
		}
	}
}

func checkFile(t *testing.T, path string, forbidden []string) {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(src), "time.Now(") {
		t.Errorf("%s reads the clock: the time must come in as an input", path)
	}
	f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		for _, bad := range forbidden {
			if p == bad || strings.HasPrefix(p, bad+"/") {
				t.Errorf("%s imports %s", path, p)
			}
		}
	}
}
