//! How a result's numbers and messages are written, alike in the progress lines and the tables.

use serde_json::Value;

/// A result's derived figure and unit, when it has one.
pub(super) fn derived(result: &Value) -> Option<(f64, String)> {
    let d = &result["derived"];
    Some((d["median"].as_f64()?, d["unit"].as_str()?.to_string()))
}

/// About four significant digits.
pub(super) fn fmt_number(x: f64) -> String {
    let a = x.abs();
    if a >= 1000.0 {
        format!("{x:.0}")
    } else if a >= 100.0 {
        format!("{x:.1}")
    } else if a >= 10.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

/// A message's first line, cut to 200 characters (the JSON keeps it whole).
pub(super) fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    match line.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_string(),
    }
}
