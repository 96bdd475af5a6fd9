package credprovider

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kubeletconfigv1 "k8s.io/kubelet/config/v1"
	kubeletconfigv1alpha1 "k8s.io/kubelet/config/v1alpha1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	credentialproviderv1 "k8s.io/kubelet/pkg/apis/credentialprovider/v1"
	credentialproviderv1alpha1 "k8s.io/kubelet/pkg/apis/credentialprovider/v1alpha1"
	credentialproviderv1beta1 "k8s.io/kubelet/pkg/apis/credentialprovider/v1beta1"
	"sigs.k8s.io/yaml"
)

// configKind is the kind of a credential provider config file.
const configKind = "CredentialProviderConfig"

// configVersions are the kubelet.config.k8s.io versions upstream v1.37
// still decodes a CredentialProviderConfig from, each with the type that
// decodes it strictly (v1beta1 and v1alpha1 have no tokenAttributes).
func configVersions() map[string]func() any {
	return map[string]func() any{
		kubeletconfigv1.SchemeGroupVersion.String():       func() any { return &kubeletconfigv1.CredentialProviderConfig{} },
		kubeletconfigv1beta1.SchemeGroupVersion.String():  func() any { return &kubeletconfigv1beta1.CredentialProviderConfig{} },
		kubeletconfigv1alpha1.SchemeGroupVersion.String(): func() any { return &kubeletconfigv1alpha1.CredentialProviderConfig{} },
	}
}

// execAPIVersions are the credentialprovider.kubelet.k8s.io versions a
// provider's apiVersion may name.
func execAPIVersions() []string {
	return []string{
		credentialproviderv1.SchemeGroupVersion.String(),
		credentialproviderv1alpha1.SchemeGroupVersion.String(),
		credentialproviderv1beta1.SchemeGroupVersion.String(),
	}
}

// Files is how LoadConfig and ValidateConfig read the file system;
// internal/config passes its Env, tests their own.
type Files struct {
	ReadFile func(name string) ([]byte, error)
	ReadDir  func(name string) ([]fs.DirEntry, error)
	Stat     func(name string) (fs.FileInfo, error)
}

// LoadConfig reads the CredentialProviderConfig at path, as upstream's
// readCredentialProviderConfig: a file, or a directory whose *.json,
// *.yaml and *.yml files are decoded in lexical order and their providers
// merged (a name given twice is an error). Every version is returned as
// the v1 type. The hash is upstream's: "sha256:<hex>" over each file's
// length (8 bytes, big-endian) and content, in order, which
// kubelet_credential_provider_config_info reports.
func LoadConfig(files Files, path string) (*kubeletconfigv1.CredentialProviderConfig, string, error) {
	if path == "" {
		return nil, "", errors.New("credential provider config path is empty")
	}
	names, err := configFiles(files, path)
	if err != nil {
		return nil, "", err
	}
	merged := &kubeletconfigv1.CredentialProviderConfig{
		TypeMeta: metav1.TypeMeta{APIVersion: kubeletconfigv1.SchemeGroupVersion.String(), Kind: configKind},
	}
	seen := sets.New[string]()
	hash := sha256.New()
	for _, name := range names {
		data, err := files.ReadFile(name)
		if err != nil {
			return nil, "", fmt.Errorf("read credential provider config %q: %w", name, err)
		}
		hash.Write(binary.BigEndian.AppendUint64(nil, uint64(len(data))))
		hash.Write(data)
		cfg, err := decodeConfig(data)
		if err != nil {
			return nil, "", fmt.Errorf("decode credential provider config %q: %w", name, err)
		}
		for _, p := range cfg.Providers {
			if seen.Has(p.Name) {
				return nil, "", fmt.Errorf("decode credential provider config %q: duplicate provider name %q", name, p.Name)
			}
			seen.Insert(p.Name)
			merged.Providers = append(merged.Providers, p)
		}
	}
	return merged, fmt.Sprintf("sha256:%x", hash.Sum(nil)), nil
}

// configFiles returns path itself, or the config files in the directory
// path in lexical order.
func configFiles(files Files, path string) ([]string, error) {
	fi, err := files.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read credential provider config %q: %w", path, err)
	}
	if !fi.IsDir() {
		return []string{path}, nil
	}
	entries, err := files.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("read credential provider config %q: %w", path, err)
	}
	var names []string
	for _, e := range entries {
		switch filepath.Ext(e.Name()) {
		case ".json", ".yaml", ".yml":
			if !e.IsDir() {
				names = append(names, filepath.Join(path, e.Name()))
			}
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("read credential provider config %q: no configuration files found in directory", path)
	}
	slices.Sort(names)
	return names, nil
}

// decodeConfig decodes one file (YAML or JSON) strictly: unknown and
// duplicate fields are errors, as with upstream's strict codec.
func decodeConfig(data []byte) (*kubeletconfigv1.CredentialProviderConfig, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(data, &tm); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	if tm.Kind != configKind {
		return nil, fmt.Errorf("kind is %q, want %q", tm.Kind, configKind)
	}
	newObj, ok := configVersions()[tm.APIVersion]
	if !ok {
		return nil, fmt.Errorf("apiVersion %q is not supported (want one of %s)", tm.APIVersion, strings.Join(sets.List(sets.KeySet(configVersions())), ", "))
	}
	if err := yaml.UnmarshalStrict(data, newObj()); err != nil {
		return nil, fmt.Errorf("decode %s: %w", tm.APIVersion, err)
	}
	// The older versions have the same fields as v1 less tokenAttributes,
	// which the strict decode above has refused.
	var cfg kubeletconfigv1.CredentialProviderConfig
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return nil, fmt.Errorf("decode %s: %w", tm.APIVersion, err)
	}
	return &cfg, nil
}

