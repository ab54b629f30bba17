package publicapi

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGoDocNamesNoInternalPackage reads every public package the way go
// doc does (exported declarations, function bodies dropped, unexported
// fields and methods filtered) and fails for each declaration whose code
// refers to an internal package, or whose comment names one.
func TestGoDocNamesNoInternalPackage(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	dirs := publicDirs(t, root)
	require.Contains(t, dirs, filepath.Join(root, "pool"), "the walk must reach the public packages")
	for _, dir := range dirs {
		rel, _ := filepath.Rel(root, dir)
		pkg, internalNames := readDoc(t, dir)
		if pkg == nil {
			continue
		}
		for _, d := range declsOf(pkg) {
			for _, name := range referencedPackages(d.node) {
				if internalNames[name] {
					assert.Failf(t, "go doc names an internal package", "%s: %s refers to %s.", rel, d.name, name)
				}
			}
			assert.NotContains(t, d.doc, "internal/", "%s: %s's comment", rel, d.name)
		}
	}
}

// publicDirs lists the module's directories outside internal/ and testdata.
func publicDirs(t *testing.T, root string) []string {
	var dirs []string
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil || !e.IsDir() {
			return err
		}
		name := e.Name()
		if path != root && (name == "internal" || name == "testdata" || strings.HasPrefix(name, ".")) {
			return filepath.SkipDir
		}
		dirs = append(dirs, path)
		return nil
	})
	require.NoError(t, err)
	return dirs
}

// readDoc parses dir's non-test files into go doc's view of the package,
// with the local names its files give to internal imports; nil for a
// directory without Go files.
func readDoc(t *testing.T, dir string) (*doc.Package, map[string]bool) {
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	fset := token.NewFileSet()
	var files []*ast.File
	internalNames := map[string]bool{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.ParseComments)
		require.NoError(t, err)
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if !strings.Contains(path, "/internal/") {
				continue
			}
			name := filepath.Base(path)
			if imp.Name != nil {
				name = imp.Name.Name
			}
			internalNames[name] = true
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return nil, nil
	}
	pkg, err := doc.NewFromFiles(fset, files, "example.com/"+filepath.Base(dir))
	require.NoError(t, err)
	return pkg, internalNames
}

// decl is one declaration as go doc prints it.
type decl struct {
	name string
	node ast.Node
	doc  string
}

func declsOf(pkg *doc.Package) []decl {
	var out []decl
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			out = append(out, decl{strings.Join(v.Names, ", "), v.Decl, v.Doc})
		}
	}
	funcs := func(fns []*doc.Func) {
		for _, f := range fns {
			out = append(out, decl{f.Name, f.Decl, f.Doc})
		}
	}
	values(pkg.Consts)
	values(pkg.Vars)
	funcs(pkg.Funcs)
	for _, ty := range pkg.Types {
		out = append(out, decl{ty.Name, ty.Decl, ty.Doc})
		values(ty.Consts)
		values(ty.Vars)
		funcs(ty.Funcs)
		funcs(ty.Methods)
	}
	out = append(out, decl{"package " + pkg.Name, &ast.BadExpr{}, pkg.Doc})
	return out
}

// referencedPackages lists the X of every X.Sel in n: the package names a
// declaration refers to (and, harmlessly, field selections in initial
// values).
func referencedPackages(n ast.Node) []string {
	var names []string
	ast.Inspect(n, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok {
				names = append(names, x.Name)
			}
		}
		return true
	})
	return names
}
