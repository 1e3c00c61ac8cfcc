//! Every dialect, one row each. A row says how the dialect's calls are
//! marked, which parser reads what sits between the markers, what in a
//! chat template shows that a model writes it, and how to ask a model to.
//!
//! Rows that share a marker (`<tool_call>` holds Hermes JSON, Qwen3-Coder
//! XML and GLM key/value pairs) share its block; each row's parser says
//! whether the body is its own, in table order. Rows without markers are
//! read only when they are the whole reply (bare JSON, pythonic lists).

use super::{Marker, Parse, json, pythonic, xml};
use std::collections::HashMap;
use std::sync::OnceLock;

/// One dialect.
#[derive(Debug)]
pub struct Dialect {
    pub name: &'static str,
    pub markers: &'static [Marker],
    /// Reads a block's body.
    pub parse: Option<Parse>,
    /// Reads a whole reply that is only calls, without markers (Llama's
    /// bare JSON, pythonic lists): only calls of known tools count.
    pub bare: Option<Parse>,
    /// A chat template with all of these is this dialect's.
    pub signs: &'static [&'static str],
    /// How to write a call, for the system prompt.
    pub how_to_call: &'static str,
    /// The tags around each result sent back.
    pub result_tags: (&'static str, &'static str),
}

impl PartialEq for Dialect {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

const TOOL_RESPONSE: (&str, &str) = ("<tool_response>\n", "\n</tool_response>");

/// Hermes: what the prompt asks for when nothing says otherwise.
pub static HERMES: Dialect = Dialect {
    name: "hermes",
    markers: &[
        Marker::block("<tool_call>", &["</tool_call>"]),
        Marker::block("<function_call>", &["</function_call>"]).weak(),
        Marker::block("<tools>", &["</tools>"]).weak(),
        Marker::block("<tool>", &["</tool>"]).weak(),
        Marker::block("<json>", &["</json>"]).weak(),
        Marker::block("<JSON>", &["</JSON>"]).weak(),
        Marker::block("<xml>", &["</xml>"]).weak(),
        Marker::block("<response>", &["</response>"]).weak(),
        Marker::block("<tool_calls>", &["</tool_calls>"]).weak(),
    ],
    parse: Some(json::hermes),
    bare: None,
    signs: &["<tool_call>"],
    how_to_call: "For each function call, return a JSON object with the function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>",
    result_tags: TOOL_RESPONSE,
};

/// Reasoning in the text, in the forms models write it.
static REASONING: Dialect = Dialect {
    name: "reasoning",
    markers: &[
        Marker::thinking("<think>", &["</think>"]),
        Marker {
            role: super::Role::EndThinking,
            ..Marker::drop("</think>")
        },
        Marker::thinking("<thinking>", &["</thinking>"]),
        Marker::thinking("<seed:think>", &["</seed:think>"]),
        Marker {
            role: super::Role::EndThinking,
            ..Marker::drop("</seed:think>")
        },
        Marker::thinking("<|START_THINKING|>", &["<|END_THINKING|>"]),
        Marker::thinking("<|channel|>analysis<|message|>", &["<|end|>"])
            .before(&["<|start|>", "<|channel|>"]),
        Marker::thinking("<|channel|> analysis<|message|>", &["<|end|>"])
            .before(&["<|start|>", "<|channel|>"]),
        Marker::thinking("<|channel>thought", &["<channel|>"]),
        Marker::thinking("<mm:think>", &["</mm:think>"]),
        Marker::thinking("[THINK]", &["[/THINK]"]),
        Marker::thinking("<|open|>think<|sep|>", &["<|close|>think<|sep|>"]),
        Marker {
            role: super::Role::EndThinking,
            ..Marker::drop("<|close|>think<|sep|>")
        },
        Marker::thinking("<|inner_prefix|>", &["<|inner_suffix|>"]),
        Marker {
            role: super::Role::EndThinking,
            ..Marker::drop("<|END_THINKING|>")
        },
        Marker {
            role: super::Role::EndThinking,
            ..Marker::drop("[BEGIN FINAL RESPONSE]")
        },
    ],
    parse: None,
    bare: None,
    signs: &[],
    how_to_call: "",
    result_tags: TOOL_RESPONSE,
};

/// Special tokens that end a turn or open a section, removed from the text.
static SPECIAL_TOKENS: Dialect = Dialect {
    name: "special tokens",
    markers: &[
        Marker::drop("<|im_end|>"),
        Marker::drop("<|im_start|>assistant"),
        Marker::drop("<|eot_id|>"),
        Marker::drop("<|start_header_id|>assistant<|end_header_id|>"),
        Marker::drop("<seed:eos>"),
        Marker::drop("<|eom_id|>"),
        Marker::drop("<|end|>"),
        Marker::drop("<|return|>"),
        Marker::drop("<|start|>assistant"),
        Marker::drop("<|channel|>final<|message|>"),
        Marker::drop("<|channel|>commentary<|message|>"),
        Marker::drop("</s>"),
        Marker::drop("<end_of_turn>"),
        Marker::drop("<|endoftext|>"),
        Marker::drop("<|end_of_text|>"),
        Marker::drop("<｜end▁of▁sentence｜>"),
        Marker::drop("<|START_RESPONSE|>"),
        Marker::drop("<|END_RESPONSE|>"),
        Marker::drop("<|END_OF_TURN_TOKEN|>"),
        Marker::drop("<|START_TEXT|>"),
        Marker::drop("<|END_TEXT|>"),
        Marker::drop("<|CHATBOT_TOKEN|>"),
        Marker::drop("<|open|>response<|sep|>"),
        Marker::drop("<|close|>response<|sep|>"),
        Marker::drop("<|close|>message<|sep|>"),
        Marker::drop("]<]minimax[>["),
        Marker::drop(">>>all\n"),
        Marker::drop("<|message_sep|>"),
        Marker::drop("<|eom|>"),
        Marker::drop("<|start|> assistant"),
        Marker::drop("[END FINAL RESPONSE]"),
    ],
    parse: None,
    bare: None,
    signs: &[],
    how_to_call: "",
    result_tags: TOOL_RESPONSE,
};

/// The rows, most specific template signs first (the first row whose signs
/// a template has is its dialect).
static DIALECTS: &[&Dialect] = &[
    &Dialect {
        name: "minimax",
        markers: &[Marker::block(
            "<minimax:tool_call>",
            &["</minimax:tool_call>"],
        )],
        parse: Some(xml::minimax),
        bare: None,
        signs: &["<minimax:tool_call>"],
        how_to_call: "For each function call, write:\n<minimax:tool_call>\n<invoke name=\"function-name\">\n<parameter name=\"parameter-name\">value</parameter>\n</invoke>\n</minimax:tool_call>",
        result_tags: TOOL_RESPONSE,
    },
    &Dialect {
        name: "minimax-m3",
        markers: &[Marker::block("<tool_call>", &["</tool_call>"])],
        parse: Some(xml::minimax_m3),
        bare: None,
        signs: &["]<]minimax[>["],
        how_to_call: "For each function call, write:\n<tool_call>\n<invoke name=\"function-name\"><parameter-name>value</parameter-name></invoke>\n</tool_call>",
        result_tags: TOOL_RESPONSE,
    },
    &Dialect {
        name: "seed-oss",
        markers: &[Marker::block("<seed:tool_call>", &["</seed:tool_call>"])],
        parse: Some(xml::qwen3),
        bare: None,
        signs: &["<seed:tool_call>"],
        how_to_call: "For each function call, write:\n<seed:tool_call>\n<function=function-name>\n<parameter=parameter-name>value</parameter>\n</function>\n</seed:tool_call>",
        result_tags: TOOL_RESPONSE,
    },
    &Dialect {
        name: "glm",
        markers: &[Marker::block("<tool_call>", &["</tool_call>"])],
        parse: Some(xml::glm),
        bare: None,
        signs: &["<arg_key>"],
        how_to_call: "For each function call, write:\n<tool_call>function-name\n<arg_key>parameter-name</arg_key>\n<arg_value>value</arg_value>\n</tool_call>",
        result_tags: TOOL_RESPONSE,
    },
    &Dialect {
        name: "qwen3-xml",
        markers: &[
            Marker::block("<tool_call>", &["</tool_call>"]),
            Marker::block("<function=", &["</function>"]),
        ],
        parse: Some(xml::qwen3),
        bare: None,
        signs: &["<function=", "<parameter="],
        how_to_call: "For each function call, write:\n<tool_call>\n<function=function-name>\n<parameter=parameter-name>\nvalue\n</parameter>\n</function>\n</tool_call>",
        result_tags: TOOL_RESPONSE,
    },
    &Dialect {
        name: "functionary-v3.1",
        markers: &[Marker::block("<function=", &["</function>"])],
        parse: Some(json::function_tag),
        bare: None,
        signs: &["<function=", "</function>"],
        how_to_call: "For each function call, write <function=function-name>{\"parameter-name\": value}</function>",
        result_tags: TOOL_RESPONSE,
    },
    &Dialect {
        name: "function-attribute",
        markers: &[Marker::block("<function name=", &["</function>"]).weak()],
        parse: Some(xml::function_attribute),
        bare: None,
        signs: &["<function name="],
        how_to_call: "For each function call, write <function name=\"function-name\">{\"parameter-name\": value}</function>",
        result_tags: TOOL_RESPONSE,
    },
    &Dialect {
        name: "kimi-k2",
        markers: &[
            Marker::block(
                "<|tool_calls_section_begin|>",
                &["<|tool_calls_section_end|>"],
            ),
            Marker::block("<|tool_call_begin|>", &["<|tool_call_end|>"]),
        ],
        parse: Some(json::kimi),
        bare: None,
        signs: &["<|tool_calls_section_begin|>"],
        how_to_call: "To call functions, write <|tool_calls_section_begin|><|tool_call_begin|>functions.function-name:0<|tool_call_argument_begin|>{\"parameter-name\": value}<|tool_call_end|><|tool_calls_section_end|>",
        result_tags: TOOL_RESPONSE,
    },
    &Dialect {
        name: "kimi-k3",
        markers: &[Marker::block(
            "<|open|>tools<|sep|>",
            &["<|close|>tools<|sep|>"],
        )],
        parse: Some(xml::kimi_k3),
        bare: None,
        signs: &["<|open|>tools<|sep|>"],
        how_to_call: "To call functions, write <|open|>tools<|sep|><|open|>call tool=\"function-name\" index=\"1\"<|sep|><|open|>argument key=\"parameter-name\" type=\"string\"<|sep|>value<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
        result_tags: TOOL_RESPONSE,
    },
    &Dialect {
        name: "deepseek",
        markers: &[
            Marker::block("<｜tool▁calls▁begin｜>", &["<｜tool▁calls▁end｜>"]).to_stop(),
            Marker::block("<｜tool▁call▁begin｜>", &["<｜tool▁call▁end｜>"]),
            Marker::block("<|tool▁calls▁begin|>", &["<|tool▁calls▁end|>"]).to_stop(),
            Marker::block("<|tool_calls_begin|>", &["<|tool_calls_end|>"]).to_stop(),
            Marker::block("<｜tool▁calls｜>", &["<｜tool▁calls▁end｜>"]).to_stop(),
        ],
        parse: Some(json::deepseek),
        bare: None,
        signs: &["tool▁calls▁begin"],
        how_to_call: "To call functions, write <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function-name<｜tool▁sep｜>{\"parameter-name\": value}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        result_tags: TOOL_RESPONSE,
    },
    &Dialect {
        name: "gpt-oss",
        markers: &[
            Marker::block(
                "<|channel|>commentary to=functions.",
                &["<|call|>", "<|end|>"],
            )
            .to_stop(),
            Marker::block(
                "<|channel|>analysis to=functions.",
                &["<|call|>", "<|end|>"],
            )
            .to_stop(),
            Marker::block("<|start|>assistant to=functions.", &["<|call|>", "<|end|>"]).to_stop(),
            Marker::block(
                "<|start|> assistant to=functions.",
                &["<|call|>", "<|end|>"],
            )
            .to_stop(),
            // The role header was in the prompt: the reply starts here.
            Marker::block(" to=functions.", &["<|call|>", "<|end|>"]).to_stop(),
        ],
        parse: Some(json::harmony),
        bare: None,
        signs: &["<|channel|>"],
        how_to_call: "To call a function, write <|channel|>commentary to=functions.function-name <|constrain|>json<|message|>{\"parameter-name\": value}<|call|>",
        result_tags: TOOL_RESPONSE,
    },
    &Dialect {
        name: "command-r7b",
        markers: &[Marker::block("<|START_ACTION|>", &["<|END_ACTION|>"]).to_stop()],
        parse: Some(json::list),
        bare: None,
        signs: &["<|START_ACTION|>"],
        how_to_call: "To call functions, write <|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"function-name\", \"parameters\": {\"parameter-name\": value}}]<|END_ACTION|>",
        result_tags: TOOL_RESPONSE,
    },
    &Dialect {
        name: "mistral",
        markers: &[Marker::block("[TOOL_CALLS]", &["</s>"])
            .before(&["[TOOL_CALLS]"])
            .to_stop()],
        parse: Some(json::mistral),
        bare: None,
        signs: &["[TOOL_CALLS]"],
        how_to_call: "To call functions, write [TOOL_CALLS] and a JSON list of the calls: [TOOL_CALLS][{\"name\": <function-name>, \"arguments\": <args-json-object>}]",
        result_tags: TOOL_RESPONSE,
    },
    &Dialect {
        name: "gemma4",
        markers: &[Marker::block("<|tool_call>", &["<tool_call|>"])],
        parse: Some(pythonic::function_gemma),
        bare: None,
        signs: &["<|tool_call>"],
        how_to_call: "To call a function, write <|tool_call>call:function-name{parameter-name:<|\"|>text value<|\"|>}<tool_call|>",
        result_tags: TOOL_RESPONSE,
    },
    &Dialect {
        name: "deepseek-v3.2",
        markers: &[
            Marker::block("<｜DSML｜function_calls>", &["</｜DSML｜function_calls>"]),
            Marker::block("<｜DSML｜tool_calls>", &["</｜DSML｜tool_calls>"]),
        ],
        parse: Some(xml::dsml),
        bare: None,
        signs: &["｜DSML｜"],
        how_to_call: "To call functions, write <｜DSML｜function_calls>\n<｜DSML｜invoke name=\"function-name\">\n<｜DSML｜parameter name=\"parameter-name\" string=\"true\">text value</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>",
        result_tags: TOOL_RESPONSE,
    },
    &Dialect {
        name: "gigachat",
        markers: &[
            Marker::block("function call<|role_sep|>", &[]).to_stop(),
            Marker::block("<|function_call|>", &[]).to_stop(),
        ],
        parse: Some(json::list),
        bare: None,
        signs: &["<|role_sep|>"],
        how_to_call: "To call a function, write function call<|role_sep|> and a JSON object {\"name\": <function-name>, \"arguments\": <args-json-object>}",
        result_tags: TOOL_RESPONSE,
    },
    &Dialect {
        name: "atem",
        markers: &[
            Marker::block("<atem:function_calls>", &["</atem:function_calls>"]),
            // The recipient header before a message (` to=user<|message|>`).
            Marker::block(" to=", &["<|message|>"]).weak(),
        ],
        parse: Some(xml::atem),
        bare: None,
        signs: &["<atem:function_calls>"],
        how_to_call: "To call functions, write <atem:function_calls>\n<atem:invoke name=\"function-name\">\n<atem:parameter name=\"parameter-name\">value</atem:parameter>\n</atem:invoke>\n</atem:function_calls>",
        result_tags: TOOL_RESPONSE,
    },
    &Dialect {
        name: "functiongemma",
        markers: &[Marker::block(
            "<start_function_call>",
            &["<end_function_call>"],
        )],
        parse: Some(pythonic::function_gemma),
        bare: None,
        signs: &["<start_function_call>"],
        how_to_call: "To call a function, write <start_function_call>call:function-name{parameter-name:<escape>text value<escape>}<end_function_call>",
        result_tags: TOOL_RESPONSE,
    },
    &Dialect {
        name: "granite",
        markers: &[Marker::block("<|tool_call|>", &["<|end_of_text|>"]).to_stop()],
        parse: Some(json::list),
        bare: None,
        signs: &["<|tool_call|>"],
        how_to_call: "To call functions, write <|tool_call|> and a JSON list of the calls: <|tool_call|>[{\"name\": <function-name>, \"arguments\": <args-json-object>}]",
        result_tags: TOOL_RESPONSE,
    },
    &Dialect {
        name: "nemotron",
        markers: &[Marker::block("<TOOLCALL>", &["</TOOLCALL>"])],
        parse: Some(json::list),
        bare: None,
        signs: &["<TOOLCALL>"],
        how_to_call: "To call functions, write <TOOLCALL>[{\"name\": <function-name>, \"arguments\": <args-json-object>}]</TOOLCALL>",
        result_tags: TOOL_RESPONSE,
    },
    &Dialect {
        name: "lfm2",
        markers: &[Marker::block("<|tool_call_start|>", &["<|tool_call_end|>"])],
        parse: Some(pythonic::list_or_json),
        bare: None,
        signs: &["<|tool_call_start|>"],
        how_to_call: "To call functions, write <|tool_call_start|>[function_name(parameter_name=value)]<|tool_call_end|>",
        result_tags: TOOL_RESPONSE,
    },
    &Dialect {
        name: "apertus",
        markers: &[Marker::block("<|tools_prefix|>", &["<|tools_suffix|>"])],
        parse: Some(json::named_objects),
        bare: None,
        signs: &["<|tools_prefix|>"],
        how_to_call: "To call functions, write <|tools_prefix|>[{\"function-name\": {\"parameter-name\": value}}]<|tools_suffix|>",
        result_tags: TOOL_RESPONSE,
    },
    &Dialect {
        name: "functools",
        markers: &[Marker::block("functools", &[]).to_stop().weak()],
        parse: Some(json::functools),
        bare: None,
        signs: &["functools["],
        how_to_call: "To call functions, write functools and a JSON list of the calls: functools[{\"name\": <function-name>, \"arguments\": <args-json-object>}]",
        result_tags: TOOL_RESPONSE,
    },
    &Dialect {
        name: "functionary-v3",
        markers: &[Marker::block(">>>", &[]).before(&[">>>"]).to_stop().weak()],
        parse: Some(json::functionary),
        // The prompt ends with `>>>`, so a reply may start with the name.
        bare: Some(json::functionary_bare),
        signs: &[">>>"],
        how_to_call: "To call a function, write >>> and its name on one line and its JSON arguments on the next:\n>>>function-name\n{\"parameter-name\": value}",
        result_tags: TOOL_RESPONSE,
    },
    &Dialect {
        name: "llama3",
        markers: &[
            Marker::block("<|python_tag|>", &["<|eom_id|>", "<|eot_id|>"])
                .before(&["<|python_tag|>"])
                .to_stop(),
        ],
        parse: Some(json::python_tag),
        bare: Some(json::bare),
        signs: &["<|eot_id|>"],
        how_to_call: "To call a function, respond only with a JSON object in the format {\"name\": function name, \"parameters\": dictionary of argument name and its value}. Do not use variables.",
        result_tags: TOOL_RESPONSE,
    },
    &Dialect {
        name: "pythonic",
        markers: &[Marker::block("<|python_start|>", &["<|python_end|>"]).to_stop()],
        parse: Some(pythonic::list_or_json),
        bare: Some(pythonic::bare),
        signs: &["[func_name1("],
        how_to_call: "To call functions, respond only with a list of calls in the format [func_name1(params_name1=params_value1, params_name2=params_value2...), func_name2(params)]",
        result_tags: TOOL_RESPONSE,
    },
    &Dialect {
        name: "gemma-tool-code",
        markers: &[Marker::block("```tool_code", &["```"]).weak()],
        parse: Some(pythonic::tool_code),
        bare: None,
        signs: &["<start_of_turn>"],
        how_to_call: "To call a function, write a Python call of it in a tool_code block, and nothing after the block:\n```tool_code\nfunction_name(parameter_name=\"value\")\n```",
        result_tags: ("```tool_output\n", "\n```"),
    },
    &HERMES,
    &REASONING,
    &SPECIAL_TOKENS,
];

/// Every row.
pub fn all() -> &'static [&'static Dialect] {
    DIALECTS
}

