package config

import (
	"sync"
	"testing"
)

// TestSettingsReadByNameHaveDefaultsAndLiveValues reads a setting without
// a Config field from the zero Config (its default), from a loaded Config
// and from a Live copy that CONFIG SET changes, while readers run.
func TestSettingsReadByNameHaveDefaultsAndLiveValues(t *testing.T) {
	var zero Config
	if got := zero.Int("max-lease-ms"); got != 60000 {
		t.Errorf("zero Config: max-lease-ms = %d, want the default 60000", got)
	}
	c, err := Load([]string{"--max-lease-ms=500"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Int("max-lease-ms"); got != 500 {
		t.Errorf("loaded: max-lease-ms = %d, want 500", got)
	}
	if got := c.Int("port"); got != 6379 {
		t.Errorf("a setting with a field is read by name too: port = %d", got)
	}
	live := NewLive(c)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				if n := live.Int("max-lease-ms"); n != 500 && n != 700 {
					t.Errorf("reader saw %d", n)
					return
				}
			}
		}
	}()
	live.Set("max-lease-ms", int64(700))
	close(stop)
	wg.Wait()
	if got := live.Text("max-lease-ms"); got != "700" {
		t.Errorf("after Set: %q, want 700", got)
	}
	if got := c.Int("max-lease-ms"); got != 500 {
		t.Errorf("Set changed the Config it started from: %d", got)
	}
	if ReadByName := lookup("max-lease-ms").ReadByName(); !ReadByName {
		t.Error("max-lease-ms has no field, so it is read by name")
	}
	if lookup("port").ReadByName() {
		t.Error("port has a field")
	}
}
