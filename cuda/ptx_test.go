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

// TestDequantIsExactFloat32 pins down the float arithmetic of the fused
// dequantise-scatter: codec.Decode computes float32(code)*scale as one
// rounded IEEE product and keeps subnormals, so the kernel must multiply
// with mul.rn.f32 and must not contract into an FMA or flush subnormals,
// or the GPU's bytes would differ from the CPU's.
func TestDequantIsExactFloat32(t *testing.T) {
	start := strings.Index(PTX, ".visible .entry "+KernelDequantScatterInt8+"(")
	if start < 0 {
		t.Fatalf("no %s in PTX", KernelDequantScatterInt8)
	}
	body := PTX[start:]
	if end := strings.Index(body[1:], ".visible .entry "); end >= 0 {
		body = body[:end+1]
	}
	if !strings.Contains(body, "mul.rn.f32") {
		t.Error("dequant kernel has no mul.rn.f32")
	}
	for _, bad := range []string{"fma.", ".ftz"} {
		if strings.Contains(body, bad) {
			t.Errorf("dequant kernel uses %s", bad)
		}
	}
	for _, op := range []string{"ld.global.v4.f32", "st.v4.u32"} {
		if !strings.Contains(body, op) {
			t.Errorf("dequant kernel has no %s (wide path lost)", op)
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
