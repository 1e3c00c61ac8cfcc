//! Secrets a local server hands out (the page's token, MCP over HTTP's
//! bearer token): made from the kernel's randomness, and compared in time
//! that does not say where a guess went wrong.

use anyhow::{Context, Result};

/// Random bytes in a token: 256 bits, beyond any guessing.
pub const TOKEN_BYTES: usize = 32;

/// A fresh random token, as hex.
pub fn new_token() -> Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; TOKEN_BYTES];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut random| random.read_exact(&mut bytes))
        .context("cannot read /dev/urandom for a token")?;
    Ok(hex::encode(bytes))
}

/// Whether `given` is `token`, in time that does not depend on where they
/// differ.
pub fn same_token(given: &str, token: &str) -> bool {
    given.len() == token.len()
        && given
            .bytes()
            .zip(token.bytes())
            .fold(0u8, |differ, (a, b)| differ | (a ^ b))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_long_fresh_and_compared_whole() {
        let (a, b) = (new_token().unwrap(), new_token().unwrap());
        assert_eq!(a.len(), TOKEN_BYTES * 2);
        assert_ne!(a, b);
        assert!(same_token(&a, &a.clone()));
        assert!(!same_token(&a, &b));
        assert!(!same_token(&a[..10], &a));
    }
}
