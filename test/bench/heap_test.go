package bench

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// A heap profile as /debug/pprof/heap?debug=1 serves it, cut short.
const heapText = `heap profile: 3: 3145728 [10: 5242880] @ heap/1048576
1: 2097152 [1: 2097152] @ 0x1 0x2
#	0x1	k8s.io/client-go/tools/cache.(*threadSafeMap).Add+0x40	/src/cache/thread_safe_store.go:80
#	0x2	k8s.io/client-go/tools/cache.(*Reflector).watch+0x10	/src/cache/reflector.go:500

1: 1048576 [4: 2097152] @ 0x3
#	0x3	bytes.growSlice+0x8	/go/src/bytes/buffer.go:249

1: 1048576 [5: 1048576] @ 0x4 0x5
#	0x4	k8s.io/client-go/tools/cache.(*threadSafeMap).Add+0x90	/src/cache/thread_safe_store.go:82
#	0x5	main.main+0x1	/src/main.go:1

0: 0 [0: 0] @ 0x6
#	0x6	runtime.malg+0x1	/go/src/runtime/proc.go:1


# runtime.MemStats
# Alloc = 4000000
# HeapInuse = 6291456
# Stack = 1 / 2
`

func TestParseHeapText(t *testing.T) {
	got, err := parseHeapText(strings.NewReader(heapText), 2)
	if err != nil {
		t.Fatal(err)
	}
	// rate 524288: a 2 MiB object stands for 2 MiB/(1-e^-4), a 1 MiB one
	// for 1 MiB/(1-e^-2); flat by leaf function.
	mib := float64(1 << 20)
	want := HeapProfile{HeapInuse: 6291456, Top: []HeapEntry{
		{Func: "k8s.io/client-go/tools/cache.(*threadSafeMap).Add", Bytes: 2*mib/(1-math.Exp(-4)) + mib/(1-math.Exp(-2))},
		{Func: "bytes.growSlice", Bytes: mib / (1 - math.Exp(-2))},
	}}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(1e-9, 0)); diff != "" {
		t.Errorf("parseHeapText (-want +got):\n%s", diff)
	}
}

func TestParseHeapTextRefuses(t *testing.T) {
	for name, text := range map[string]string{
		"not a heap profile": "goroutine profile: total 3\n",
		"no rate":            "heap profile: 1: 2 [3: 4]\n",
		"bad record":         "heap profile: 1: 2 [3: 4] @ heap/1048576\nx @ 0x1\n",
	} {
		if _, err := parseHeapText(strings.NewReader(text), 5); err == nil {
			t.Errorf("%s: parseHeapText accepts %q", name, text)
		}
	}
}
