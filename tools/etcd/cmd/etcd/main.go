// Command etcd is the upstream etcd server (go.etcd.io/etcd/server/v3) at
// the version pinned in this module's go.mod, built for berth's development
// cluster.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
