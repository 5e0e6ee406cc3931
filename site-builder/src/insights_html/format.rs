//! Numbers and text as the page writes them: counts with thousands separators,
//! axis numbers, percentages, durations, plurals, cut text, and chart coordinates
//! to the hundredth.

/// `1234567` → `1,234,567`.
pub(super) fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Axis numbers: `950`, `1,500`, `12k`.
pub(super) fn compact(n: u64) -> String {
    if n >= 10_000 && n.is_multiple_of(1000) {
        format!("{}k", count(n / 1000))
    } else {
        count(n)
    }
}

/// A ratio as a percentage: `0%`, `3.4%`, `33%`.
pub(super) fn percent(ratio: f64) -> String {
    if !ratio.is_finite() || ratio <= 0.0 {
        return "0%".into();
    }
    let p = ratio * 100.0;
    let s = if p >= 10.0 { format!("{p:.0}") } else { format!("{p:.1}") };
    format!("{}%", s.strip_suffix(".0").unwrap_or(&s))
}

pub(super) fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// `42 ms`, `1.3 s`.
pub(super) fn millis(ms: f64) -> String {
    if ms >= 1000.0 {
        format!("{:.1} s", ms / 1000.0)
    } else {
        format!("{ms:.0} ms")
    }
}

/// Chart coordinates, to the hundredth.
pub(super) fn r2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

pub(super) fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", count(n), if n == 1 { one } else { many })
}

/// At most `max` characters, with `…` when cut.
pub(super) fn truncate(s: &str, max: usize) -> (String, bool) {
    if s.chars().count() <= max {
        return (s.to_string(), false);
    }
    let cut: String = s.chars().take(max.saturating_sub(1)).collect();
    (format!("{}…", cut.trim_end()), true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(count(1_234_567), "1,234,567");
        assert_eq!(count(999), "999");
        assert_eq!(
            (percent(0.0), percent(0.034), percent(0.2609), percent(1.0)),
            ("0%".into(), "3.4%".into(), "26%".into(), "100%".into())
        );
        assert_eq!((millis(12.4), millis(2400.0)), ("12 ms".into(), "2.4 s".into()));
        assert_eq!(truncate("abcdef", 4), ("abc…".into(), true));
    }
}
