//! What the store knows of each model a server offers: its capabilities, as
//! probed once or learned from the server's refusal, so later runs adapt
//! without asking again. `toolcell models` lists it.

use super::db::{Row, args};
use super::{Store, now_ms};
use crate::llm::Capabilities;
use anyhow::Result;
use serde::Serialize;

/// How the store came to know a model's capabilities.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum KnownBy {
    /// The server described the model when asked.
    Probe,
    /// The server refused a request for something the model lacks.
    Refusal,
}

impl KnownBy {
    pub fn as_str(self) -> &'static str {
        match self {
            KnownBy::Probe => "probe",
            KnownBy::Refusal => "refusal",
        }
    }

    fn parse(text: &str) -> Self {
        if text == "refusal" {
            KnownBy::Refusal
        } else {
            KnownBy::Probe
        }
    }
}

/// One model the store knows.
#[derive(Debug, Clone, Serialize)]
pub struct KnownModel {
    pub server: String,
    pub model: String,
    pub tools: Option<bool>,
    pub thinking: Option<bool>,
    pub context_length: Option<u32>,
    /// The tool-call dialect its chat template teaches.
    pub dialect: Option<String>,
    pub known_by: KnownBy,
    /// Unix ms.
    pub checked_at: i64,
}

impl KnownModel {
    pub fn capabilities(&self) -> Capabilities {
        Capabilities {
            tools: self.tools,
            thinking: self.thinking,
            context_length: self.context_length,
            dialect: self
                .dialect
                .as_deref()
                .and_then(crate::llm::dialect::by_name)
                .map(|d| d.name),
        }
    }
}

impl Store {
    /// What is known of `model` on `server`, if anything.
    pub fn known_model(&self, server: &str, model: &str) -> Result<Option<KnownModel>> {
        self.with(|conn| {
            conn.row(
                "SELECT server, model, tools, thinking, context_length, source, checked_at, dialect
                   FROM models WHERE server = ?1 AND model = ?2",
                args![server, model],
            )?
            .as_ref()
            .map(known_from_row)
            .transpose()
        })
    }

    /// Records `caps` for `model` on `server`, replacing what was known.
    pub fn remember_model(
        &self,
        server: &str,
        model: &str,
        caps: Capabilities,
        known_by: KnownBy,
    ) -> Result<()> {
        self.with(|conn| {
            conn.exec(
                "INSERT INTO models
                   (server, model, tools, thinking, context_length, source, checked_at, dialect)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                 ON CONFLICT (server, model) DO UPDATE SET tools = excluded.tools,
                   thinking = excluded.thinking, context_length = excluded.context_length,
                   source = excluded.source, checked_at = excluded.checked_at, dialect = excluded.dialect",
                args![
                    server,
                    model,
                    caps.tools,
                    caps.thinking,
                    caps.context_length,
                    known_by.as_str(),
                    now_ms(),
                    caps.dialect,
                ],
            )?;
            Ok(())
        })
    }

    /// Every model known, by server and name.
    pub fn known_models(&self) -> Result<Vec<KnownModel>> {
        self.with(|conn| {
            conn.rows(
                "SELECT server, model, tools, thinking, context_length, source, checked_at, dialect
                   FROM models ORDER BY server, model",
                &[],
            )?
            .iter()
            .map(known_from_row)
            .collect()
        })
    }
}

fn known_from_row(row: &Row) -> Result<KnownModel> {
    Ok(KnownModel {
        server: row.get(0)?,
        model: row.get(1)?,
        tools: row.get(2)?,
        thinking: row.get(3)?,
        context_length: row.get(4)?,
        known_by: KnownBy::parse(&row.get::<String>(5)?),
        checked_at: row.get(6)?,
        dialect: row.get(7)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_is_remembered_and_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        assert!(store.known_model("ollama http://x", "m").unwrap().is_none());
        let caps = Capabilities {
            tools: Some(true),
            thinking: None,
            context_length: Some(8192),
            dialect: Some("mistral"),
        };
        store
            .remember_model("ollama http://x", "m", caps, KnownBy::Probe)
            .unwrap();
        let known = store.known_model("ollama http://x", "m").unwrap().unwrap();
        assert_eq!(known.capabilities(), caps);
        let refused = Capabilities {
            tools: Some(false),
            ..caps
        };
        store
            .remember_model("ollama http://x", "m", refused, KnownBy::Refusal)
            .unwrap();
        let all = store.known_models().unwrap();
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].tools, Some(false));
        assert_eq!(all[0].known_by, KnownBy::Refusal);
    }
}
