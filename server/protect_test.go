package server

import (
	"testing"

	"github.com/kvserver/kvserver/commands"
)

// TestEveryProtectionNamesAReadableSetting checks that the setting each
// protection names is one protectedAllowed can read (configState), so that
// a protected command never finds no setting to ask.
func TestEveryProtectionNamesAReadableSetting(t *testing.T) {
	for _, p := range []commands.Protection{commands.ProtectedByDebug, commands.ProtectedByModule} {
		if acc, ok := configState[p.Setting()]; !ok || acc.get == nil {
			t.Errorf("protection %d names %q, which configState cannot read", p, p.Setting())
		}
	}
}
