package config

// Config is berth's loaded, defaulted and validated configuration.
// Placeholder: replaced by the config package's real implementation.
type Config struct{}
