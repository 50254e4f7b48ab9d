//! The demo's code panel and its figures, checked by the drive: the code shown for each mode is
//! the code that mode runs, runs as shown without leaving memory behind, and every figure of
//! the page's text that names the exps' count follows the form.

use serde_json::Value;

use crate::webdriver::Page;

const MODES: [&str; 4] = ["gpu", "split", "cpu", "compiled"];

/// For each mode: the shown code holds the source of the function the page calls (the page's
/// `example`), called with the devices and the count that mode runs with; run as shown, it
/// leaves active memory where it was.
pub fn check_shown_code(browser: &impl Page) -> Result<String, String> {
    let example = browser.eval("return window.tandemDemo.exampleSource;")?;
    let example = example.as_str().ok_or("the page gives no exampleSource")?;
    for mode in MODES {
        let shown = browser.eval(&format!(
            "const pick = document.getElementById('code-mode'); pick.value = '{mode}'; \
             pick.dispatchEvent(new Event('change')); \
             return document.getElementById('code').textContent;"
        ))?;
        let shown = shown.as_str().unwrap_or_default();
        let call = browser.eval(&format!("return window.tandemDemo.callOf('{mode}');"))?;
        let args = format!(
            "example(a, b, {{ d1: \"{}\", d2: \"{}\" }}, {})",
            call["d1"].as_str().unwrap_or_default(),
            call["d2"].as_str().unwrap_or_default(),
            call["iterations"]
        );
        if !shown.starts_with(example) || !shown.contains(&args) {
            return Err(format!(
                "the code shown for {mode} is not the code it runs ({args}):\n{shown}"
            ));
        }
        let ran = browser.eval("return window.tandemDemo.runShown();")?;
        if ran["before"] != ran["after"] || ran["before"].is_null() {
            return Err(format!(
                "the code shown for {mode}, run as shown, left memory behind: {ran}"
            ));
        }
    }
    Ok(
        "code: each mode shows the function it calls and its arguments; run as shown, each \
        leaves active memory where it was"
            .into(),
    )
}

/// Changing the exps' count changes every figure that names it: the intro's and the
/// software-GPU note's counts, and the shown code's; nothing still says 500 exps. The form is
/// left as it was.
pub fn check_figures_follow_exps(browser: &impl Page) -> Result<String, String> {
    let set = |count: u32| {
        browser.eval(&format!(
            "const i = document.getElementById('iterations'); i.value = '{count}'; \
             i.dispatchEvent(new Event('input', {{ bubbles: true }})); return null;"
        ))
    };
    set(37)?;
    let seen = browser.eval(
        "return { figures: [...document.querySelectorAll('[data-figure=iterations]')] \
                   .map((e) => e.textContent), \
                 code: document.getElementById('code').textContent, \
                 text: document.body.textContent };",
    )?;
    set(500)?;
    let figures: Vec<&str> = seen["figures"]
        .as_array()
        .map(|f| f.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let text = seen["text"].as_str().unwrap_or_default();
    let stale = ["500 exp", "500 tiny"].iter().find(|s| text.contains(**s));
    if figures.len() < 2 || figures.iter().any(|f| *f != "37") {
        return Err(format!("with 37 exps the page's figures say {figures:?}"));
    }
    if !seen["code"].as_str().is_some_and(|c| c.contains(", 37)")) {
        return Err(format!("with 37 exps the code shows:\n{}", seen["code"]));
    }
    if let Some(stale) = stale {
        return Err(format!("with 37 exps the page still says \"{stale}\""));
    }
    Ok(format!(
        "exps: set to 37, the {} figures that name the count and the code followed",
        figures.len()
    ))
}
