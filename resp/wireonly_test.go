package resp

import (
	"go/build"
	"strings"
	"testing"
)

// TestRespIsWireFormatOnly keeps the package the wire format: it may not
// import the network, the store, the settings or any other kvserver
// package (listener, clients and commands belong to package server).
func TestRespIsWireFormatOnly(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatalf("read package resp: %v", err)
	}
	if len(pkg.GoFiles) == 0 {
		t.Fatal("package resp has no Go files")
	}
	for _, imp := range pkg.Imports {
		if imp == "net" || strings.HasPrefix(imp, "net/") || imp == "crypto/tls" ||
			strings.HasPrefix(imp, "github.com/kvserver/kvserver/") {
			t.Errorf("package resp imports %s; the wire format must not depend on connections, the engine, config, acl or cluster", imp)
		}
	}
}
