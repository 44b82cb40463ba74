// Package config builds kvserver's settings, once, at start, from one
// settings table.
//
// The table (settings.go, Settings) has one row per setting, in the manner
// of Redis's static_configs[]: name, kind, default, bounds, whether CONFIG
// SET may change it at run time, how CONFIG REWRITE treats it, and a doc
// line. The flags, YAML keys, KVSERVER_* variables, defaults and bounds
// checks of Load, the CONFIG parameters (package server), the README's flag
// table (FlagTable) and configs/kvserver.yaml (DefaultYAML) all follow from
// it: go generate ./config writes the two files, and tests fail when they
// differ from what the table renders.
//
// Adding a setting is adding its row. A row without a Config field is read
// by name (Config.Int, String, Bool), and a running server keeps such
// settings in a Live copy that CONFIG GET, SET and REWRITE handle with no
// code of the setting's own; only the settings wired into their owners at
// start (ports, the engine's bounds, TLS files) have fields.
//
// Load layers, in rising priority, the table's defaults, an optional YAML
// file named by --config, the KVSERVER_* environment variables and the
// command-line flags, and returns a validated Config. The package also
// parses and prints sizes the way Redis does ("512mb", "1.50G") and reads
// the machine's physical memory.
//
// Apart from Live, which a server creates, it holds no run-time state. Every Load uses its own viper instance and flag set, so
// tests may call it in parallel. It does not create Dir or open ports; it
// only checks that the values are possible.
package config
