// Package configs holds the configuration files shipped inside the kvserver
// binary: today only kvserver.yaml, the built-in defaults.
//
// It is for getting at those bytes. It is not for loading, merging or
// validating settings: that is package config, whose settings table is the
// source of the defaults; config's tests keep this file equal to it.
package configs

import _ "embed"

// DefaultYAML is kvserver.yaml, the documented default value of every
// setting. Treat it as read-only.
//
//go:embed kvserver.yaml
var DefaultYAML []byte
