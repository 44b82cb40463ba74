// Package config builds kvserver's settings, once, at start.
//
// Load layers, in rising priority, the defaults embedded from
// configs/kvserver.yaml, an optional YAML file named by --config, the
// KVSERVER_* environment variables and the command-line flags, and returns
// a validated Config. The package also parses and prints sizes the way
// Redis does ("512mb", "1.50G") and reads the machine's physical memory.
//
// It is not for changing settings while the server runs (there is no
// CONFIG SET support or file watching here), and it keeps no state: every
// Load uses its own viper instance and flag set, so tests may call it in
// parallel. It does not create Dir or open ports; it only checks that the
// values are possible.
package config
