//! The vendors whose CLIs the harness seats: the list, defined once, and
//! what a seat file and a column id say of each. Their codecs are in
//! `sharedos-drivers`.

/// A vendor whose CLI can be seated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Vendor {
    /// OpenAI Codex (`codex exec --json`).
    Codex,
    /// Anthropic Claude Code (`claude -p --output-format stream-json`).
    ClaudeCode,
    /// DeepSeek Harness (JSON-RPC 2.0 SDK server).
    DeepSeek,
    /// Pi (`pi --mode rpc`).
    Pi,
}

impl Vendor {
    /// Every vendor, in column order.
    pub const ALL: [Vendor; 4] = [Vendor::Codex, Vendor::ClaudeCode, Vendor::DeepSeek, Vendor::Pi];

    /// The vendor id, as in `sharedos.<id>` and `<id>-scripted`.
    #[must_use]
    pub fn id(self) -> &'static str {
        match self {
            Vendor::Codex => "codex",
            Vendor::ClaudeCode => "claude-code",
            Vendor::DeepSeek => "deepseek",
            Vendor::Pi => "pi",
        }
    }

    /// The vendor's name for people (`Claude Code`).
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Vendor::Codex => "Codex",
            Vendor::ClaudeCode => "Claude Code",
            Vendor::DeepSeek => "DeepSeek",
            Vendor::Pi => "Pi",
        }
    }

    /// Parses a vendor id.
    #[must_use]
    pub fn from_id(id: &str) -> Option<Vendor> {
        Vendor::ALL.into_iter().find(|vendor| vendor.id() == id)
    }

    /// The executable expected on PATH.
    #[must_use]
    pub fn executable(self) -> &'static str {
        match self {
            Vendor::Codex => "codex",
            Vendor::ClaudeCode => "claude",
            Vendor::DeepSeek => "dsh",
            Vendor::Pi => "pi",
        }
    }

    /// Environment variables any one of which carries a credential.
    #[must_use]
    pub fn credential_variables(self) -> &'static [&'static str] {
        match self {
            Vendor::Codex => &["OPENAI_API_KEY", "CODEX_API_KEY"],
            Vendor::ClaudeCode => &["ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"],
            Vendor::DeepSeek => &["DEEPSEEK_API_KEY", "DSH_API_KEY"],
            Vendor::Pi => &["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "PI_API_KEY"],
        }
    }

    /// Whether the catalogue reaches the CLI outside its wire.
    #[must_use]
    pub fn catalogue_out_of_band(self) -> bool {
        matches!(self, Vendor::DeepSeek | Vendor::Pi)
    }
}

#[cfg(test)]
mod tests {
    use super::Vendor;

    #[test]
    fn every_vendor_reads_back_from_its_id() {
        let read: Vec<Option<Vendor>> = Vendor::ALL.iter().map(|vendor| Vendor::from_id(vendor.id())).collect();
        assert_eq!(read.len(), 4);
        assert!(Vendor::ALL.iter().zip(&read).all(|(vendor, back)| Some(*vendor) == *back));
        assert_eq!(Vendor::from_id("nobody"), None);
    }
}
