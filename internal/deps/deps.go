//go:build tools

// Package deps pins the project's library dependencies while packages are
// being written; it is removed once every dependency has a real importer.
package deps

import (
	_ "github.com/adrg/frontmatter"
	_ "github.com/coreos/go-systemd/v22/daemon"
	_ "github.com/fsnotify/fsnotify"
	_ "github.com/gofrs/flock"
	_ "github.com/google/renameio/v2"
	_ "github.com/rogpeppe/go-internal/testscript"
	_ "github.com/rs/zerolog"
	_ "github.com/santhosh-tekuri/jsonschema/v6"
	_ "github.com/spf13/cobra"
	_ "go.yaml.in/yaml/v3"
	_ "golang.org/x/sync/errgroup"
)
