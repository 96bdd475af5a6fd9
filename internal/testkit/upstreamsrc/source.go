package upstreamsrc

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// toolsModule is the module, relative to the repository root, whose go.mod
// pins the upstream versions berth follows.
const toolsModule = "tools/kube"

// Source reads upstream source at the versions tools/kube pins. Every
// method fails (or skips) the test it was made for instead of returning an
// error. A Source caches what it has read; use it from one goroutine.
type Source struct {
	t     testing.TB
	tools string // the tools/kube directory
	fset  *token.FileSet
	// mods maps module paths to their pinned version and directory.
	mods map[string]module
	// pkgs maps import paths to the package's parsed Linux files.
	pkgs map[string][]*file
}

// module is a module's pinned version and its module cache directory.
type module struct{ version, dir string }

// file is one parsed upstream file and the import path of its package,
// which together give the names in it a meaning.
type file struct {
	syntax  *ast.File
	pkgPath string
}

// New returns a Source for t. It finds tools/kube above the working
// directory (a test runs in its package's directory).
func New(t testing.TB) *Source {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatalf("get working directory: %v", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, toolsModule, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("find %s/go.mod above the working directory: not found", toolsModule)
		}
		dir = parent
	}
	return &Source{
		t: t, tools: filepath.Join(dir, toolsModule), fset: token.NewFileSet(),
		mods: map[string]module{}, pkgs: map[string][]*file{},
	}
}

// InCI reports whether missing upstream source must fail tests rather than
// skip them: in CI (CI=true) and in full runs (BERTH_E2E=1, as make test).
func InCI() bool {
	return os.Getenv("CI") == "true" || os.Getenv("BERTH_E2E") == "1"
}

// ModuleDir returns the module cache directory of mod at the version
// tools/kube/go.mod resolves it to.
func (s *Source) ModuleDir(mod string) string {
	s.t.Helper()
	return s.module(mod).dir
}

// Version returns the version of mod that tools/kube/go.mod resolves, as
// long as the module is in the cache.
func (s *Source) Version(mod string) string {
	s.t.Helper()
	return s.module(mod).version
}

// BerthVersion returns the version of mod that berth's own go.mod
// resolves: what berth builds against, to compare with Version.
func (s *Source) BerthVersion(mod string) string {
	s.t.Helper()
	version, _, err := goListModule(filepath.Dir(s.tools), mod)
	if err != nil {
		s.t.Fatalf("find the version of %s in berth's go.mod: %v", mod, err)
	}
	return version
}

// goListModule asks the go command, run in dir, for the version and the
// module cache directory of mod, offline: it reads dir's go.mod (replace
// directives included) and never downloads.
func goListModule(dir, mod string) (version, modDir string, err error) {
	cmd := exec.Command(goCommand(), "list", "-m", "-f", "{{if .Replace}}{{.Replace.Version}}{{else}}{{.Version}}{{end}}\t{{.Dir}}", mod)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOPROXY=off", "GOFLAGS=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	version, modDir, _ = strings.Cut(strings.TrimSpace(string(out)), "\t")
	if err != nil {
		if detail := strings.TrimSpace(stderr.String()); detail != "" {
			err = errors.New(detail)
		}
		return version, modDir, err
	}
	return version, modDir, nil
}

// module finds mod as tools/kube/go.mod pins it; a module missing from
// the cache fails the test in CI and skips it elsewhere.
func (s *Source) module(mod string) module {
	s.t.Helper()
	if m, ok := s.mods[mod]; ok {
		return m
	}
	version, dir, err := goListModule(s.tools, mod)
	if err != nil || dir == "" {
		detail := "not downloaded"
		if err != nil {
			detail = err.Error()
		}
		msg := fmt.Sprintf("upstream module %s (pinned by %s/go.mod) is not in the module cache (%s); "+
			"fetch it with: cd %s && go mod download %s", strings.TrimSpace(mod+" "+version), toolsModule, detail, toolsModule, mod)
		if InCI() {
			s.t.Fatal(msg)
		}
		s.t.Skip(msg)
	}
	m := module{version: version, dir: dir}
	s.mods[mod] = m
	return m
}

// goCommand is the go command: $GO (the Makefile exports it), else go on
// PATH (go test puts its own first).
func goCommand() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	return "go"
}

// modulePath returns the module an upstream import path belongs to:
// k8s.io/<name> for Kubernetes and its staging modules, the first three
// elements elsewhere (github.com/owner/repo).
func modulePath(importPath string) string {
	parts := strings.Split(importPath, "/")
	n := 3
	if parts[0] == "k8s.io" {
		n = 2
	}
	if len(parts) < n {
		return importPath
	}
	return strings.Join(parts[:n], "/")
}