// ValidateConfig checks cfg as upstream's validateCredentialProviderConfig
// and RegisterCredentialProviderPlugins do: at least one provider; names
// unique, not "." or "..", without "/" or spaces; apiVersion one of the exec
// API's; at least one matchImages entry, each a URL; defaultCacheDuration
// set and not negative; binDir a directory holding an executable file
// named after each provider. tokenAttributes (the service account token
// mode) is refused by name: berth does not implement it.
func ValidateConfig(files Files, cfg *kubeletconfigv1.CredentialProviderConfig, binDir string) field.ErrorList {
	var errs field.ErrorList
	providers := field.NewPath("providers")
	if len(cfg.Providers) == 0 {
		errs = append(errs, field.Required(providers, "at least 1 item in plugins is required"))
	}
	binDirErr := checkBinDir(files, binDir)
	if binDirErr != nil {
		errs = append(errs, binDirErr)
	}
	seen := sets.New[string]()
	for i, p := range cfg.Providers {
		path := providers.Index(i)
		errs = append(errs, validateName(path.Child("name"), p.Name, seen)...)
		errs = append(errs, validateProvider(path, p)...)
		if binDirErr == nil && validName(p.Name) {
			if err := checkPluginBinary(files, path.Child("name"), binDir, p.Name); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errs
}

func validateName(path *field.Path, name string, seen sets.Set[string]) field.ErrorList {
	var errs field.ErrorList
	switch {
	case name == "":
		errs = append(errs, field.Required(path, ""))
	case name == "." || name == "..":
		errs = append(errs, field.Invalid(path, name, fmt.Sprintf("provider name cannot be '%s'", name)))
	}
	if strings.Contains(name, "/") {
		errs = append(errs, field.Invalid(path, name, "provider name cannot contain '/'"))
	}
	if strings.Contains(name, " ") {
		errs = append(errs, field.Invalid(path, name, "provider name cannot contain spaces"))
	}
	if seen.Has(name) {
		errs = append(errs, field.Duplicate(path, name))
	}
	seen.Insert(name)
	return errs
}

// validName reports whether name can be a file in the bin directory.
func validName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/ \x00")
}

func validateProvider(path *field.Path, p kubeletconfigv1.CredentialProvider) field.ErrorList {
	var errs field.ErrorList
	switch {
	case p.APIVersion == "":
		errs = append(errs, field.Required(path.Child("apiVersion"), ""))
	case !slices.Contains(execAPIVersions(), p.APIVersion):
		errs = append(errs, field.NotSupported(path.Child("apiVersion"), p.APIVersion, execAPIVersions()))
	}
	if len(p.MatchImages) == 0 {
		errs = append(errs, field.Required(path.Child("matchImages"), "at least 1 item in matchImages is required"))
	}
	for j, m := range p.MatchImages {
		if _, err := parseSchemeless(m); err != nil {
			errs = append(errs, field.Invalid(path.Child("matchImages").Index(j), m, "match image is invalid: "+err.Error()))
		}
	}
	switch d := p.DefaultCacheDuration; {
	case d == nil:
		errs = append(errs, field.Required(path.Child("defaultCacheDuration"), ""))
	case d.Duration < 0:
		errs = append(errs, field.Invalid(path.Child("defaultCacheDuration"), d.Duration.String(), "must be greater than or equal to 0"))
	}
	if p.TokenAttributes != nil {
		errs = append(errs, field.Forbidden(path.Child("tokenAttributes"),
			"the service account token mode of credential provider plugins is not supported by berth"))
	}
	return errs
}

// checkBinDir checks that binDir is a directory, as upstream does before
// it reads the config.
func checkBinDir(files Files, binDir string) *field.Error {
	path := field.NewPath("imageCredentialProviderBinDir")
	if binDir == "" {
		return field.Required(path, "the directory of the credential provider plugins")
	}
	fi, err := files.Stat(binDir)
	switch {
	case err != nil:
		return field.Invalid(path, binDir, fmt.Sprintf("plugin binary directory: %v", err))
	case !fi.IsDir():
		return field.Invalid(path, binDir, "plugin binary directory is not a directory")
	}
	return nil
}

// checkPluginBinary checks that binDir/name is an executable file, as
// upstream's exec.LookPath does (following symlinks).
func checkPluginBinary(files Files, path *field.Path, binDir, name string) *field.Error {
	bin := filepath.Join(binDir, name)
	fi, err := files.Stat(bin)
	switch {
	case err != nil:
		return field.Invalid(path, name, fmt.Sprintf("plugin binary executable %s: %v", bin, err))
	case fi.IsDir() || fi.Mode().Perm()&0o111 == 0:
		return field.Invalid(path, name, fmt.Sprintf("plugin binary %s is not an executable file", bin))
	}
	return nil
}
