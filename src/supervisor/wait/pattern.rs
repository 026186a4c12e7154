//! A `match` wait's regex, compiled with a size limit and off the async
//! workers. Compiling is linear in the compiled size, and a short pattern
//! can be huge (`\w{500}`: Unicode classes repeated): with the regex
//! crate's default limit (10 MiB) each such pattern took ~70 ms of a
//! server worker before its 400, and 160 of them pushed `/healthz` to
//! p50 732 ms. Here each compile runs on a blocking thread, a few at a
//! time, and stops at `REGEX_SIZE_LIMIT`.

use std::sync::Arc;

use regex::{Regex, RegexBuilder};
use tokio::sync::Semaphore;

/// Bytes a wait's regex may take once compiled, and its lazy DFA's cache.
/// Twice this per distinct pattern, times `http.max_waits`, bounds the
/// memory waits' regexes can hold.
pub const REGEX_SIZE_LIMIT: usize = 512 * 1024;

/// Regexes compiled at once; the others wait their turn without a thread.
const COMPILES_AT_ONCE: usize = 2;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PatternError {
    #[error("match is not a regex: {0}")]
    Syntax(String),
    #[error(
        "match compiles to more than {limit} bytes, the limit for a wait's regex \
         (a Unicode class such as \\w repeated many times is large: \
         try [A-Za-z0-9_] or (?-u:\\w))"
    )]
    TooBig { limit: usize },
}

/// Compiles `pattern` within the limits, on the calling thread.
pub fn compile_limited(pattern: &str) -> Result<Regex, PatternError> {
    RegexBuilder::new(pattern)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(limit) => PatternError::TooBig { limit },
            other => PatternError::Syntax(other.to_string()),
        })
}

/// Compiles wait patterns on blocking threads, `COMPILES_AT_ONCE` at a time.
pub struct Compiler {
    turns: Arc<Semaphore>,
}

impl Default for Compiler {
    fn default() -> Self {
        Compiler {
            turns: Arc::new(Semaphore::new(COMPILES_AT_ONCE)),
        }
    }
}

impl Compiler {
    pub async fn compile(&self, pattern: String) -> Result<Arc<Regex>, PatternError> {
        let _turn = self.turns.acquire().await.expect("never closed");
        tokio::task::spawn_blocking(move || compile_limited(&pattern).map(Arc::new))
            .await
            .expect("compiling a regex does not panic")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_compile_within_the_limit_or_say_why_not() {
        assert!(compile_limited(r"test result: \w+").is_ok());
        assert!(compile_limited(r"(?-u:\w){500}").is_ok());
        assert_eq!(
            compile_limited(r"\w{500}").unwrap_err(),
            PatternError::TooBig {
                limit: REGEX_SIZE_LIMIT
            }
        );
        assert!(
            compile_limited(r"\w{500}")
                .unwrap_err()
                .to_string()
                .contains("more than 524288 bytes")
        );
        assert!(matches!(
            compile_limited("(unclosed"),
            Err(PatternError::Syntax(_))
        ));
    }
}
