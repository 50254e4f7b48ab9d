//! Running commands: plainly, for their output, or as test runners whose results are counted.

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;

/// The repository root (xtask lives one level below it).
pub fn root() -> PathBuf {
    let xtask = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    xtask
        .parent()
        .expect("xtask is inside the repository")
        .to_path_buf()
}

/// `program arg…` as one line, for messages.
pub fn describe(cmd: &Command) -> String {
    let mut line = cmd.get_program().to_string_lossy().into_owned();
    for arg in cmd.get_args() {
        line.push(' ');
        line.push_str(&arg.to_string_lossy());
    }
    line
}

/// Runs `cmd` with inherited output; an error names the command and its exit status.
pub fn run(cmd: &mut Command) -> Result<(), String> {
    let status = cmd
        .status()
        .map_err(|e| format!("could not start `{}`: {e}", describe(cmd)))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{}` failed ({status})", describe(cmd)))
    }
}

/// The command's trimmed stdout if it ran and succeeded.
pub fn output(cmd: &mut Command) -> Option<String> {
    let out = cmd.stderr(Stdio::null()).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Passed and failed test counts over every runner of a run.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    pub passed: usize,
    pub failed: usize,
}

/// A check: what it checks, and the check, which says what it found.
pub type Check<'a> = (String, Box<dyn Fn() -> Result<String, String> + 'a>);

impl Tally {
    /// Runs every check, each counting as one test; after all ran, fails naming the ones that
    /// failed, under `group`.
    pub fn run_checks(&mut self, group: &str, checks: Vec<Check>) -> Result<(), String> {
        let mut failures = Vec::new();
        for (what, check) in checks {
            match check() {
                Ok(text) => {
                    println!("ok: {what}\n{text}");
                    self.passed += 1;
                }
                Err(err) => {
                    println!("FAILED: {what}: {err}");
                    self.failed += 1;
                    failures.push(what);
                }
            }
        }
        if failures.is_empty() {
            Ok(())
        } else {
            Err(format!("{group} failed: {}", failures.join("; ")))
        }
    }

    /// Adds the counts of a libtest or wasm-bindgen-test summary line
    /// (`test result: ok. 9 passed; 0 failed; …`); other lines add nothing.
    pub fn add_line(&mut self, line: &str) {
        let Some(rest) = line.trim().strip_prefix("test result: ") else {
            return;
        };
        for part in rest.split([';', '.']) {
            let mut words = part.split_whitespace();
            let (Some(n), Some(what)) = (words.next(), words.next()) else {
                continue;
            };
            let Ok(n) = n.parse::<usize>() else { continue };
            match what {
                "passed" => self.passed += n,
                "failed" => self.failed += n,
                _ => {}
            }
        }
    }
}

/// Runs a test runner, echoing its output as it comes and counting its results into `tally`.
pub fn run_tests(cmd: &mut Command, tally: &mut Tally) -> Result<(), String> {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not start `{}`: {e}", describe(cmd)))?;
    let shared = Arc::new(Mutex::new(*tally));
    let readers = [
        echo_and_count(child.stdout.take(), shared.clone(), false),
        echo_and_count(child.stderr.take(), shared.clone(), true),
    ];
    let status = child.wait().map_err(|e| e.to_string())?;
    for reader in readers {
        let _ = reader.join();
    }
    *tally = *shared
        .lock()
        .expect("no reader panics while holding the lock");
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{}` failed ({status})", describe(cmd)))
    }
}

fn echo_and_count(
    stream: Option<impl Read + Send + 'static>,
    tally: Arc<Mutex<Tally>>,
    to_stderr: bool,
) -> thread::JoinHandle<()> {
    thread::spawn(move || {
        let Some(stream) = stream else { return };
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            if to_stderr {
                eprintln!("{line}");
            } else {
                println!("{line}");
            }
            tally
                .lock()
                .expect("no reader panics while holding the lock")
                .add_line(&line);
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_libtest_and_wasm_bindgen_test_summaries() {
        let mut tally = Tally::default();
        tally.add_line("test result: ok. 22 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s");
        tally.add_line(
            "test result: FAILED. 8 passed; 1 failed; 0 ignored; 0 filtered out; finished in 0.32s",
        );
        tally.add_line("test foo ... ok");
        assert_eq!(
            tally,
            Tally {
                passed: 30,
                failed: 1
            }
        );
    }
}
