//! A static file server for the demo and the benchmarks: a folder of pages at `/` and the
//! package (`pkg/`) at `/pkg/`, where the pages' `../pkg/tandem.js` finds it.
//! Responses carry the cross-origin isolation headers, which give pages `SharedArrayBuffer` (and
//! so tandem's threaded build) and a fine-grained `performance.now()`. The same files under
//! `/plain/` come without them: a page opened there is not isolated and gets the
//! single-threaded build. A page may also post how it ended to `/__report/TOKEN`
//! (`tests/pages/report.js` does, when opened as `PAGE#report=TOKEN`): Firefox runs the test
//! pages with no automation attached, and this is how they are heard (`firefox::run_unattended`).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;
use std::thread;

/// Reports posted to `/__report/TOKEN`, by token, until taken.
static REPORTS: Mutex<BTreeMap<String, String>> = Mutex::new(BTreeMap::new());

/// The largest report a page may post.
const MOST_REPORT_BYTES: usize = 16 << 20;

/// Takes the report a page posted under `token`, if one has come.
pub fn take_report(token: &str) -> Option<String> {
    let mut reports = REPORTS.lock().unwrap_or_else(|e| e.into_inner());
    reports.remove(token)
}

/// Serves on `address` (port 0 picks a free port) from a background thread; returns the bound
/// address.
pub fn start(address: &str, pages: PathBuf, package: PathBuf) -> Result<SocketAddr, String> {
    let listener =
        TcpListener::bind(address).map_err(|e| format!("cannot listen on {address}: {e}"))?;
    let bound = listener.local_addr().map_err(|e| e.to_string())?;
    thread::spawn(move || {
        for stream in listener.incoming().map_while(Result::ok) {
            let (pages, package) = (pages.clone(), package.clone());
            thread::spawn(move || {
                // A browser that drops a connection midway is no reason to stop serving.
                let _ = respond(stream, &pages, &package);
            });
        }
    });
    Ok(bound)
}

fn respond(mut stream: TcpStream, pages: &Path, package: &Path) -> std::io::Result<()> {
    let mut reader = BufReader::new(&stream);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let mut parts = request_line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or("/"));
    if let (Some(token), "POST") = (target.strip_prefix("/__report/"), method) {
        let body = read_body(&mut reader)?;
        REPORTS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(token.to_string(), body);
        return stream.write_all(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n");
    }
    let (target, isolated) = without_isolation(target);
    let file = (method == "GET")
        .then(|| resolve(pages, package, target))
        .flatten();
    let (status, body, kind) = match file.and_then(|f| std::fs::read(&f).ok().map(|b| (f, b))) {
        Some((path, body)) => ("200 OK", body, content_type(&path)),
        None => ("404 Not Found", b"not found\n".to_vec(), "text/plain"),
    };
    let isolation = if isolated {
        "Cross-Origin-Opener-Policy: same-origin\r\nCross-Origin-Embedder-Policy: require-corp\r\n"
    } else {
        ""
    };
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n{isolation}\
         Cache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    stream.write_all(&body)
}

/// A request's body after its headers, as long as its `Content-Length` says (a report's text).
fn read_body(reader: &mut impl BufRead) -> std::io::Result<String> {
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line.trim().is_empty() {
            break;
        }
        match line.split_once(':') {
            Some((name, value)) if name.trim().eq_ignore_ascii_case("content-length") => {
                length = value.trim().parse().unwrap_or(0);
            }
            _ => {}
        }
    }
    let mut body = vec![0; length.min(MOST_REPORT_BYTES)];
    reader.read_exact(&mut body)?;
    Ok(String::from_utf8_lossy(&body).into_owned())
}

/// A path under `/plain/` is the same path served without the isolation headers.
fn without_isolation(target: &str) -> (&str, bool) {
    match target.strip_prefix("/plain") {
        Some(rest) if rest.starts_with('/') => (rest, false),
        _ => (target, true),
    }
}

/// The file a URL path names, or `None` for paths that leave the served folders.
fn resolve(pages: &Path, package: &Path, target: &str) -> Option<PathBuf> {
    let path = target.split(['?', '#']).next().unwrap_or("/");
    let (base, rest) = match path.strip_prefix("/pkg/") {
        Some(rest) => (package, rest),
        None => (pages, path.trim_start_matches('/')),
    };
    let rest = if rest.is_empty() { "index.html" } else { rest };
    let relative = Path::new(rest);
    relative
        .components()
        .all(|c| matches!(c, Component::Normal(_)))
        .then(|| base.join(relative))
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "wasm" => "application/wasm",
        "css" => "text/css; charset=utf-8",
        "json" => "application/json",
        "svg" => "image/svg+xml",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn maps_pages_and_package_files() {
        let (root, pkg) = (Path::new("/repo/www"), Path::new("/repo/pkg"));
        assert_eq!(
            resolve(root, pkg, "/"),
            Some(PathBuf::from("/repo/www/index.html"))
        );
        assert_eq!(
            resolve(root, pkg, "/main.js?v=1"),
            Some(PathBuf::from("/repo/www/main.js"))
        );
        assert_eq!(
            resolve(root, pkg, "/pkg/tandem_bg.wasm"),
            Some(PathBuf::from("/repo/pkg/tandem_bg.wasm"))
        );
    }

    #[test]
    fn plain_paths_are_the_same_files_without_isolation() {
        assert_eq!(
            without_isolation("/plain/pkg/index.js"),
            ("/pkg/index.js", false)
        );
        assert_eq!(without_isolation("/plain/"), ("/", false));
        assert_eq!(without_isolation("/plainly.html"), ("/plainly.html", true));
        assert_eq!(without_isolation("/pkg/index.js"), ("/pkg/index.js", true));
    }

    #[test]
    fn a_posted_report_is_kept_until_taken() {
        let address = start("127.0.0.1:0", PathBuf::from("."), PathBuf::from(".")).unwrap();
        let body = r#"{"state":"done","text":"ok"}"#;
        let mut stream = TcpStream::connect(address).unwrap();
        write!(
            stream,
            "POST /__report/t-1 HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut reply = String::new();
        stream.read_to_string(&mut reply).unwrap();
        assert!(reply.starts_with("HTTP/1.1 204"), "{reply}");
        assert_eq!(take_report("t-1").as_deref(), Some(body));
        assert_eq!(take_report("t-1"), None);
    }

    #[test]
    fn refuses_to_leave_the_served_folders() {
        let (root, pkg) = (Path::new("/repo/www"), Path::new("/repo/pkg"));
        assert_eq!(resolve(root, pkg, "/../Cargo.toml"), None);
        assert_eq!(resolve(root, pkg, "/pkg/../../etc/passwd"), None);
    }

    #[test]
    fn wasm_is_served_as_wasm() {
        assert_eq!(
            content_type(Path::new("a/tandem_bg.wasm")),
            "application/wasm"
        );
        assert_eq!(
            content_type(Path::new("main.js")),
            "text/javascript; charset=utf-8"
        );
    }
}
