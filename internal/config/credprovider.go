package config

import (
	"fmt"

	kubeletconfigv1 "k8s.io/kubelet/config/v1"

	"github.com/berthk8s/berth/internal/images/credprovider"
)

const (
	flagCredProviderConfig = "image-credential-provider-config"
	flagCredProviderBinDir = "image-credential-provider-bin-dir"
)

// credentialProviders loads and validates the image credential provider
// plugins' config (internal/images/credprovider decides what is valid). As
// upstream, giving either flag turns the plugins on, so both must then be
// given; neither gives nil. A problem names the flag it is about.
func credentialProviders(flags *Flags, env Env) (*kubeletconfigv1.CredentialProviderConfig, string, []problem) {
	path, binDir := flags.ImageCredentialProviderConfig, flags.ImageCredentialProviderBinDir
	if path == "" && binDir == "" {
		return nil, "", nil
	}
	var ps []problem
	if path == "" {
		ps = append(ps, flagProblem(flagCredProviderConfig, "must be given with --%s", flagCredProviderBinDir))
	}
	if binDir == "" {
		ps = append(ps, flagProblem(flagCredProviderBinDir, "must be given with --%s", flagCredProviderConfig))
	}
	if len(ps) > 0 {
		return nil, "", ps
	}
	files := credprovider.Files{ReadFile: env.ReadFile, ReadDir: env.ReadDir, Stat: env.Stat}
	cfg, hash, err := credprovider.LoadConfig(files, path)
	if err != nil {
		return nil, "", []problem{flagProblem(flagCredProviderConfig, "%v", err)}
	}
	for _, e := range credprovider.ValidateConfig(files, cfg, binDir) {
		if e.Field == "imageCredentialProviderBinDir" {
			ps = append(ps, flagProblem(flagCredProviderBinDir, "%s", e.ErrorBody()))
			continue
		}
		ps = append(ps, flagProblem(flagCredProviderConfig, "%s", fmt.Sprintf("%q: %v", path, e)))
	}
	if len(ps) > 0 {
		return nil, "", ps
	}
	return cfg, hash, nil
}
