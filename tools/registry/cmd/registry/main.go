// Command registry is the CNCF distribution registry
// (github.com/distribution/distribution/v3) at the version pinned in this
// module's go.mod, built for berth's image pull tests.
//
// It is upstream's cmd/registry main with only the drivers the tests use
// (filesystem and inmemory storage, htpasswd auth): the cloud storage
// drivers (azure, gcs, s3) would triple the module graph and the build time.
package main

import (
	"os"

	"github.com/distribution/distribution/v3/registry"
	_ "github.com/distribution/distribution/v3/registry/auth/htpasswd"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/inmemory"
)

func main() {
	// `registry serve <config.yml>`; cobra prints the error itself.
	if err := registry.RootCmd.Execute(); err != nil {
		os.Exit(1)
	}
}
