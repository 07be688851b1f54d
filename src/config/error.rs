//! Typed configuration errors.
//!
//! Every message says which key (or file and line) is wrong and how to fix
//! it, because these errors are shown verbatim to the user by the CLI
//! before any simulation starts.

/// Why a configuration could not be loaded or is not simulable.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// TOML syntax or schema error (unknown key, wrong type, bad unit); the
    /// message is toml's report, with line and column for files.
    #[error("{origin}: {message}")]
    Parse { origin: String, message: String },

    /// A config file could not be read.
    #[error("cannot read config file `{path}`: {error}")]
    Io {
        path: String,
        #[source]
        error: std::io::Error,
    },

    /// Neither a preset name nor an existing file.
    #[error("`{name}` is neither a preset nor an existing file; presets: {presets}")]
    UnknownPreset { name: String, presets: String },

    /// A path that exists but is no regular file (a directory, a device).
    #[error("`{name}` exists but is not a regular file (a directory or a device); give a TOML config file or a preset name (`dedupsim config presets`)")]
    NotAFile { name: String },

    /// `base = ...` keys that form a loop.
    #[error("config `base` chain loops: {chain}; one of these files must use another base or base = \"none\"")]
    BaseCycle { chain: String },

    /// A malformed `--set key=value` argument.
    #[error("--set {arg}: {message}")]
    Override { arg: String, message: String },

    /// `--set` of a key that does not exist.
    #[error("--set {arg}: unknown key `{key}`; valid keys{section}: {valid}")]
    UnknownKey {
        arg: String,
        key: String,
        /// `" in [geometry]"`, or empty for top-level keys.
        section: String,
        valid: String,
    },

    /// A key missing after all bases were applied (only possible with
    /// `base = "none"`).
    #[error("missing key `{key}`: a file with base = \"none\" must give every key (or drop `base` to inherit the rest from fad-table1)")]
    Missing { key: String },

    /// A peer simulator's config (`config import`) that cannot be read;
    /// `origin` is `file:line` where the line is known.
    #[error("{origin}: {message}")]
    Import { origin: String, message: String },

    /// A value that parses but cannot be simulated; `key` is the dotted key.
    #[error("{message}")]
    Invalid { key: String, message: String },
}

impl ConfigError {
    pub(crate) fn invalid(key: impl Into<String>, message: impl Into<String>) -> ConfigError {
        ConfigError::Invalid { key: key.into(), message: message.into() }
    }
}
