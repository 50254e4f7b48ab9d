//! A static file server for the demo: `www/` at `/` and the package (`pkg/`) at `/pkg/`.
//! Responses carry the cross-origin isolation headers, which give pages `SharedArrayBuffer` and
//! a fine-grained `performance.now()`.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Component, Path, PathBuf};
use std::thread;

/// Serves on `address` (port 0 picks a free port) from a background thread; returns the bound
/// address.
pub fn start(address: &str, root: PathBuf, out_dir: String) -> Result<SocketAddr, String> {
    let listener =
        TcpListener::bind(address).map_err(|e| format!("cannot listen on {address}: {e}"))?;
    let bound = listener.local_addr().map_err(|e| e.to_string())?;
    thread::spawn(move || {
        for stream in listener.incoming().map_while(Result::ok) {
            let (root, out_dir) = (root.clone(), out_dir.clone());
            thread::spawn(move || {
                // A browser that drops a connection midway is no reason to stop serving.
                let _ = respond(stream, &root, &out_dir);
            });
        }
    });
    Ok(bound)
}

fn respond(mut stream: TcpStream, root: &Path, out_dir: &str) -> std::io::Result<()> {
    let mut request_line = String::new();
    BufReader::new(&stream).read_line(&mut request_line)?;
    let mut parts = request_line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or("/"));
    let file = (method == "GET")
        .then(|| resolve(root, out_dir, target))
        .flatten();
    let (status, body, kind) = match file.and_then(|f| std::fs::read(&f).ok().map(|b| (f, b))) {
        Some((path, body)) => ("200 OK", body, content_type(&path)),
        None => ("404 Not Found", b"not found\n".to_vec(), "text/plain"),
    };
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n\
         Cross-Origin-Opener-Policy: same-origin\r\nCross-Origin-Embedder-Policy: require-corp\r\n\
         Cache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    stream.write_all(&body)
}

/// The file a URL path names, or `None` for paths that leave the served folders.
fn resolve(root: &Path, out_dir: &str, target: &str) -> Option<PathBuf> {
    let path = target.split(['?', '#']).next().unwrap_or("/");
    let (base, rest) = match path.strip_prefix(&format!("/{out_dir}/")) {
        Some(rest) => (root.join(out_dir), rest),
        None => (root.join("www"), path.trim_start_matches('/')),
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
        let root = Path::new("/repo");
        assert_eq!(
            resolve(root, "pkg", "/"),
            Some(PathBuf::from("/repo/www/index.html"))
        );
        assert_eq!(
            resolve(root, "pkg", "/main.js?v=1"),
            Some(PathBuf::from("/repo/www/main.js"))
        );
        assert_eq!(
            resolve(root, "pkg", "/pkg/tandem_bg.wasm"),
            Some(PathBuf::from("/repo/pkg/tandem_bg.wasm"))
        );
    }

    #[test]
    fn refuses_to_leave_the_served_folders() {
        assert_eq!(resolve(Path::new("/repo"), "pkg", "/../Cargo.toml"), None);
        assert_eq!(
            resolve(Path::new("/repo"), "pkg", "/pkg/../../etc/passwd"),
            None
        );
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
