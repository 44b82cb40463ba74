// Package configs holds the configuration files shipped inside the kvserver
// binary: today only kvserver.yaml, the built-in defaults.
//
// It is for getting at those bytes. It is not for loading, merging or
// validating settings: that is package config, which reads DefaultYAML as
// its lowest layer.
package configs

import _ "embed"

// DefaultYAML is kvserver.yaml, the documented default value of every
// setting. Treat it as read-only: package config parses it on every Load.
//
//go:embed kvserver.yaml
var DefaultYAML []byte
