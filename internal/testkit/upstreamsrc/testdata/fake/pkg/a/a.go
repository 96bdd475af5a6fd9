package a

import (
	"errors"
	"fmt"
	"sync"

	kconst "k8s.io/fake/pkg/consts"
)

type entry struct {
	name   string
	kernel string
}

const local = "lo" + "cal"

var entries = []entry{
	{name: "plain"},
	{name: local, kernel: kconst.Kernel},
}

var ErrReason = errors.New("SomeReason")

var table = map[string]string{
	"k": kconst.Kernel,
}

var generated = sync.OnceValue(func() []string {
	out := []string{"/a", "/b"}
	for i := range 2 {
		out = append(out, fmt.Sprintf("/cpu%d/x", i))
	}
	return out
})