/// Every marker of every row, with its row.
pub fn markers() -> impl Iterator<Item = (&'static Dialect, &'static Marker)> {
    DIALECTS
        .iter()
        .flat_map(|d| d.markers.iter().map(move |m| (*d, m)))
}

/// The rows that may read a block opened by `open`, in table order
/// (worked out once: a reply may hold thousands of blocks).
pub fn readers_of(open: &str) -> &'static [&'static Dialect] {
    static READERS: OnceLock<HashMap<&'static str, Vec<&'static Dialect>>> = OnceLock::new();
    let readers = READERS.get_or_init(|| {
        let mut readers: HashMap<&'static str, Vec<&'static Dialect>> = HashMap::new();
        for (dialect, marker) in markers() {
            let list = readers.entry(marker.open).or_default();
            if dialect.parse.is_some() && !list.iter().any(|d| std::ptr::eq(*d, dialect)) {
                list.push(dialect);
            }
        }
        readers
    });
    readers.get(open).map_or(&[], Vec::as_slice)
}

/// The dialect named `name`.
pub fn by_name(name: &str) -> Option<&'static Dialect> {
    DIALECTS
        .iter()
        .copied()
        .find(|d| d.name == name && !d.how_to_call.is_empty())
}

/// The dialect a chat template (llama-server's `/props`, Ollama's
/// `/api/show`) teaches its model, if it shows one.
pub fn from_template(template: &str) -> Option<&'static Dialect> {
    DIALECTS
        .iter()
        .copied()
        .find(|d| !d.signs.is_empty() && d.signs.iter().all(|sign| template.contains(sign)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_that_share_a_marker_end_it_the_same_way() {
        for (_, a) in markers() {
            for (_, b) in markers() {
                if a.open == b.open {
                    assert_eq!(
                        (a.close, a.close_before, a.ends_at_stop),
                        (b.close, b.close_before, b.ends_at_stop),
                        "{}",
                        a.open
                    );
                }
            }
        }
    }

    #[test]
    fn templates_name_their_dialect() {
        let cases = [
            (
                "{% if tools %}<tool_call>\\n{\"name\": …}</tool_call>",
                "hermes",
            ),
            (
                "<tool_call>\n<function=example>\n<parameter=x>",
                "qwen3-xml",
            ),
            ("[AVAILABLE_TOOLS]…[TOOL_CALLS]", "mistral"),
            ("<|start_header_id|>…<|python_tag|>…<|eot_id|>", "llama3"),
            (
                "<start_of_turn>user\n{{ content }}<end_of_turn>",
                "gemma-tool-code",
            ),
            ("<|start|>assistant<|channel|>final<|message|>", "gpt-oss"),
        ];
        for (template, name) in cases {
            assert_eq!(
                from_template(template).map(|d| d.name),
                Some(name),
                "{template}"
            );
        }
        assert!(from_template("{{ messages }}").is_none());
    }
}
