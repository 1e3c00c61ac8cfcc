//! The text format for tool calls, for models without native tool calling:
//! the tools are described in the system prompt, the model writes its
//! calls in its text and the results go back in a user turn. The prompt
//! asks for the model's own dialect when its server shows which that is
//! (its chat template), Hermes otherwise; the reply is read in any dialect
//! ([`crate::llm::dialect`]).

use crate::llm::ToolSpec;
use crate::llm::dialect::Dialect;
use serde_json::{Value, json};

/// The part of the system prompt that offers `tools` in the text format,
/// asking for calls in `dialect`.
pub fn tools_prompt(dialect: &Dialect, tools: &[ToolSpec]) -> String {
    let specs: Vec<String> = tools
        .iter()
        .map(|tool| ToolSpec::to_wire(tool).to_string())
        .collect();
    let (open, close) = dialect.result_tags;
    format!(
        "\n\n# Tools\n\nYou may call one or more functions to assist with the user query. \
         The function signatures are within <tools></tools> XML tags:\n<tools>\n{}\n</tools>\n\n\
         {}\n\
         The results come back as {}…{}. When you have the answer, reply without any tool call.",
        specs.join("\n"),
        dialect.how_to_call,
        open.trim(),
        close.trim(),
    )
}

/// The results of one turn's calls as the user turn that carries them.
pub fn responses(dialect: &Dialect, results: &[(String, String)]) -> String {
    let (open, close) = dialect.result_tags;
    results
        .iter()
        .map(|(name, content)| {
            let result: Value = json!({"name": name, "content": content});
            format!("{open}{result}{close}")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::dialect::{HERMES, by_name};

    #[test]
    fn the_prompt_and_results_speak_the_dialect() {
        let tools = [ToolSpec {
            name: "read_file".into(),
            description: "Read".into(),
            parameters: json!({"type": "object"}),
        }];
        let hermes = tools_prompt(&HERMES, &tools);
        assert!(
            hermes.contains("<tool_call>") && hermes.contains("\"read_file\""),
            "{hermes}"
        );
        let gemma = by_name("gemma-tool-code").unwrap();
        assert!(tools_prompt(gemma, &tools).contains("```tool_code"));
        let back = responses(gemma, &[("read_file".into(), "hi".into())]);
        assert!(
            back.starts_with("```tool_output\n{") && back.ends_with("}\n```"),
            "{back}"
        );
        assert!(responses(&HERMES, &[("a".into(), "b".into())]).starts_with("<tool_response>\n"));
    }
}
