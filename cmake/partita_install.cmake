# Install rules: filled in with the package config.
