//! Offering a model only the tools a request needs. Every tool definition
//! costs context on every request; a small model with a small window and
//! many tools loses its task in them. With more tools than a threshold (or
//! definitions over a quarter of the context), each task is offered the
//! tools that match its words, the tools already used in the run, and
//! `more_tools`, with which the model asks for any of the others.
//!
//! Ranking is lexical, BM25 over each tool's name, parameter names and
//! description (name words count most), with English stemming
//! (`rust-stemmers`, Snowball) so "renaming" finds `move_path`'s "rename",
//! and a short table of verbs users say for what tools call otherwise.

use crate::llm::ToolSpec;
use rust_stemmers::{Algorithm, Stemmer};
use serde_json::{Value, json};
use std::collections::{BTreeSet, HashMap};

/// The tool through which the model asks for tools it was not offered.
pub const MORE_TOOLS: &str = "more_tools";

/// Offered tools per task at most, besides those already used: enough for
/// a read-search-edit task, few enough to cut definitions by three
/// quarters out of twenty tools.
pub const MAX_MATCHED: usize = 4;

/// A tool scoring under this share of the best match is left out: it
/// shares a common word with the request, not its purpose.
const RELATIVE_CUTOFF: f64 = 0.3;

/// BM25's term-frequency saturation and length normalisation.
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// How much a word counts by where it appears in a tool's definition.
const NAME_WEIGHT: f64 = 3.0;
const PARAMETER_WEIGHT: f64 = 1.5;
const DESCRIPTION_WEIGHT: f64 = 1.0;

/// Words users say for what tool definitions say otherwise: a request's
/// word also counts as these. Only verbs and nouns whose meaning in a file
/// workspace is unambiguous.
const SYNONYMS: &[(&str, &[&str])] = &[
    ("show", &["read", "list"]),
    ("open", &["read"]),
    ("view", &["read"]),
    ("look", &["read", "search"]),
    ("find", &["search"]),
    ("grep", &["search"]),
    ("locate", &["search"]),
    ("rename", &["move"]),
    ("remove", &["delete"]),
    ("erase", &["delete"]),
    ("trash", &["delete"]),
    ("edit", &["replace"]),
    ("change", &["replace"]),
    ("fix", &["replace"]),
    ("update", &["replace"]),
    ("save", &["write"]),
    ("folder", &["directory"]),
    ("dir", &["directory"]),
    ("make", &["create"]),
    ("new", &["create"]),
    ("download", &["fetch"]),
    ("url", &["fetch", "web"]),
    ("website", &["web"]),
    ("page", &["web"]),
    ("execute", &["run", "command"]),
];

/// Words too common to say anything about a tool.
const STOP_WORDS: &[&str] = &[
    "a", "an", "the", "and", "or", "of", "to", "in", "on", "at", "for", "with", "from", "by", "as",
    "is", "are", "be", "it", "its", "this", "that", "these", "those", "my", "me", "i", "you",
    "your", "we", "our", "please", "can", "could", "would", "should", "do", "does", "what",
    "which", "who", "how", "all", "any", "some", "into", "there", "then", "than", "if", "not",
    "no", "e", "g", "default", "true", "false", "one", "each", "only",
];

/// A searchable index of tool definitions.
pub struct ToolIndex {
    stemmer: Stemmer,
    /// Per tool: weighted term frequencies, and the document's length.
    docs: Vec<(HashMap<String, f64>, f64)>,
    average_length: f64,
    /// Per term: how many tools mention it.
    document_frequency: HashMap<String, usize>,
}

impl ToolIndex {
    pub fn new(tools: &[ToolSpec]) -> Self {
        let stemmer = Stemmer::create(Algorithm::English);
        // Tool definitions repeat their words ("file", "path", "workspace"):
        // each is stemmed once.
        let mut stems: HashMap<String, String> = HashMap::new();
        let docs: Vec<(HashMap<String, f64>, f64)> = tools
            .iter()
            .map(|tool| {
                let mut terms: HashMap<String, f64> = HashMap::new();
                let mut add = |text: &str, weight: f64| {
                    for word in words(text) {
                        let term = stems
                            .entry(word)
                            .or_insert_with_key(|w| stemmer.stem(w).into_owned());
                        match terms.get_mut(term.as_str()) {
                            Some(tf) => *tf += weight,
                            None => {
                                terms.insert(term.clone(), weight);
                            }
                        }
                    }
                };
                add(&tool.name, NAME_WEIGHT);
                add(&tool.description, DESCRIPTION_WEIGHT);
                if let Some(properties) =
                    tool.parameters.get("properties").and_then(Value::as_object)
                {
                    for name in properties.keys() {
                        add(name, PARAMETER_WEIGHT);
                    }
                }
                let length = terms.values().sum();
                (terms, length)
            })
            .collect();
        let average_length =
            docs.iter().map(|(_, length)| length).sum::<f64>() / docs.len().max(1) as f64;
        let mut document_frequency = HashMap::new();
        for (terms, _) in &docs {
            for term in terms.keys() {
                *document_frequency.entry(term.clone()).or_insert(0) += 1;
            }
        }
        Self {
            stemmer,
            docs,
            average_length,
            document_frequency,
        }
    }

