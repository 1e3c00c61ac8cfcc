//! Whether a call in a reply is shown, not made: the sentence just before
//! it says so ("For example:", "The call looks like:", "Example usage:"),
//! and does not say what the model does next ("Let me see what a.txt
//! looks like:"). Read from the last sentence before the call (and, where
//! it ends with a colon, the one before it).

/// Words that, in the sentence just before a call, say it is shown, not
/// made.
const EXAMPLE_CUES: &[&str] = &[
    "for example",
    "an example",
    "example:",
    "example of",
    "example call",
    "for instance",
    "sample call",
    "looks like this",
    "would look like",
    "like so",
    "show you",
    "demonstrate",
];

/// Words that say so only in a sentence that ends with a colon, which
/// introduces what follows ("The format is:", "A call looks like:",
/// "Example usage:"); in a sentence of its own they are prose ("Let me
/// check the format of a.txt first.", "the small files (e.g. a.txt)").
const EXAMPLE_CUES_BEFORE_COLON: &[&str] = &[
    "example",
    "e.g.",
    "looks like",
    "sample",
    "usage",
    "syntax",
    "format",
    "typical",
    "you could",
    "you can",
    "you would",
    "you'd",
    "you should",
    "to call it",
    "here's how",
    "here is how",
];

/// Words by which a model says what it does itself next: a call after
/// them is made, whatever else the sentence says ("Let me see what a.txt
/// looks like:", "Here's how I'll start:") — unless it says "for example".
const DOING: &[&str] = &[
    "let me",
    "let's",
    "i'll",
    "i will",
    "i'm going to",
    "i am going to",
    "i need to",
    "i'm reading",
    "i'm checking",
    "now i",
];

/// Cues that stand even in a sentence saying what the model does.
const EXAMPLE_EVEN_WHEN_DOING: &[&str] = &["for example", "for instance", "e.g."];

/// How far before a call its cue may be: the sentence that introduces it.
pub(super) const CUE_WINDOW: usize = 160;

/// Whether the sentence before a call says that an example follows.
pub(super) fn introduced_as_example(before: &str) -> bool {
    let mut start = before.len().saturating_sub(CUE_WINDOW);
    while !before.is_char_boundary(start) {
        start += 1;
    }
    let window = before[start..].to_lowercase().replace('’', "'");
    let (sentence, earlier) = last_sentences(&window);
    // A Markdown heading introduces what follows as a colon does; bold
    // and heading marks are no words (`**Usage:**`, `## Example`).
    let heading = sentence.starts_with('#');
    let sentence =
        sentence.trim_matches(|c: char| matches!(c, '*' | '#' | '_' | '`') || c.is_whitespace());
    let introduces = heading || sentence.ends_with(':');
    let says = |cues: &[&str], text: &str| cues.iter().any(|cue| text.contains(cue));
    if says(EXAMPLE_EVEN_WHEN_DOING, sentence) {
        return true;
    }
    // Said outright before what it introduces, it is an example, whoever
    // says what they do ("Let me show you an example:"); a sentence of its
    // own that says what the model does is not ("Let me find an example of
    // the bug in a.txt.").
    let doing = says(DOING, sentence) || starts_doing(sentence);
    if says(EXAMPLE_CUES, sentence) {
        return introduces || !doing;
    }
    if doing {
        return false;
    }
    // A sentence that introduces what follows: its own cue, or the one of
    // the sentence before it in the same paragraph ("Here is an example.
    // Note the arguments:").
    introduces && (says(EXAMPLE_CUES_BEFORE_COLON, sentence) || says(EXAMPLE_CUES, earlier))
}

/// Whether a sentence starts with what the model is doing ("Reading the
/// usage notes:", "Checking the file format:") or ends with "now".
fn starts_doing(sentence: &str) -> bool {
    let words: Vec<&str> = sentence
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .collect();
    let first = words.iter().find(|w| {
        !matches!(
            **w,
            "ok" | "okay" | "so" | "now" | "anyway" | "first" | "next" | "then"
        )
    });
    first.is_some_and(|w| w.len() > 4 && w.ends_with("ing") && *w != "following")
        || words.last() == Some(&"now")
}

/// The last sentence of `text`, trimmed, and the one before it: sentences
/// end at a `.`, `!` or `?` followed by white space, and at a line break.
fn last_sentences(text: &str) -> (&str, &str) {
    let text = text.trim_end();
    let body = text.trim_end_matches(['.', '!', '?', ':']);
    let bytes = body.as_bytes();
    let mut starts = vec![0];
    for i in 0..bytes.len().saturating_sub(1) {
        let ends = matches!(bytes[i], b'.' | b'!' | b'?') && bytes[i + 1].is_ascii_whitespace();
        if ends || bytes[i] == b'\n' {
            starts.push(i + 1);
        }
    }
    let last = *starts.last().unwrap_or(&0);
    let before = starts
        .iter()
        .rev()
        .copied()
        .find(|&at| at < last && !text[at..last].trim().is_empty())
        .unwrap_or(last);
    // Not across a blank line: another paragraph says nothing of this one.
    let earlier = text[before..last].trim();
    let earlier = if text[before..last]
        .trim_end_matches([' ', '\t'])
        .ends_with("\n\n")
        || text[before..last].trim().is_empty()
        || text[before..last].contains("\n\n")
    {
        ""
    } else {
        earlier
    };
    (text[last..].trim(), earlier)
}
