//! Path patterns matched name by name: `*` and `?` within one name, `**`
//! for any number of folders. The secret files' deny list and the approval
//! rules' path conditions are both written this way.

/// Whether a pattern's names are compared with ASCII case folded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    /// `.ENV` matches `.env`: for patterns that refuse, since a file system
    /// that folds case opens the one for the other.
    Folded,
    /// Exactly: for patterns that allow.
    Exact,
}

/// Whether `pattern` (names, `**` among them) matches all of `parts`.
pub fn matches_components<S: AsRef<str>>(pattern: &[String], parts: &[S], case: Case) -> bool {
    match (pattern.first().map(String::as_str), parts.first()) {
        (None, None) => true,
        (Some("**"), _) => {
            matches_components(&pattern[1..], parts, case)
                || (!parts.is_empty() && matches_components(pattern, &parts[1..], case))
        }
        (Some(p), Some(part)) => {
            matches_name(p, part.as_ref(), case)
                && matches_components(&pattern[1..], &parts[1..], case)
        }
        _ => false,
    }
}

/// `*` and `?` within one name. Byte by byte and allocation-free: it runs
/// on every file a tool opens.
pub fn matches_name(pattern: &str, name: &str, case: Case) -> bool {
    let (pattern, name) = (pattern.as_bytes(), name.as_bytes());
    let same = |p: u8, n: u8| match case {
        Case::Folded => p.eq_ignore_ascii_case(&n),
        Case::Exact => p == n,
    };
    // A literal first or last byte of the pattern can only be the name's
    // own: most names fail here, before the walk below (a file is judged
    // against every secret pattern, for each name along its path).
    let literal = |p: u8| p != b'*' && p != b'?';
    let differ = |p: Option<&u8>, n: Option<&u8>| match (p, n) {
        (Some(&p), Some(&n)) => literal(p) && !same(p, n),
        _ => false,
    };
    if differ(pattern.first(), name.first()) || differ(pattern.last(), name.last()) {
        return false;
    }
    let (mut p, mut n) = (0, 0);
    let (mut star, mut resume) = (None, 0);
    while n < name.len() {
        // A `*` is a star even against a `*` in the name.
        if p < pattern.len() && pattern[p] == b'*' {
            star = Some(p);
            p += 1;
            resume = n;
        } else if p < pattern.len() && (pattern[p] == b'?' || same(pattern[p], name[n])) {
            p += 1;
            n += 1;
        } else if let Some(s) = star {
            p = s + 1;
            resume += 1;
            n = resume;
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|c| *c == b'*')
}

/// A pattern split into its names (`.` and empty names dropped).
pub fn names(pattern: &str) -> Vec<String> {
    pattern
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .map(String::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, path: &str, case: Case) -> bool {
        let parts: Vec<&str> = path.split('/').collect();
        matches_components(&names(pattern), &parts, case)
    }

    #[test]
    fn stars_stay_within_a_name_and_double_stars_cross_folders() {
        assert!(matches("notes/*.md", "notes/a.md", Case::Exact));
        assert!(!matches("notes/*.md", "notes/sub/a.md", Case::Exact));
        assert!(matches("notes/**", "notes/sub/a.md", Case::Exact));
        assert!(matches("notes/**/*.md", "notes/a.md", Case::Exact));
        assert!(!matches("notes/**", "notesx/a.md", Case::Exact));
        assert!(matches("a?c", "abc", Case::Exact));
        assert!(!matches("NOTES/**", "notes/a", Case::Exact));
        assert!(matches("NOTES/**", "notes/a", Case::Folded));
    }

    /// `*` and `?` by the definition, byte by byte, with no shortcut.
    fn by_definition(pattern: &[u8], name: &[u8], case: Case) -> bool {
        match (pattern.first(), name.first()) {
            (None, _) => name.is_empty(),
            (Some(b'*'), _) => {
                by_definition(&pattern[1..], name, case)
                    || (!name.is_empty() && by_definition(pattern, &name[1..], case))
            }
            (Some(_), None) => false,
            (Some(&p), Some(&n)) => {
                let same = match case {
                    Case::Folded => p.eq_ignore_ascii_case(&n),
                    Case::Exact => p == n,
                };
                (p == b'?' || same) && by_definition(&pattern[1..], &name[1..], case)
            }
        }
    }

    #[test]
    fn a_name_matches_exactly_when_the_definition_says() {
        let patterns = [
            "",
            "*",
            "**",
            "?",
            "??",
            "*.pem",
            "id_rsa*",
            ".env",
            ".env.*",
            "a*b",
            "*a*",
            "?b*",
            "*.?",
            "x",
            "A*",
            "*Z",
            "a?",
            "*.keystore",
        ];
        let names = [
            "",
            "a",
            "b",
            "ab",
            "ba",
            "aab",
            "key.pem",
            "KEY.PEM",
            "id_rsa",
            "id_rsa.pub",
            ".env",
            ".env.local",
            ".ENV",
            "a.b",
            "z",
            "Z",
            "abz",
            "x",
            "pem",
            ".pem",
            "store.keystore",
            // Names holding the pattern characters themselves.
            "*a.pem",
            "id_rsa*x",
            ".env.*x",
            "*",
            "?",
            "a*b",
            "*.?",
        ];
        for pattern in patterns {
            for name in names {
                for case in [Case::Folded, Case::Exact] {
                    assert_eq!(
                        matches_name(pattern, name, case),
                        by_definition(pattern.as_bytes(), name.as_bytes(), case),
                        "{pattern:?} against {name:?}, {case:?}"
                    );
                }
            }
        }
    }
}