    /// The tools matching `request`, best first, as `(index, score)`.
    pub fn rank(&self, request: &str) -> Vec<(usize, f64)> {
        let mut query: BTreeSet<String> = BTreeSet::new();
        for word in words(request) {
            if let Some((_, also)) = SYNONYMS.iter().find(|(w, _)| *w == word) {
                query.extend(also.iter().map(|w| self.stemmer.stem(w).into_owned()));
            }
            query.extend(terms_of(&self.stemmer, &word));
        }
        let count = self.docs.len() as f64;
        let mut scored: Vec<(usize, f64)> = self
            .docs
            .iter()
            .enumerate()
            .map(|(i, (terms, length))| {
                let score = query
                    .iter()
                    .filter_map(|term| {
                        let tf = *terms.get(term)?;
                        let df = self.document_frequency[term] as f64;
                        let idf = (1.0 + (count - df + 0.5) / (df + 0.5)).ln();
                        let norm = K1 * (1.0 - B + B * length / self.average_length);
                        Some(idf * tf * (K1 + 1.0) / (tf + norm))
                    })
                    .sum::<f64>();
                (i, score)
            })
            .filter(|(_, score)| *score > 0.0)
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored
    }

    /// The tools worth offering for `request`: the best matches, at most
    /// `limit`, none far behind the best.
    pub fn relevant(&self, request: &str, limit: usize) -> Vec<usize> {
        let ranked = self.rank(request);
        let best = ranked.first().map_or(0.0, |(_, score)| *score);
        ranked
            .into_iter()
            .take_while(|(_, score)| *score >= best * RELATIVE_CUTOFF)
            .take(limit)
            .map(|(i, _)| i)
            .collect()
    }
}

/// Lowercase words of `text`, split at anything but letters and digits
/// and at `snake_case` and `camelCase` joints, without stop words.
fn words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for c in text.chars() {
        if c.is_alphanumeric() {
            if c.is_uppercase() && previous_lower && !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            previous_lower = c.is_lowercase() || c.is_ascii_digit();
            current.extend(c.to_lowercase());
        } else {
            previous_lower = false;
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
        }
    }
    if !current.is_empty() {
        words.push(current);
    }
    words.retain(|w| !STOP_WORDS.contains(&w.as_str()));
    words
}

/// The stemmed terms of `text`.
fn terms_of(stemmer: &Stemmer, text: &str) -> Vec<String> {
    words(text)
        .into_iter()
        .map(|w| stemmer.stem(&w).into_owned())
        .collect()
}

/// The definition of [`MORE_TOOLS`].
pub fn more_tools_spec() -> ToolSpec {
    ToolSpec {
        name: MORE_TOOLS.into(),
        description: "More tools exist than are offered now. Call this to find one for a need (`query`, e.g. \"fetch a web page\") or, without a query, to get all of them; the tools it returns can be called from then on.".into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What the tool should do, in a few words"},
            },
        }),
    }
}

/// Estimated tokens of tool definitions: the bytes of their wire JSON over
/// the usual four bytes a token.
pub fn definition_tokens(tools: &[ToolSpec]) -> usize {
    super::context::tools_bytes(tools) / super::context::BYTES_PER_TOKEN
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, description: &str, params: &[&str]) -> ToolSpec {
        let properties: serde_json::Map<String, Value> = params
            .iter()
            .map(|p| (p.to_string(), json!({"type": "string"})))
            .collect();
        ToolSpec {
            name: name.into(),
            description: description.into(),
            parameters: json!({"type": "object", "properties": properties}),
        }
    }

    #[test]
    fn words_split_at_case_and_underscores_without_stop_words() {
        assert_eq!(words("read_file"), ["read", "file"]);
        assert_eq!(
            words("listDirectory of the Notes!"),
            ["list", "directory", "notes"]
        );
        assert!(words("the a of").is_empty());
    }

    #[test]
    fn the_request_words_pick_the_tool_and_synonyms_and_stems_help() {
        let tools = [
            tool("read_file", "Read a text file", &["path"]),
            tool(
                "move_path",
                "Move or rename a file or folder",
                &["from", "to"],
            ),
            tool(
                "web_fetch",
                "GET a URL and return the text of the page",
                &["url"],
            ),
            tool("delete_path", "Delete a file or folder", &["path"]),
        ];
        let index = ToolIndex::new(&tools);
        assert_eq!(index.relevant("renaming the report", 4), [1]);
        assert_eq!(index.relevant("download https://example.org", 4), [2]);
        assert_eq!(index.relevant("remove old.txt", 4)[0], 3);
        assert!(index.relevant("hello there", 4).is_empty());
    }
}
