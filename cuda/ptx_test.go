package cuda

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestPTXDeclaresEveryKernel(t *testing.T) {
	for _, name := range Kernels() {
		if !strings.Contains(PTX, ".visible .entry "+name+"(") {
			t.Errorf("embedded PTX does not declare kernel %q", name)
		}
	}
}

func TestPTXTargetsArch(t *testing.T) {
	if !strings.Contains(PTX, "\n.target "+Arch+"\n") {
		t.Errorf("embedded PTX does not target %s", Arch)
	}
	if !strings.Contains(PTX, "\n.address_size 64\n") {
		t.Errorf("embedded PTX is not 64-bit")
	}
}

// TestPTXUsesWideCopies pins down that the aligned path copies rows as
// 16-byte vectors; a change that silently falls back to scalar copies would
// cost most of the kernels' bandwidth.
func TestPTXUsesWideCopies(t *testing.T) {
	for _, op := range []string{"ld.global.v4.u32", "st.global.v4.u32"} {
		if !strings.Contains(PTX, op) {
			t.Errorf("embedded PTX has no %s", op)
		}
	}
}

// generateCommand returns the argv of the //go:generate line in gen.go.
func generateCommand(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("gen.go")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "//go:generate "); ok {
			return strings.Fields(rest)
		}
	}
	t.Fatal("gen.go has no //go:generate line")
	return nil
}

// TestPTXIsCurrent recompiles kvcopy.cu with the go:generate command and
// checks that the result equals the embedded PTX, so that an edit to the
// source without `go generate ./cuda` fails CI.
func TestPTXIsCurrent(t *testing.T) {
	argv := generateCommand(t)
	if _, err := exec.LookPath(argv[0]); err != nil {
		t.Skipf("%s not on PATH, cannot check that kvcopy.ptx matches kvcopy.cu (apt-get install clang-16)", argv[0])
	}
	out := filepath.Join(t.TempDir(), "kvcopy.ptx")
	replaced := false
	for i := 0; i+1 < len(argv); i++ {
		if argv[i] == "-o" {
			argv[i+1] = out
			replaced = true
		}
	}
	if !replaced {
		t.Fatalf("go:generate line has no -o: %q", argv)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, b)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != PTX {
		t.Errorf("kvcopy.ptx is stale: run `go generate ./cuda` and commit the result")
	}
}
