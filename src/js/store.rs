//! The page's store of start-up choices (`startup::remembered`): one IndexedDB object store,
//! which pages and workers of an origin share. Storage is a convenience: if IndexedDB is
//! missing or refuses (a private window, an opaque origin), the runtime measures as if nothing
//! were kept, and saving fails silently.

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

const DATABASE: &str = "tandem";
const STORE: &str = "startup";

fn get(target: &JsValue, key: &str) -> Result<JsValue, JsValue> {
    js_sys::Reflect::get(target, &key.into())
}

fn call(target: &JsValue, method: &str, args: &[JsValue]) -> Result<JsValue, JsValue> {
    let f: js_sys::Function = get(target, method)?.dyn_into()?;
    f.apply(target, &args.iter().collect())
}

/// A promise for an `IDBRequest`'s result.
fn settled(request: JsValue) -> js_sys::Promise {
    js_sys::Promise::new(&mut |resolve, reject| {
        let done = request.clone();
        let on_success = Closure::once_into_js(move || {
            let _ = resolve.call1(
                &JsValue::UNDEFINED,
                &get(&done, "result").unwrap_or_default(),
            );
        });
        let failed = request.clone();
        let on_error = Closure::once_into_js(move || {
            let _ = reject.call1(
                &JsValue::UNDEFINED,
                &get(&failed, "error").unwrap_or_default(),
            );
        });
        let _ = js_sys::Reflect::set(&request, &"onsuccess".into(), &on_success);
        let _ = js_sys::Reflect::set(&request, &"onerror".into(), &on_error);
    })
}

/// The database, made with its store on first use.
async fn open() -> Result<JsValue, JsValue> {
    let factory = get(&js_sys::global(), "indexedDB")?;
    if factory.is_undefined() || factory.is_null() {
        return Err("no IndexedDB".into());
    }
    let request = call(&factory, "open", &[DATABASE.into(), 1.into()])?;
    let upgrade = Closure::once_into_js({
        let request = request.clone();
        move || {
            if let Ok(db) = get(&request, "result") {
                let _ = call(&db, "createObjectStore", &[STORE.into()]);
            }
        }
    });
    js_sys::Reflect::set(&request, &"onupgradeneeded".into(), &upgrade)?;
    JsFuture::from(settled(request)).await
}

/// Every (key, choices) pair kept; empty if there is no store.
pub async fn read_all() -> Vec<(String, String)> {
    read().await.unwrap_or_default()
}

async fn read() -> Result<Vec<(String, String)>, JsValue> {
    let db = open().await?;
    let transaction = call(&db, "transaction", &[STORE.into(), "readonly".into()])?;
    let store = call(&transaction, "objectStore", &[STORE.into()])?;
    // Both requests are made before either is awaited: a transaction commits once a task
    // passes with no request pending, and in the threaded build a future resumes in a later
    // task than the request's success.
    let keys = settled(call(&store, "getAllKeys", &[])?);
    let values = settled(call(&store, "getAll", &[])?);
    let (keys, values) = (JsFuture::from(keys).await?, JsFuture::from(values).await?);
    let _ = call(&db, "close", &[]);
    let (keys, values) = (js_sys::Array::from(&keys), js_sys::Array::from(&values));
    Ok(keys
        .iter()
        .zip(values.iter())
        .filter_map(|(k, v)| Some((k.as_string()?, v.as_string()?)))
        .collect())
}

/// Keeps `choices` under `key`, in the background.
pub fn write(key: &str, choices: &str) {
    let (key, choices) = (key.to_string(), choices.to_string());
    wasm_bindgen_futures::spawn_local(async move {
        let _ = put(&key, &choices).await;
    });
}

/// Keeps `choices` under `key` and resolves once stored.
pub async fn put(key: &str, choices: &str) -> Result<(), JsValue> {
    let db = open().await?;
    let transaction = call(&db, "transaction", &[STORE.into(), "readwrite".into()])?;
    let store = call(&transaction, "objectStore", &[STORE.into()])?;
    JsFuture::from(settled(call(&store, "put", &[choices.into(), key.into()])?)).await?;
    let _ = call(&db, "close", &[]);
    Ok(())
}
