//! Durations as people type them (`90s`, `2h`, `1m30s`, `500ms`) and `none`
//! for no limit, checked when the command line is parsed.

use std::time::Duration;

/// How long `wait` waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitLimit {
    For(Duration),
    Forever,
}

impl WaitLimit {
    /// `none`, or a duration (see [`parse_duration`]).
    pub fn parse(text: &str) -> Result<WaitLimit, String> {
        if text.trim().eq_ignore_ascii_case("none") {
            return Ok(WaitLimit::Forever);
        }
        parse_duration(text).map(WaitLimit::For)
    }
}

/// One or more `<number><unit>` with units `ms`, `s`, `m`, `h`, `d`
/// (`1h30m`), or a bare number of seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let bad = || {
        format!(
            "`{text}` is not a duration: use e.g. 500ms, 90s, 2m, 1h30m, or `none` for no limit"
        )
    };
    let mut rest = text.trim();
    if rest.is_empty() {
        return Err(bad());
    }
    if rest.bytes().all(|b| b.is_ascii_digit()) {
        return rest.parse().map(Duration::from_secs).map_err(|_| bad());
    }
    let mut total = Duration::ZERO;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        if digits == 0 {
            return Err(bad());
        }
        let number: u64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let millis_per = match &rest[..unit_len] {
            "ms" => 1,
            "s" => 1000,
            "m" => 60_000,
            "h" => 3_600_000,
            "d" => 86_400_000,
            _ => return Err(bad()),
        };
        rest = &rest[unit_len..];
        let millis = number.checked_mul(millis_per).ok_or_else(bad)?;
        total = total
            .checked_add(Duration::from_millis(millis))
            .ok_or_else(bad)?;
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        let ms = Duration::from_millis;
        let cases = [
            ("30s", ms(30_000)),
            ("90s", ms(90_000)),
            ("500ms", ms(500)),
            ("2m", ms(120_000)),
            ("2h", ms(7_200_000)),
            ("1h30m", ms(5_400_000)),
            ("1m500ms", ms(60_500)),
            ("1d", ms(86_400_000)),
            ("7", ms(7000)),
            ("0", ms(0)),
            (" 5s ", ms(5000)),
        ];
        for (text, want) in cases {
            assert_eq!(parse_duration(text), Ok(want), "{text}");
        }
        for bad in [
            "",
            "s",
            "-1s",
            "1w",
            "1.5s",
            "ms",
            "1 s",
            "h1",
            "30sec",
            "99999999999999999999s",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn limits() {
        assert_eq!(WaitLimit::parse("none"), Ok(WaitLimit::Forever));
        assert_eq!(WaitLimit::parse("NONE"), Ok(WaitLimit::Forever));
        assert_eq!(
            WaitLimit::parse("2h"),
            Ok(WaitLimit::For(Duration::from_secs(7200)))
        );
        let message = WaitLimit::parse("soon").unwrap_err();
        assert!(
            message.contains("none") && message.contains("90s"),
            "{message}"
        );
    }
}