// packageDir returns the directory of an upstream package.
func (s *Source) packageDir(importPath string) string {
	s.t.Helper()
	mod := modulePath(importPath)
	return filepath.Join(s.ModuleDir(mod), filepath.FromSlash(strings.TrimPrefix(importPath, mod)))
}

// pkg parses the package's non-test files that a Linux build compiles.
func (s *Source) pkg(importPath string) []*file {
	s.t.Helper()
	if files, ok := s.pkgs[importPath]; ok {
		return files
	}
	dir := s.packageDir(importPath)
	entries, err := os.ReadDir(dir)
	if err != nil {
		s.t.Fatalf("read upstream package %s: %v (did upstream move it? update the test)", importPath, err)
	}
	bctx := build.Default
	bctx.GOOS = "linux"
	var files []*file
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		if ok, err := bctx.MatchFile(dir, name); err != nil || !ok {
			continue
		}
		f, err := parser.ParseFile(s.fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			s.t.Fatalf("parse upstream file %s: %v", name, err)
		}
		files = append(files, &file{syntax: f, pkgPath: importPath})
	}
	sort.Slice(files, func(i, j int) bool {
		return s.fset.File(files[i].syntax.Pos()).Name() < s.fset.File(files[j].syntax.Pos()).Name()
	})
	s.pkgs[importPath] = files
	return files
}

// Value returns the value of the package-level constant or variable name
// of the upstream package importPath, from the files a Linux build
// compiles. Its names resolve in the file that declares it.
func (s *Source) Value(importPath, name string) Node {
	s.t.Helper()
	for _, f := range s.pkg(importPath) {
		for _, d := range f.syntax.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || (gd.Tok != token.CONST && gd.Tok != token.VAR) {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if id.Name != name {
						continue
					}
					if i >= len(vs.Values) {
						s.t.Fatalf("upstream %s.%s has no explicit value (iota?): read it another way", importPath, name)
					}
					return Node{Node: vs.Values[i], s: s, f: f}
				}
			}
		}
	}
	s.t.Fatalf("upstream %s has no constant or variable %s (renamed or moved? update the test)", importPath, name)
	return Node{}
}

// Files returns the files of the upstream package importPath that a Linux
// build compiles, in name order.
func (s *Source) Files(importPath string) []Node {
	s.t.Helper()
	var out []Node
	for _, f := range s.pkg(importPath) {
		out = append(out, Node{Node: f.syntax, s: s, f: f})
	}
	return out
}

// Func returns the declaration of the function or method name of the
// upstream package importPath.
func (s *Source) Func(importPath, name string) Node {
	s.t.Helper()
	for _, f := range s.pkg(importPath) {
		for _, d := range f.syntax.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Name == name {
				return Node{Node: fd, s: s, f: f}
			}
		}
	}
	s.t.Fatalf("upstream %s has no function %s (renamed or moved? update the test)", importPath, name)
	return Node{}
}

// importPath returns the import path a file refers to by name, as in
// name.Const.
func (s *Source) importPath(f *file, name string) (string, bool) {
	for _, imp := range f.syntax.Imports {
		p := strings.Trim(imp.Path.Value, `"`)
		if imp.Name != nil {
			if imp.Name.Name == name {
				return p, true
			}
			continue
		}
		if path.Base(p) == name {
			return p, true
		}
	}
	// An import whose package name is not its last element.
	for _, imp := range f.syntax.Imports {
		p := strings.Trim(imp.Path.Value, `"`)
		if imp.Name != nil || !strings.HasPrefix(p, "k8s.io/") {
			continue
		}
		if files := s.pkg(p); len(files) > 0 && files[0].syntax.Name.Name == name {
			return p, true
		}
	}
	return "", false
}

// OptionLevels returns the policy options of a resource manager's upstream
// package (importPath), each with its maturity ("alpha", "beta" or
// "stable"), from the package's alphaOptions, betaOptions and
// stableOptions variables (sets.New calls of the option names): the
// convention of upstream's cpumanager and topologymanager policy_options.go.
func (s *Source) OptionLevels(importPath string) map[string]string {
	s.t.Helper()
	out := map[string]string{}
	for name, level := range map[string]string{"alphaOptions": "alpha", "betaOptions": "beta", "stableOptions": "stable"} {
		call := s.Value(importPath, name)
		ce, ok := call.Node.(*ast.CallExpr)
		if !ok {
			s.t.Fatalf("upstream %s.%s is not a sets.New call", importPath, name)
		}
		for i := range ce.Args {
			out[call.Arg(i).AsString()] = level
		}
	}
	return out
}
