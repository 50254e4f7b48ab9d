//! A static file server for the demo and the benchmarks: a folder of pages at `/` and the
//! package (`pkg/`) at `/pkg/`, where the pages' `../pkg/tandem.js` finds it.
//! Responses carry the cross-origin isolation headers, which give pages `SharedArrayBuffer` (and
//! so tandem's threaded build) and a fine-grained `performance.now()`. The same files under
//! `/plain/` come without them: a page opened there is not isolated and gets the
//! single-threaded build.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Component, Path, PathBuf};
use std::thread;

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
    let mut request_line = String::new();
    BufReader::new(&stream).read_line(&mut request_line)?;
    let mut parts = request_line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or("/"));
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
