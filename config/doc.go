// Package config builds kvserver's settings, once, at start, from one
// settings table.
//
// The table (settings.go, Settings) has one row per setting, in the manner
// of Redis's static_configs[]: name, kind, default, bounds, whether CONFIG
// SET may change it at run time, how CONFIG REWRITE treats it, and a doc
// line. The flags, YAML keys, KVSERVER_* variables, defaults and bounds
// checks of Load, the CONFIG parameters of package resp, the README's flag
// table (FlagTable) and configs/kvserver.yaml all follow from it; tests fail
// when the README or the YAML file disagree with it. Adding a setting is
// one row and the Config field it fills.
//
// Load layers, in rising priority, the table's defaults, an optional YAML
// file named by --config, the KVSERVER_* environment variables and the
// command-line flags, and returns a validated Config. The package also
// parses and prints sizes the way Redis does ("512mb", "1.50G") and reads
// the machine's physical memory.
//
// It holds no run-time state: the running server owns the values CONFIG
// SET changes. Every Load uses its own viper instance and flag set, so
// tests may call it in parallel. It does not create Dir or open ports; it
// only checks that the values are possible.
package config
